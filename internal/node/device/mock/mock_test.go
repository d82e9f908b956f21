// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/devicetest"
)

func TestBuiltins(t *testing.T) {
	want := []string{"dgx-a100-80gb-mig", "dgx-h100", "dgx1-v100", "l40s-pcie-4"}
	if got := Builtins(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Builtins() = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name       string
		gpus, migs int
		model      string
		link01     string
		link05     string
	}{
		{"dgx-h100", 8, 0, "H100-80GB", "NV18", "NV18"},
		{"dgx1-v100", 8, 0, "V100M16", "NV1", "SYS"},
		{"l40s-pcie-4", 4, 0, "L40S", "PIX", ""},
		// GPUs 0-3: 7 devices each, GPUs 4-5: 4 each.
		{"dgx-a100-80gb-mig", 8, 4*7 + 2*4, "A100-80GB", "NV12", "NV12"},
	} {
		b, err := Open(tc.name, Options{})
		if err != nil {
			t.Fatalf("Open(%s): %v", tc.name, err)
		}
		n, err := b.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		migs := 0
		for i, g := range n.GPUs {
			migs += len(g.MIG)
			if g.Index != i || g.Model != tc.model || !strings.HasPrefix(g.UUID, "GPU-") {
				t.Errorf("%s GPU %d: index %d model %q uuid %q", tc.name, i, g.Index, g.Model, g.UUID)
			}
		}
		if len(n.GPUs) != tc.gpus || migs != tc.migs {
			t.Errorf("%s: %d GPUs, %d MIG devices; want %d, %d", tc.name, len(n.GPUs), migs, tc.gpus, tc.migs)
		}
		if got := n.Links[0][1].String(); got != tc.link01 {
			t.Errorf("%s: link 0-1 = %s, want %s", tc.name, got, tc.link01)
		}
		if tc.link05 != "" {
			if got := n.Links[0][5].String(); got != tc.link05 {
				t.Errorf("%s: link 0-5 = %s, want %s", tc.name, got, tc.link05)
			}
		}
	}
}

