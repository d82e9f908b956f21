// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// driverMIGMinors is the table the NVIDIA driver writes (NVIDIA MIG user
// guide, "Device Nodes and Capabilities", the listing of
// /proc/driver/nvidia-caps/mig-minors): config 1, monitor 2, then for
// each of 32 GPUs and each of its 15 GPU instances the instance's access
// capability followed by those of its compute instances 0..7, minors
// counting up from 3 (the guide's last line is gpu31/gi14/ci7/access
// 4322).
func driverMIGMinors() string {
	var b strings.Builder
	b.WriteString("config 1\nmonitor 2\n")
	minor := 3
	for gpu := 0; gpu < 32; gpu++ {
		for gi := 0; gi < 15; gi++ {
			fmt.Fprintf(&b, "gpu%d/gi%d/access %d\n", gpu, gi, minor)
			minor++
			for ci := 0; ci < 8; ci++ {
				fmt.Fprintf(&b, "gpu%d/gi%d/ci%d/access %d\n", gpu, gi, ci, minor)
				minor++
			}
		}
	}
	return b.String()
}

func TestParseMIGMinors(t *testing.T) {
	m, err := parseMIGMinors(strings.NewReader(driverMIGMinors()), "mig-minors")
	if err != nil {
		t.Fatal(err)
	}
	if m["gpu31/gi14/ci7/access"] != 4322 || m["monitor"] != 2 {
		t.Errorf("gpu31/gi14/ci7/access %d, monitor %d; want the guide's 4322 and 2", m["gpu31/gi14/ci7/access"], m["monitor"])
	}
	// By hand: GPU 0's GI 1 comes after GI 0's 9 lines (3..11): its
	// access is 12, its CI 0 13. GPU 1 starts after 15*9 = 135 lines of
	// GPU 0, at 138; its GI 2 at 138 + 2*9 = 156, CI 3 at 156 + 1 + 3.
	for _, c := range []struct {
		gpu, gi, ci int
		want        string
	}{
		{0, 1, 0, "/dev/nvidia-caps/nvidia-cap12 /dev/nvidia-caps/nvidia-cap13"},
		{1, 2, 3, "/dev/nvidia-caps/nvidia-cap156 /dev/nvidia-caps/nvidia-cap160"},
	} {
		got, err := m.CapNodes(c.gpu, c.gi, c.ci)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("gpu%d gi%d ci%d: %v %v, want %s", c.gpu, c.gi, c.ci, got, err, c.want)
		}
	}
	if _, err := m.CapNodes(32, 0, 0); err == nil || !strings.Contains(err.Error(), "gpu32/gi0/access is not in the MIG minors table") {
		t.Errorf("a GPU past the table: %v", err)
	}
}

func TestParseMIGMinorsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"config 1\ngpu0/gi0/access\n", "mig-minors:2: want \"<capability> <minor>\", got \"gpu0/gi0/access\""},
		{"config 1\n\ngpu0/gi0/access 3 4\n", "mig-minors:3: want"},
		{"gpu0/gi0/access -3\n", "mig-minors:1: minor of gpu0/gi0/access: \"-3\" is not a number"},
		{"gpu0/gi0/access 4294967296\n", "mig-minors:1: minor of gpu0/gi0/access: \"4294967296\""},
	} {
		if _, err := parseMIGMinors(strings.NewReader(c.in), "mig-minors"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	// An empty table parses, and names no capability.
	if m, err := parseMIGMinors(strings.NewReader(""), "mig-minors"); err != nil || len(m) != 0 {
		t.Errorf("an empty table: %v %v", m, err)
	} else if _, err := m.CapNodes(0, 1, 0); err == nil || !strings.Contains(err.Error(), "gpu0/gi1/access is not in the MIG minors table") {
		t.Errorf("a capability of an empty table: %v", err)
	}
	if _, err := readMIGMinors(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "MIG minors table") {
		t.Errorf("a missing table: %v", err)
	}
}

// FuzzParseMIGMinors: any input parses or fails with an error naming its
// line; never a panic, and a parsed table answers capNodes.
func FuzzParseMIGMinors(f *testing.F) {
	f.Add("config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\n")
	f.Add("gpu0/gi0/access x\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := parseMIGMinors(strings.NewReader(in), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") {
				t.Fatalf("error without the input's name: %v", err)
			}
			return
		}
		m.CapNodes(0, 0, 0)
	})
}

