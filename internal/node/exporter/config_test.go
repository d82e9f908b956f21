// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func names(fs []Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestParseFields(t *testing.T) {
	// dcgm-exporter's own layout: comments with trailing commas, padding,
	// a space before the comma, help with commas, an empty help.
	in := `# Format,,
# DCGM FIELD, Prometheus metric type, help message

# Clocks,,
DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).
  DCGM_FI_DEV_GPU_UTIL ,     gauge, Busy, as a percentage (in %).
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter,
DCGM_FI_DEV_FB_FREE,gauge
`
	got, warnings, err := ParseFields("counters.csv", []byte(in))
	if err != nil || warnings != nil {
		t.Fatal(warnings, err)
	}
	want := []string{"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_FB_FREE"}
	if !slices.Equal(names(got), want) {
		t.Fatalf("names %v, want %v", names(got), want)
	}
	helps := []string{"SM clock frequency (in MHz).", "Busy, as a percentage (in %).", "Total energy consumption since the driver was loaded (in mJ).", "Frame buffer memory free (in MiB)."}
	for i, f := range got {
		if f.Help != helps[i] {
			t.Errorf("%s help %q, want %q", f.Name, f.Help, helps[i])
		}
	}
	if got[2].Type != Counter || got[0].Type != Gauge {
		t.Errorf("types %s %s, want counter gauge", got[2].Type, got[0].Type)
	}
}

func TestParseFieldsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"DCGM_FI_DEV_GPU_UTIL\n", `m.csv:1: "DCGM_FI_DEV_GPU_UTIL": want "NAME, TYPE[, HELP]"`},
		{"# x\nDCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU\n", `m.csv: no field gpuplane serves is listed`},
		{"DCGM_FI_DEV_GPU_UTIL, histogram\n", `m.csv:1: DCGM_FI_DEV_GPU_UTIL: type "histogram"; want gauge, counter or label`},
		{"DCGM_FI_DRIVER_VERSION, gauge\n", `m.csv:1: DCGM_FI_DRIVER_VERSION: type "gauge", but gpuplane serves it as a label`},
		{"DCGM_FI_DEV_GPU_UTIL, counter\n", `m.csv:1: DCGM_FI_DEV_GPU_UTIL: type "counter", but gpuplane serves it as a gauge`},
		{"DCGM_FI_DEV_GPU_UTIL, gauge\n\nDCGM_FI_DEV_GPU_UTIL, gauge\n", `m.csv:3: DCGM_FI_DEV_GPU_UTIL is listed twice (first on line 1)`},
		{"# nothing\n\n", `m.csv: no field gpuplane serves is listed`},
		{"DCGM_FI_DEV_GPU_UTIL, gauge, \xff\n", `m.csv:1: DCGM_FI_DEV_GPU_UTIL: help is not valid UTF-8`},
		{strings.Repeat("x", 2<<20), `m.csv:1: bufio.Scanner: token too long`},
	} {
		_, _, err := ParseFields("m.csv", []byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseFields(%.40q) error %v, want prefix %q", c.in, err, c.want)
		}
	}
}

