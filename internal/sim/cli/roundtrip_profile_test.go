// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"sort"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// rtProfilePolicy is the policy and tie-break of the round trip with
// gpuplane's profile, the same in gpuplane-scheduler and in the simulator.
const rtProfilePolicy, rtProfileTie = "bestfit", "first"

// TestRoundTripGPUplaneProfile is TestRoundTripRealControlPlane with the
// pods placed by gpuplane-scheduler's own profile (GPUPlacement scoring
// alone, bestfit, tie-break first), so that the second wave's nodes are
// compared exactly: each second-wave pod is created gated, the cluster
// snapshotted, the simulator (bestfit, tie-break first, the
// mixed-strategy node's MIG layout as it is: --sharing mig) asked where
// it goes, then the gate removed; the node kube-scheduler binds it to must be the simulator's,
// or both leave it pending. This holds only if the scheduler reads every
// NVIDIA setup as the snapshot reader does (gpu.DevicePluginSetup.Devices,
// one reader for both): a time-sliced L4 node of 16 devices is 4 GPUs to
// both, not 16.
func TestRoundTripGPUplaneProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a control plane and builds gpuplane-scheduler")
	}
	kubectl := kube.Binary(t, "kubectl")
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	rtSetupCluster(t, c)
	kube.StartGPUplaneSchedulerT(t, c, func(conf map[string]any) {
		profile := conf["profiles"].([]any)[0].(map[string]any)
		profile["pluginConfig"] = []any{map[string]any{"name": "GPUPlacement", "args": map[string]any{"policy": rtProfilePolicy, "tieBreak": rtProfileTie}}}
	})
	wave1, wave2 := rtGPUplane(rtWave1()), rtGPUplane(rtWave2())
	rtCreate(t, c, wave1, false)
	real := rtWait(t, c, wave1)
	file := rtSnapshot(t, c, kubectl)
	rep, stderr := rtSimulateExact(t, file)
	if n, want := rtReadRunning(t, file, real), rtCount(real); n != want {
		t.Errorf("the reader reads %d pods bound where they run, of %d", n, want)
	}
	rows := map[string]*rtRow{}
	rtCheckWave1(t, wave1, real, rep, stderr, rows)

	sort.Slice(wave2, func(i, j int) bool { return wave2[i].name < wave2[j].name })
	agree := 0
	for _, p := range wave2 {
		rtCreate(t, c, []rtPod{p}, true)
		pred, _ := rtSimulateExact(t, rtSnapshot(t, c, kubectl))
		rtUngate(t, c, []rtPod{p})
		got := rtWait(t, c, []rtPod{p})[p.name]
		want := pred[p.name]
		r := rtRowOf(rows, rtSetupOf(p, got))
		r.wave2++
		if got.node == want.Node {
			agree++
			r.wave2Agree++
			t.Logf("second wave: %s: both %q", p.name, got.node)
			continue
		}
		t.Errorf("second wave: %s: gpuplane-scheduler %q (%s), the simulator %q (%s)", p.name, got.node, got.msg, want.Node, want.Reason)
	}
	t.Logf("second wave: %d of %d pods on the same node (or pending in both)", agree, len(wave2))
	rtTable(t, rows)
}

// rtGPUplane gives each pod to gpuplane-scheduler's profile.
func rtGPUplane(pods []rtPod) []rtPod {
	for i := range pods {
		pods[i].sched = "gpuplane"
	}
	return pods
}

// rtSimulateExact runs simulate --snapshot with gpuplane-scheduler's
// policy and tie-break, the MIG layouts as they are (--sharing mig), one
// seed, and returns the outcome of each pending pod by name, and stderr.
func rtSimulateExact(t *testing.T, file string) (map[string]engine.PodOutcome, string) {
	t.Helper()
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.TieBreak, o.Seeds, o.Format, o.Sharing = file, rtProfilePolicy, rtProfileTie, 1, "json", "mig"
	return rtRun(t, o)
}
