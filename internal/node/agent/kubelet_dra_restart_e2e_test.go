// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// liveMIG are the MIG device UUIDs of the mock's state file
// (--mock-mig-state), the GPU's live MIG devices, sorted.
func liveMIG(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		GPUs map[string]struct {
			Instances []struct{ UUID string }
		}
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range st.GPUs {
		for _, in := range g.Instances {
			out = append(out, in.UUID)
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// TestRealKubeletDRARestart: the agent and the kubelet restart while
// claims are prepared, on the MIG node, the mock keeping its MIG devices
// in a state file as a GPU keeps them.
//   - Two 1g.10gb pods run: two MIG devices, A and B, live.
//   - The agent restarts (SIGTERM, started again): both pods keep running,
//     no container is created again, the new agent creates no MIG device;
//     the placements stay published (the checkpoint says the claims own
//     A and B). Deleting the first pod makes the new agent destroy A
//     (live: B only); a third pod gets a new device C (live: B, C).
//   - The kubelet restarts: both pods keep running, no container is
//     created again, no MIG device is created; deleting them destroys B
//     and C: nothing live, no CDI spec left.
func TestRealKubeletDRARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "mig-state.json")
	d := startDRAEnv(t, draMIGNode, "--mock-mig-state", state)
	d.createTemplate("mig-1g", "mig.nvidia.com", nil, sel1g)
	for _, p := range []string{"r0", "r1"} {
		d.createClaimPod(p, "mig-1g")
		d.waitRunning(p)
	}
	devA, a := d.migOf("r0")
	_, b := d.migOf("r1")
	if got := liveMIG(t, state); !slices.Equal(got, sorted(a, b)) {
		t.Fatalf("live MIG devices %v, want %v", got, sorted(a, b))
	}

	t0 := time.Now()
	d.restartAgent()
	t.Logf("agent restarted in %v", time.Since(t0).Round(time.Millisecond))
	d.poll("the restarted agent serving", func() error {
		if !d.logLine("Serving GPUs through DRA", "devices=25") {
			return os.ErrNotExist
		}
		return nil
	})
	for _, p := range []string{"r0", "r1"} {
		if err := d.running(p); err != nil {
			t.Errorf("after the agent restart: %v", err)
		}
	}
	d.deletePod("r0")
	t0 = time.Now()
	d.waitDestroyed(devA, a)
	t.Logf("r0's MIG device destroyed %v after its pod was deleted", time.Since(t0).Round(time.Millisecond))
	if got := liveMIG(t, state); !slices.Equal(got, []string{b}) {
		t.Errorf("live MIG devices after r0 went %v, want [%s]", got, b)
	}
	d.createClaimPod("r2", "mig-1g")
	d.waitRunning("r2")
	_, c := d.migOf("r2")
	if c == a || c == b {
		t.Errorf("r2 got %s, a device of before", c)
	}
	if n := d.logCount("Created a MIG device"); n != 1 {
		t.Errorf("the restarted agent created %d MIG devices, want 1 (r2's)", n)
	}

	t0 = time.Now()
	if err := d.k.Restart(d.ctx); err != nil {
		d.fail("kubelet restart: %v", err)
	}
	t.Logf("kubelet restarted in %v", time.Since(t0).Round(time.Millisecond))
	for _, p := range []string{"r1", "r2"} {
		d.waitRunning(p)
		d.record(p) // one CreateContainer record: not created again
	}
	if n := d.logCount("Created a MIG device"); n != 1 {
		t.Errorf("after the kubelet restart %d MIG devices created, want still 1", n)
	}
	if got := liveMIG(t, state); !slices.Equal(got, sorted(b, c)) {
		t.Errorf("live MIG devices after the kubelet restart %v, want %v", got, sorted(b, c))
	}
	t0 = time.Now()
	d.deletePod("r1")
	d.deletePod("r2")
	t.Logf("r1 and r2 deleted in %v", time.Since(t0).Round(time.Millisecond))
	d.poll("no MIG device live", func() error {
		if got := liveMIG(t, state); len(got) != 0 {
			return os.ErrExist
		}
		return nil
	})
	t.Logf("no MIG device live %v after", time.Since(t0).Round(time.Millisecond))
	if s := d.cdiSpecs(); len(s) != 0 {
		t.Errorf("CDI specs left: %v", s)
	}
}