func TestParseFieldsSkipsFieldsNotServed(t *testing.T) {
	// A field gpuplane does not serve is skipped with one warning each,
	// the others are served.
	got, warnings, err := ParseFields("m.csv", []byte("DCGM_FI_DEV_GPU_UTIL, gauge\nDCGM_FI_DEV_RETIRED_SBE, counter, Pages\ngpuplane_device_health, gauge\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(got), []string{"DCGM_FI_DEV_GPU_UTIL"}) {
		t.Errorf("fields %v, want DCGM_FI_DEV_GPU_UTIL", names(got))
	}
	want := []string{
		"m.csv:2: DCGM_FI_DEV_RETIRED_SBE is not a field gpuplane serves; skipped (see docs/metrics.md)",
		"m.csv:3: gpuplane_device_health is not a field gpuplane serves; skipped (see docs/metrics.md)",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}

// TestDCGMExporterDefaultCounters reads NVIDIA's unmodified
// default-counters.csv (testdata/dcgm-exporter-default-counters.csv, from
// https://github.com/NVIDIA/dcgm-exporter/blob/e61056b94eb98ab6598bd3a7c2a299a482b16a42/etc/default-counters.csv,
// the last commit to change it up to d5e5f510a1b6b393f39a43293ccd9dc985defc79 of
// May 2026): every field gpuplane serves is taken, in the file's order
// and with its help, and the only one it does not serve,
// DCGM_FI_DEV_VGPU_LICENSE_STATUS (line 69), is skipped with a warning.
func TestDCGMExporterDefaultCounters(t *testing.T) {
	got, warnings, err := LoadFields("testdata/dcgm-exporter-default-counters.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
		"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
		"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_RESERVED",
		"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
		"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DRIVER_VERSION",
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
		"DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES",
	}
	if !slices.Equal(names(got), want) {
		t.Errorf("fields\n%v\nwant\n%v", names(got), want)
	}
	wantWarn := []string{"testdata/dcgm-exporter-default-counters.csv:69: DCGM_FI_DEV_VGPU_LICENSE_STATUS is not a field gpuplane serves; skipped (see docs/metrics.md)"}
	if !slices.Equal(warnings, wantWarn) {
		t.Errorf("warnings %q, want %q", warnings, wantWarn)
	}
	if got[5].Help != "Total energy consumption since boot (in mJ)." || got[19].Type != Label {
		t.Errorf("energy help %q, driver version type %s", got[5].Help, got[19].Type)
	}
}

func TestLoadFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.csv")
	if err := os.WriteFile(path, []byte("DCGM_FI_DEV_POWER_USAGE, gauge\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadFields(path)
	if err != nil || len(got) != 1 || got[0].Name != "DCGM_FI_DEV_POWER_USAGE" || got[0].Help != "Power draw (in W)." {
		t.Fatalf("LoadFields = %+v, %v", got, err)
	}
	if _, _, err := LoadFields(path + ".missing"); err == nil || !strings.Contains(err.Error(), "metrics.csv.missing") {
		t.Fatalf("missing file: error %v does not name the file", err)
	}
}

func TestDefaultMetricsFileParses(t *testing.T) {
	// deploy/metrics.csv lists every field: it parses, to all of them.
	got, warnings, err := LoadFields("../../../deploy/metrics.csv")
	if err != nil || warnings != nil {
		t.Fatal(warnings, err)
	}
	if !slices.Equal(names(got), names(AllFields())) {
		t.Fatalf("deploy/metrics.csv lists %v, want every field %v", names(got), names(AllFields()))
	}
}

// FuzzParseFields checks that no input panics, and that an accepted input
// gives known, distinct fields that format back to an equal input.
func FuzzParseFields(f *testing.F) {
	f.Add([]byte("DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).\n"))
	f.Add([]byte("# c,,\n\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter,\nDCGM_FI_DEV_FB_FREE,gauge\n"))
	f.Add([]byte("DCGM_FI_DEV_GPU_UTIL, counter\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, warnings, err := ParseFields("fuzz.csv", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, w := range warnings {
			if !strings.HasPrefix(w, "fuzz.csv:") {
				t.Fatalf("warning does not name the file: %s", w)
			}
		}
		seen := map[string]bool{}
		var b strings.Builder
		for _, fl := range got {
			known, ok := lookupField(fl.Name)
			if !ok || seen[fl.Name] || known.Type != fl.Type {
				t.Fatalf("accepted %q (%s): known=%v duplicate=%v", fl.Name, fl.Type, ok, seen[fl.Name])
			}
			seen[fl.Name] = true
			b.WriteString(fl.Name + ", " + string(fl.Type) + ", " + fl.Help + "\n")
		}
		again, warnings, err := ParseFields("fuzz.csv", []byte(b.String()))
		if err != nil || warnings != nil {
			t.Fatalf("formatted fields do not parse: %v\n%s", err, b.String())
		}
		for i := range got {
			if again[i].Name != got[i].Name || again[i].Type != got[i].Type || again[i].Help != got[i].Help {
				t.Fatalf("round trip changed field %d: %+v -> %+v", i, got[i], again[i])
			}
		}
	})
}