// specNodes returns the device nodes of the one device in the CDI spec
// of uuid in dir.
func specNodes(t *testing.T, dir, uuid string) []string {
	t.Helper()
	data, err := os.ReadFile(cdiSpecPath(dir, uuid))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Devices []struct {
			ContainerEdits struct {
				DeviceNodes []struct{ Path string } `json:"deviceNodes"`
			} `json:"containerEdits"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(data, &s); err != nil || len(s.Devices) != 1 {
		t.Fatalf("CDI spec %s: %v", data, err)
	}
	var out []string
	for _, n := range s.Devices[0].ContainerEdits.DeviceNodes {
		out = append(out, n.Path)
	}
	return out
}

// A MIG device's CDI spec carries its parent's node and the capability
// nodes of its GPU and compute instance, as nvidia-ctk's spec of the same
// device does; a whole GPU's has none. The minors come from the driver's
// table; the GPU instance from the backend.
func TestPrepareMIGCaps(t *testing.T) {
	b, n := mockNode(t, strings.Replace(twoA100, "    migEnabled: true\n", "    migEnabled: true\n    mig: [3g.40gb]\n", 1))
	k := newKubelet(t)
	k.dirs.MIGMinorsPath = filepath.Join(t.TempDir(), "mig-minors")
	if err := os.WriteFile(k.dirs.MIGMinorsPath, []byte(driverMIGMinors()), 0o644); err != nil {
		t.Fatal(err)
	}
	k.start(b)
	k.slices(2)
	c := k.claim("c", "gpu-0-mig-3g40gb-9-4", "gpu-0-mig-3g40gb-9-0", "gpu-1")
	if _, errStr := k.prepare(c); errStr != "" {
		t.Fatal(errStr)
	}
	live, err := b.MIGInstances(context.Background(), n.GPUs[0].UUID)
	if err != nil || len(live) != 2 {
		t.Fatalf("live MIG devices %v %v, want the static one and the created one", live, err)
	}
	ctl := "/dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools"
	for _, in := range live {
		// GPU 0's GI g: access 3 + 9g, its CI 0 the next.
		want := fmt.Sprintf("/dev/nvidia0 /dev/nvidia-caps/nvidia-cap%d /dev/nvidia-caps/nvidia-cap%d %s", 3+9*in.GPUInstanceID, 4+9*in.GPUInstanceID, ctl)
		if got := strings.Join(specNodes(t, k.dirs.CDIDir, in.UUID), " "); got != want {
			t.Errorf("MIG device at %d (GI %d): nodes %s, want %s", in.Placement.Start, in.GPUInstanceID, got, want)
		}
	}
	if got := strings.Join(specNodes(t, k.dirs.CDIDir, n.GPUs[1].UUID), " "); got != "/dev/nvidia1 "+ctl {
		t.Errorf("whole GPU: nodes %s", got)
	}
	k.unprepare(c)
}

// Without the driver's table a MIG device cannot be given to a
// container: its prepare fails, no spec is written, and the prepare's
// rollback destroys the device it created; unprepare has nothing left to
// do. A whole GPU needs no table.
func TestPrepareMIGCapsMissing(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.dirs.MIGMinorsPath = filepath.Join(t.TempDir(), "no-such-table")
	k.start(b)
	k.slices(2)
	c := k.claim("c", "gpu-0-mig-1g10gb-19-2")
	if _, errStr := k.prepare(c); !strings.Contains(errStr, "device gpu-0-mig-1g10gb-19-2: CDI spec: MIG minors table") {
		t.Fatalf("prepare without the table: %q", errStr)
	}
	if got := liveMIG(t, b, n.GPUs[0].UUID); len(got) != 0 {
		t.Errorf("live MIG devices after the failed prepare: %v", got)
	}
	if entries, err := os.ReadDir(k.dirs.CDIDir); len(entries) != 0 {
		t.Errorf("a CDI spec was written: %v %v", entries, err)
	}
	k.unprepare(c)
	if _, errStr := k.prepare(k.claim("w", "gpu-1")); errStr != "" {
		t.Errorf("a whole GPU without the table: %q", errStr)
	}
}