func TestV100Matrix(t *testing.T) {
	b, err := Open("dgx1-v100", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(context.Background())
	// Each V100 has six NVLinks; the cube mesh uses all of them.
	for i := range n.GPUs {
		sum := 0
		for j := range n.GPUs {
			if i != j {
				sum += n.Links[i][j].NVLinks
			}
		}
		if sum != 6 {
			t.Errorf("GPU %d has %d NVLinks, want 6", i, sum)
		}
	}
	for _, c := range []struct{ i, j, links int }{{0, 3, 2}, {0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1}, {0, 5, 0}, {6, 7, 2}} {
		if got := n.Links[c.i][c.j].NVLinks; got != c.links {
			t.Errorf("NVLinks %d-%d = %d, want %d", c.i, c.j, got, c.links)
		}
	}
	if n.GPUs[4].NUMANode != 1 || n.GPUs[3].NUMANode != 0 {
		t.Errorf("NUMA nodes: GPU3 %d, GPU4 %d; want 0, 1", n.GPUs[3].NUMANode, n.GPUs[4].NUMANode)
	}
}

func TestA100MIGDevices(t *testing.T) {
	b, _ := Open("dgx-a100-80gb-mig", Options{})
	n, _ := b.Discover(context.Background())
	g := n.GPUs[4]
	if !g.MIGEnabled || len(g.MIG) != 4 {
		t.Fatalf("GPU 4: MIG %v with %d devices, want on with 4", g.MIGEnabled, len(g.MIG))
	}
	m := g.MIG[0]
	if m.Profile != "3g.40gb" || m.MemoryMiB != 40192 || m.Multiprocessors != 42 || !strings.HasPrefix(m.UUID, "MIG-") {
		t.Errorf("GPU 4 MIG 0 = %+v", m)
	}
	if n.GPUs[6].MIGEnabled || len(n.GPUs[6].MIG) != 0 {
		t.Errorf("GPU 6 should be a whole GPU")
	}
	if gg, idx, ok := n.GPUByUUID(m.UUID); !ok || gg.Index != 4 || idx != 0 {
		t.Errorf("GPUByUUID(MIG) = %v %d %v", gg, idx, ok)
	}
}

// TestMIGNames: MIG devices are named by NVIDIA's rule from memory
// (go-nvlib pkg/nvlib/device/mig_profile.go; worked out by hand in
// internal/node/device TestMIGProfileName), whatever the catalog's profile is
// called: an H100 NVL (95830 MiB; the catalog's H100-NVL) 1g instance of
// 11008 MiB, its own profile 1g.12gb, is 1g.12gb; seven 1-slice compute instances of
// A100-40GB's 7g.40gb are seven 1c.7g.40gb, each with 98/7 = 14 SMs; the
// media-extension profile keeps "+me".
func TestMIGNames(t *testing.T) {
	p, err := ParseProfile("p.yaml", []byte(`
gpus:
- productName: NVIDIA H100 NVL
  memoryMiB: 95830
  mig: [{profile: 1g.12gb, memoryMiB: 11008}]
- productName: NVIDIA A100-SXM4-40GB
  mig: [{profile: 7g.40gb, computeInstances: [1, 1, 1, 1, 1, 1, 1]}]
- productName: NVIDIA A100-SXM4-80GB
  mig: [1g.10gb+me, 3g.40gb]
`))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := p.Node()
	var got []string
	for _, g := range n.GPUs {
		for _, m := range g.MIG {
			got = append(got, fmt.Sprintf("%s/%d/%d/%d/%d", m.Profile, m.GPUInstanceID, m.ComputeInstanceID, m.MemoryMiB, m.Multiprocessors))
		}
	}
	want := "1g.12gb/1/0/11008/16 " +
		"1c.7g.40gb/1/0/40192/14 1c.7g.40gb/1/1/40192/14 1c.7g.40gb/1/2/40192/14 1c.7g.40gb/1/3/40192/14 1c.7g.40gb/1/4/40192/14 1c.7g.40gb/1/5/40192/14 1c.7g.40gb/1/6/40192/14 " +
		"1g.10gb+me/1/0/9856/14 3g.40gb/2/0/40192/42"
	if strings.Join(got, " ") != want {
		t.Errorf("MIG devices\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	seen := map[string]bool{}
	for _, m := range n.GPUs[1].MIG {
		if seen[m.UUID] {
			t.Errorf("duplicate MIG UUID %s", m.UUID)
		}
		seen[m.UUID] = true
	}
}

func TestParseProfileErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"gpus: []", "gpus: at least one GPU"},
		{"gpus: [{productName: L4, colour: red}]", `gpus[0].colour: unknown field`},
		{"gpus: [{count: -1, productName: L4}]", "gpus[0].count"},
		{"gpus: [{productName: ''}]", "gpus[0].productName: required"},
		{"gpus: [{productName: L4, numaNode: 5000}]", "gpus[0].numaNode"},
		{"gpus: [{productName: L4, mig: [1g.10gb]}]", "gpus[0].mig: product \"L4\" does not support MIG"},
		{"gpus: [{productName: Foo GPU}]", "gpus[0].memoryMiB: required, since product \"Foo GPU\" is not in the GPU catalog"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [1g.5gb]}]", `gpus[0].mig: model A100-80GB has no MIG profile "1g.5gb"`},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [4g.40gb, 4g.40gb]}]", "at most 1 instances"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [4g.40gb, 3g.40gb, 1g.10gb]}]", "8 compute slices"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [3g.40gb, 3g.40gb, 1g.10gb]}]", "no valid placement"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [{profile: 7g.80gb, colour: red}]}]", `unknown field "colour"`},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [{profile: 3g.40gb, computeInstances: [2, 2]}]}]", "gpus[0].mig[0].computeInstances: [2 2] need 4 compute slices; 3g.40gb has 3"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [{profile: 7g.80gb, computeInstances: [5]}]}]", "gpus[0].mig[0].computeInstances[0]: 5 compute slices"},
		{"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [{profile: 1g.10gb, memoryMiB: 90000}]}]", "gpus[0].mig[0].memoryMiB: 90000 is out of range"},
		{"gpus: [{productName: L4, telemetry: {utilizationPct: [101]}}]", "gpus[0].telemetry.utilizationPct[0]"},
		{"gpus: [{count: 2, productName: L4, uuid: GPU-1}]", "gpus[0].uuid: only allowed with count 1"},
		{"gpus: [{productName: L4, uuid: GPU-1}, {productName: L4, uuid: GPU-1}]", `gpus[1].uuid: "GPU-1" is also used by gpus[0]`},
		{"gpus: [{count: 2, productName: L4}]\nlinks: {matrix: [X NV1, NV2 X]}", "links.matrix[1][0]: NV2 differs"},
		{"gpus: [{count: 2, productName: L4}]\nlinks: {matrix: [X NV1]}", "links.matrix: 1 rows for 2 GPUs"},
		{"gpus: [{count: 2, productName: L4}]\nlinks: {matrix: [X FOO, FOO X]}", `links.matrix[0][1]: link "FOO"`},
		{"gpus: [{count: 2, productName: L4}]\nlinks: {matrix: [NV1 NV1, NV1 X]}", "links.matrix[0][0]: diagonal"},
		{"gpus: [{count: 2, productName: L4}]\nlinks: {all: NV0}", "links.all: link \"NV0\""},
		{"cudaDriverVersion: twelve\ngpus: [{productName: L4}]", "cudaDriverVersion"},
	} {
		_, err := ParseProfile("p.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "p.yaml:") {
			t.Errorf("ParseProfile(%q) = %v, want error with %q", tc.yaml, err, tc.want)
		}
	}
}

