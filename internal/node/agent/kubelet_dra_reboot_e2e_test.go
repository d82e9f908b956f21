// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// resetMIG empties the mock's MIG state file as a reboot empties the
// GPUs' MIG layouts, keeping its count of devices made, so that devices
// made after it get new UUIDs, as on a GPU.
func resetMIG(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, g := range st["gpus"] {
		g["instances"] = json.RawMessage("[]")
	}
	if b, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRealKubeletDRAReboot: a reboot of a node with a prepared MIG
// claim, on the real kubelet: pod r0 runs on a 1g.10gb made for it (A).
// The agent stops, the boot ID file changes, the GPU's MIG layout is
// emptied (the mock's state file), then the agent and the kubelet start
// again and the fake runtime loses its sandboxes and containers. The
// kubelet prepares a pod's claims when it makes its sandbox, and after a
// restart its restored claim infos are not prepared (k8s.io/kubernetes
// v1.37.2 pkg/kubelet/cm/dra/claiminfo.go newClaimInfoFromState), so it
// calls the plugin's prepare for r0 again; the agent, finding its checkpoint of another boot, prepares r0's claim
// anew: a new MIG device B at the same placement, its CDI spec written.
// Deleting r0 destroys B; no CDI spec is left.
func TestRealKubeletDRAReboot(t *testing.T) {
	dir := t.TempDir()
	state, boot := filepath.Join(dir, "mig-state.json"), filepath.Join(dir, "boot_id")
	if err := os.WriteFile(boot, []byte("boot-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDRAEnv(t, draMIGNode, "--mock-mig-state", state, "--dra-boot-id-file", boot)
	d.createTemplate("mig-1g", "mig.nvidia.com", nil, sel1g)
	d.createClaimPod("r0", "mig-1g")
	d.waitRunning("r0")
	dev, a := d.migOf("r0")

	d.a.stop(t)
	if err := os.WriteFile(boot, []byte("boot-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resetMIG(t, state)
	d.startAgent()
	if err := d.k.Restart(d.ctx); err != nil {
		d.fail("kubelet restart: %v", err)
	}
	// The runtime's sandboxes and containers did not outlive the reboot:
	// the kubelet makes r0's sandbox again, preparing its claims first
	// (k8s.io/kubernetes v1.37.2 pkg/kubelet/kuberuntime/
	// kuberuntime_manager.go SyncPod), as after a reboot.
	rs := d.k.Runtime.RuntimeService
	rs.Lock()
	clear(rs.Sandboxes)
	clear(rs.Containers)
	rs.Unlock()
	var b string
	d.poll("r0's claim prepared again", func() error {
		if !d.logLine(`"Preparing again a claim prepared before the node's reboot"`) {
			return fmt.Errorf("not in the agent's log")
		}
		live := liveMIG(t, state)
		if len(live) != 1 || live[0] == a {
			return fmt.Errorf("live MIG devices %v, want one new", live)
		}
		// The CDI spec is written after the device is made: wait for it
		// too.
		if s := d.cdiSpecs(); !slices.Contains(s, "gpuplane_nvidia.com_gpu_"+live[0]+".json") {
			return fmt.Errorf("no CDI spec of the device made again %s: %v", live[0], s)
		}
		b = live[0]
		return nil
	})
	if n := d.logCount(`"Destroyed a MIG device"`); n != 0 {
		t.Errorf("%d MIG devices destroyed across the reboot, want none", n)
	}
	d.deletePod("r0")
	d.waitDestroyed(dev, b)
	if s := d.cdiSpecs(); len(s) != 0 {
		t.Errorf("CDI specs left: %v", s)
	}
}
