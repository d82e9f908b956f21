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
	got, err := ParseFields("counters.csv", []byte(in))
	if err != nil {
		t.Fatal(err)
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
		{"# x\nDCGM_FI_DEV_ENC_UTIL, gauge, Encoder\n", `m.csv:2: "DCGM_FI_DEV_ENC_UTIL" is not a field gpuplane serves`},
		{"DCGM_FI_DEV_GPU_UTIL, counter\n", `m.csv:1: DCGM_FI_DEV_GPU_UTIL: type "counter", but gpuplane serves it as a gauge`},
		{"DCGM_FI_DEV_GPU_UTIL, gauge\n\nDCGM_FI_DEV_GPU_UTIL, gauge\n", `m.csv:3: DCGM_FI_DEV_GPU_UTIL is listed twice (first on line 1)`},
		{"# nothing\n\n", `m.csv: no metrics listed`},
		{"gpuplane_device_health, gauge\n", `m.csv:1: "gpuplane_device_health" is not a field gpuplane serves`},
		{"DCGM_FI_DEV_GPU_UTIL, gauge, \xff\n", `m.csv:1: DCGM_FI_DEV_GPU_UTIL: help is not valid UTF-8`},
		{strings.Repeat("x", 2<<20), `m.csv:1: bufio.Scanner: token too long`},
	} {
		_, err := ParseFields("m.csv", []byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseFields(%.40q) error %v, want prefix %q", c.in, err, c.want)
		}
	}
}

func TestLoadFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.csv")
	if err := os.WriteFile(path, []byte("DCGM_FI_DEV_POWER_USAGE, gauge\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFields(path)
	if err != nil || len(got) != 1 || got[0].Name != "DCGM_FI_DEV_POWER_USAGE" || got[0].Help != "Power draw (in W)." {
		t.Fatalf("LoadFields = %+v, %v", got, err)
	}
	if _, err := LoadFields(path + ".missing"); err == nil || !strings.Contains(err.Error(), "metrics.csv.missing") {
		t.Fatalf("missing file: error %v does not name the file", err)
	}
}

func TestDefaultMetricsFileParses(t *testing.T) {
	// deploy/metrics.csv lists every field: it parses, to all of them.
	got, err := LoadFields("../../deploy/metrics.csv")
	if err != nil {
		t.Fatal(err)
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
		got, err := ParseFields("fuzz.csv", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
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
		again, err := ParseFields("fuzz.csv", []byte(b.String()))
		if err != nil {
			t.Fatalf("formatted fields do not parse: %v\n%s", err, b.String())
		}
		for i := range got {
			if again[i].Name != got[i].Name || again[i].Type != got[i].Type || again[i].Help != got[i].Help {
				t.Fatalf("round trip changed field %d: %+v -> %+v", i, got[i], again[i])
			}
		}
	})
}