func TestFaultsFileDirectory(t *testing.T) {
	_, err := Open("dgx-h100", Options{FaultsFile: "/nonexistent/faults.yaml"})
	if err == nil || !strings.Contains(err.Error(), "directory /nonexistent does not exist") {
		t.Errorf("Open with a faults file in a missing directory: %v", err)
	}
}

func TestLoadProfileUnknown(t *testing.T) {
	_, err := LoadProfile("dgx-z900")
	if err == nil || !strings.Contains(err.Error(), "neither a built-in profile") {
		t.Fatalf("LoadProfile(dgx-z900) = %v", err)
	}
}

func TestSample(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b, err := Open("dgx-h100", Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	// GPU 0's curve is [0 35 70 100 70 35] at 420 W.
	wantUtil := []float64{0, 35, 70, 100, 70, 35, 0}
	for step, want := range wantUtil {
		clock = clock.Add(2 * time.Second)
		ss, err := b.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 8 {
			t.Fatalf("%d samples, want 8", len(ss))
		}
		s := ss[0]
		if *s.GPUUtil != want {
			t.Errorf("step %d: util %v, want %v", step, *s.GPUUtil, want)
		}
		// 420 W for 2(step+1) s = 840000(step+1) mJ.
		if e := *s.TotalEnergyMJ; e != 840000*float64(step+1) {
			t.Errorf("step %d: energy %v mJ, want %v", step, e, 840000*float64(step+1))
		}
		if *s.FBUsedMiB != 40960 || *s.FBFreeMiB != 81559-40960 || *s.GPUTemp != 45 || *s.SMClockMHz != 1980 {
			t.Errorf("step %d: fixed values %v %v %v %v", step, *s.FBUsedMiB, *s.FBFreeMiB, *s.GPUTemp, *s.SMClockMHz)
		}
		if s.ProfSMActive == nil || *s.ProfSMActive != want/100 {
			t.Errorf("step %d: SM active %v", step, s.ProfSMActive)
		}
	}
	// V100 (Volta) has no GPM: profiling fields stay nil.
	v, _ := Open("dgx1-v100", Options{})
	ss, _ := v.Sample(context.Background())
	if ss[0].ProfSMActive != nil || ss[0].GPUUtil == nil {
		t.Errorf("V100 sample: prof %v util %v", ss[0].ProfSMActive, ss[0].GPUUtil)
	}
	// MIG devices are sampled too: 8 GPUs + 36 MIG devices.
	a, _ := Open("dgx-a100-80gb-mig", Options{})
	ss, _ = a.Sample(context.Background())
	if len(ss) != 44 {
		t.Errorf("A100 MIG: %d samples, want 44", len(ss))
	}
}

func TestWatchHealth(t *testing.T) {
	dir := t.TempDir()
	faults := filepath.Join(dir, "faults.yaml")
	b, err := Open("dgx1-v100", Options{FaultsFile: faults})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(context.Background())
	g2, g5 := n.GPUs[2].UUID, n.GPUs[5].UUID
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan device.HealthEvent, 16)
	done := make(chan error, 1)
	go func() { done <- b.WatchHealth(ctx, ch) }()

	write := func(s string) {
		tmp := filepath.Join(dir, "tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, faults); err != nil {
			t.Fatal(err)
		}
	}
	next := func() device.HealthEvent {
		select {
		case ev := <-ch:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no health event")
		}
		return device.HealthEvent{}
	}
	// The watcher may not be set up before the first write; rewriting the
	// same content produces no duplicate events, so retry until one arrives.
	content := "faults:\n- uuid: " + g2 + "\n  xid: 79\n"
	write(content)
	var ev device.HealthEvent
	for ev.UUID == "" {
		select {
		case ev = <-ch:
		case <-time.After(200 * time.Millisecond):
			write(content)
		}
	}
	if ev.UUID != g2 || ev.Kind != device.HealthXID || ev.XID != 79 {
		t.Fatalf("event %+v, want XID 79 on GPU 2", ev)
	}
	ss, _ := b.Sample(context.Background())
	if *ss[2].LastXID != 79 {
		t.Errorf("LastXID = %v, want 79", *ss[2].LastXID)
	}
	write("faults:\n- uuid: " + g5 + "\n  lost: true\n")
	evs := []device.HealthEvent{next(), next()}
	if evs[0].UUID > evs[1].UUID {
		evs[0], evs[1] = evs[1], evs[0]
	}
	want := map[string]device.HealthKind{g2: device.HealthRecovered, g5: device.HealthLost}
	for _, ev := range evs {
		if want[ev.UUID] != ev.Kind {
			t.Errorf("event %+v, want kind %v", ev, want[ev.UUID])
		}
	}
	// A bad file is ignored; removing the file recovers everything.
	write("faults: [{uuid: x, colour: red}]")
	if err := os.Remove(faults); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.UUID != g5 || ev.Kind != device.HealthRecovered {
		t.Errorf("event %+v, want GPU 5 recovered", ev)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("WatchHealth returned %v", err)
	}
}

func TestParseFaultsErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"faults: [{xid: 79}]", "faults[0].uuid: required"},
		{"faults: [{uuid: a, xid: 79, lost: true}]", "faults[0]: give exactly one"},
		{"faults: [{uuid: a}]", "faults[0]: give exactly one"},
		{"faults: [{uuid: a, xid: 1}, {uuid: a, xid: 2}]", `faults[1].uuid: "a" is listed twice`},
		{"faults: [{uuid: a, xid: 1, when: now}]", `f.yaml:1: faults[0].when: unknown field`},
	} {
		_, err := ParseFaults("f.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFaults(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func FuzzParseProfile(f *testing.F) {
	for _, name := range Builtins() {
		data, _ := builtinFS.ReadFile("profiles/" + name + ".yaml")
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		n, err := p.Node()
		if err != nil {
			t.Fatalf("parsed profile fails Node(): %v", err)
		}
		if len(n.Links) != len(n.GPUs) {
			t.Fatalf("%d link rows for %d GPUs", len(n.Links), len(n.GPUs))
		}
	})
}

func FuzzParseFaults(f *testing.F) {
	f.Add([]byte("faults:\n- uuid: GPU-1\n  xid: 79\n- uuid: GPU-2\n  lost: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseFaults("fuzz.yaml", data)
		if err != nil {
			return
		}
		for uuid, x := range m {
			if uuid == "" || (x.XID == 0) == !x.Lost {
				t.Fatalf("invalid fault accepted: %+v", x)
			}
		}
	})
}

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	faults := filepath.Join(dir, "faults.yaml")
	b, err := Open("dgx-a100-80gb-mig", Options{FaultsFile: faults})
	if err != nil {
		t.Fatal(err)
	}
	devicetest.Run(t, devicetest.Harness{
		Backend: b, GPUs: 8, MIGDevices: 36,
		InjectXID: func(t *testing.T, uuid string, xid uint64) {
			tmp := filepath.Join(dir, "tmp")
			if err := os.WriteFile(tmp, []byte(fmt.Sprintf("faults: [{uuid: %s, xid: %d}]", uuid, xid)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, faults); err != nil {
				t.Fatal(err)
			}
		},
	})
}

func TestParseProfileDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"gpus: [{productName: L4, colour: red}]", `p.yaml:1: gpus[0].colour: unknown field`},
		{"gpus: [{productName: L4, count: many}]", "p.yaml: cannot unmarshal string into Go struct field GPUSpec.gpus.count of type int"},
		{"gpus: [{productName: L4}]\n  bad indent: [", "p.yaml:2: did not find expected key"},
	} {
		_, err := ParseProfile("p.yaml", []byte(tc.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseProfile(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestSampleMIGAsNVML: a MIG device never reports DCGM_FI_DEV_GPU_UTIL (NVML
// has no utilisation for MIG devices and dcgm-exporter serves none); it
// reports its share of the frame buffer, its own last XID and, on a GPU with
// GPM (Hopper), the per-instance profiling ratios; on an A100 (Ampere, no
// GPM) none.
func TestSampleMIGAsNVML(t *testing.T) {
	p, err := ParseProfile("h100-mig.yaml", []byte(`name: h100-mig
gpus:
  - productName: NVIDIA H100 80GB HBM3
    mig: [3g.40gb]
    telemetry: {utilizationPct: [40], memoryUsedMiB: 8192, memoryReservedMiB: 512, encUtilPct: 3, decUtilPct: 4,
      pcieTxBytesPerSec: 1000, pcieRxBytesPerSec: 2000, nvlinkBandwidthPerSec: 5}
  - productName: NVIDIA A100-SXM4-80GB
    mig: [3g.40gb]
    telemetry: {utilizationPct: [40]}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := b.Sample(context.Background())
	if err != nil || len(ss) != 4 {
		t.Fatalf("%d samples, %v; want 4", len(ss), err)
	}
	h, hm, am := ss[0], ss[1], ss[3]
	// NVML has no utilisation rates for a GPU in MIG mode.
	if h.GPUUtil != nil || h.MemCopyUtil != nil || h.ProfGrEngineActive != nil || ss[2].GPUUtil != nil {
		t.Errorf("MIG-enabled GPUs have utilisation %v, %v, profiling %v", h.GPUUtil, ss[2].GPUUtil, h.ProfGrEngineActive)
	}
	for i, s := range []device.Sample{hm, am} {
		if s.GPUUtil != nil || s.MemCopyUtil != nil || s.PowerW != nil || s.EncUtil != nil {
			t.Errorf("MIG device %d: util %v, mem copy %v, power %v, encoder %v; want none", i, s.GPUUtil, s.MemCopyUtil, s.PowerW, s.EncUtil)
		}
		if s.FBUsedMiB == nil || s.LastXID == nil {
			t.Errorf("MIG device %d: no frame buffer or XID", i)
		}
	}
	// H100 MIG: GPM per instance, 40 % active, tensor and DRAM half.
	if hm.ProfGrEngineActive == nil || *hm.ProfGrEngineActive != 0.4 || *hm.ProfSMActive != 0.4 || *hm.ProfTensorActive != 0.2 || *hm.ProfDRAMActive != 0.2 {
		t.Errorf("H100 MIG profiling: %v %v %v %v", hm.ProfGrEngineActive, hm.ProfSMActive, hm.ProfTensorActive, hm.ProfDRAMActive)
	}
	if am.ProfGrEngineActive != nil {
		t.Errorf("A100 MIG has profiling ratio %v; Ampere has no GPM", *am.ProfGrEngineActive)
	}
	// The H100's 81920 MiB: 512 reserved, 8192 used, 73216 free.
	if *h.FBReservedMiB != 512 || *h.FBUsedMiB != 8192 || *h.FBFreeMiB != 73216 {
		t.Errorf("H100 frame buffer reserved %v used %v free %v; want 512 8192 73216", *h.FBReservedMiB, *h.FBUsedMiB, *h.FBFreeMiB)
	}
	if *h.EncUtil != 3 || *h.DecUtil != 4 || *h.PCIeTxBytesPerSec != 1000 || *h.PCIeRxBytesPerSec != 2000 {
		t.Errorf("H100 encoder %v decoder %v PCIe TX %v RX %v", *h.EncUtil, *h.DecUtil, *h.PCIeTxBytesPerSec, *h.PCIeRxBytesPerSec)
	}
	// No NVLink between the two (default links: NODE): no NVLink counter.
	if h.NVLinkBandwidthTotal != nil {
		t.Errorf("NVLink counter %v on a GPU without NVLink", *h.NVLinkBandwidthTotal)
	}
	// dgx-h100: NV18 everywhere, the counter is served.
	d, _ := Open("dgx-h100", Options{})
	if ss, _ := d.Sample(context.Background()); ss[0].NVLinkBandwidthTotal == nil {
		t.Error("dgx-h100 GPU 0 has no NVLink counter")
	}
}

// TestLostFault: a device the faults file marks lost gives no telemetry
// (a lost GPU takes its MIG devices) and, with every fault present at
// discovery, is in Node.Faults.
func TestLostFault(t *testing.T) {
	dir := t.TempDir()
	faults := filepath.Join(dir, "faults.yaml")
	b, err := Open("dgx-a100-80gb-mig", Options{FaultsFile: faults})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil || len(n.Faults) != 0 {
		t.Fatalf("no faults file: faults %v, %v", n.Faults, err)
	}
	// GPU 0 (seven MIG devices) lost, one MIG device of GPU 4 lost, GPU 7
	// with XID 79.
	lost0, lostMIG, xid7 := n.GPUs[0].UUID, n.GPUs[4].MIG[1].UUID, n.GPUs[7].UUID
	content := fmt.Sprintf("faults:\n- {uuid: %s, lost: true}\n- {uuid: %s, lost: true}\n- {uuid: %s, xid: 79}\n- {uuid: GPU-not-here, lost: true}\n", lost0, lostMIG, xid7)
	if err := os.WriteFile(faults, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err = b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{lost0: "lost", lostMIG: "lost", xid7: "xid 79"}
	if len(n.Faults) != len(want) {
		t.Errorf("faults %v, want %v", n.Faults, want)
	}
	for _, ev := range n.Faults {
		got := "lost"
		if ev.Kind == device.HealthXID {
			got = fmt.Sprintf("xid %d", ev.XID)
		} else if ev.Kind != device.HealthLost {
			got = fmt.Sprint(ev.Kind)
		}
		if want[ev.UUID] != got {
			t.Errorf("fault of %s: %s, want %q", ev.UUID, got, want[ev.UUID])
		}
	}
	ss, err := b.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 8 GPUs + 36 MIG devices, less GPU 0 with its 7 and one of GPU 4.
	if len(ss) != 44-8-1 {
		t.Errorf("%d samples, want 35", len(ss))
	}
	for _, s := range ss {
		if g, _, _ := n.GPUByUUID(s.UUID); g.Index == 0 || s.UUID == lostMIG {
			t.Errorf("sample of lost device %s (GPU %d)", s.UUID, g.Index)
		}
	}
}

// TestFrameBufferAsNvidiaSmi: the mock serves the frame buffer as DCGM and
// nvidia-smi report it, used excluding reserved, with the H200 figures of
// issue 35 (driver 580.159.04): total 143771 MiB, 615.125 MiB reserved,
// nvidia-smi's memory.used 0 idle and 1011 MiB loaded.
func TestFrameBufferAsNvidiaSmi(t *testing.T) {
	for _, used := range []float64{0, 1011} {
		p, err := ParseProfile("h200.yaml", []byte(fmt.Sprintf(`name: h200
gpus:
  - productName: NVIDIA H200
    memoryMiB: 143771
    telemetry: {memoryUsedMiB: %v, memoryReservedMiB: 615.125}
`, used)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ss, err := b.Sample(context.Background())
		if err != nil || len(ss) != 1 {
			t.Fatalf("%d samples, %v; want 1", len(ss), err)
		}
		s := ss[0]
		if *s.FBUsedMiB != used || *s.FBReservedMiB != 615.125 || *s.FBFreeMiB != 143771-615.125-used {
			t.Errorf("used %v: FB used %v reserved %v free %v; want %v 615.125 %v", used, *s.FBUsedMiB, *s.FBReservedMiB, *s.FBFreeMiB, used, 143771-615.125-used)
		}
	}
}

// TestMultiprocessorsDefault: a mock GPU without multiprocessors takes
// the SM count internal/gpu cites for its product (gpu.Multiprocessors:
// H200 132, L40S 142, B200 148 as CUDA reported in pytorch/ao pull request
// 4002); a profile's own count wins; a board without a cited count stays 0.
func TestMultiprocessorsDefault(t *testing.T) {
	p, err := ParseProfile("sm.yaml", []byte(`name: sm
gpus:
  - productName: NVIDIA H200
  - productName: NVIDIA L40S
  - productName: NVIDIA H200
    multiprocessors: 100
  - productName: NVIDIA B200
  - productName: NVIDIA GB200
    memoryMiB: 190464
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, g := range n.GPUs {
		got = append(got, g.Multiprocessors)
	}
	if fmt.Sprint(got) != "[132 142 100 148 0]" {
		t.Errorf("SMs %v, want [132 142 100 148 0]", got)
	}
}
