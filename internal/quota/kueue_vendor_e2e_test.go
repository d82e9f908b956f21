// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// mixedNodes are mixedTeams' nodes as each vendor's components label
// them: an H100 x 8 node (gpu-feature-discovery's product name), two
// MI300X x 8 in CPX/NPS1 (64 amd.com/gpu each; AMD's node labeller's
// labels) and a Gaudi3 x 8 (habana.ai/gaudi, gpuplane's model label).
var mixedNodes = []kube.Node{
	{Name: "h100-0", CPUMilli: 112000, MemoryMiB: 1 << 20, GPUs: 8, Model: "H100-80GB", Labels: map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}},
	{Name: "mi300x-0", CPUMilli: 192000, MemoryMiB: 1 << 20, GPUs: 64, Accelerator: resource.AMDGPU, Labels: map[string]string{resource.LabelAMDProductName: "AMD_Instinct_MI300X", resource.LabelAMDPartition: "cpx_nps1"}},
	{Name: "mi300x-1", CPUMilli: 192000, MemoryMiB: 1 << 20, GPUs: 64, Accelerator: resource.AMDGPU, Labels: map[string]string{resource.LabelAMDProductName: "AMD_Instinct_MI300X", resource.LabelAMDPartition: "cpx_nps1"}},
	{Name: "gaudi3-0", CPUMilli: 160000, MemoryMiB: 1 << 20, GPUs: 8, Accelerator: resource.Gaudi, Labels: map[string]string{resource.LabelGPUModel: "Gaudi3"}},
}

// TestQuotaOnKueueVendors applies what gpuplane quota writes for
// mixedTeams (TestPlanVendors) to a running Kueue v0.17.0 and runs Jobs of
// one pod each asking AMD's and Intel's resources, each checked before
// the next:
//
//  1. ml-amd, 8 amd.com/gpu: admitted within ml's nominal 64 on flavor
//     mi300x; gpuplane-scheduler places its pod on an MI300X node (the
//     flavor's nodeLabels amd.com/gpu.product-name=AMD_Instinct_MI300X).
//  2. ml-gaudi, 4 habana.ai/gaudi: admitted on gaudi3 (nominal 8), placed
//     on the Gaudi3 node.
//  3. web-amd, 16 amd.com/gpu: past web's nominal 8, admitted borrowing 8
//     of ml's idle 56 (64 - 8) in the cohort; placed on an MI300X node.
//  4. web-gaudi, 1 habana.ai/gaudi: web has no Gaudi quota, so its
//     ClusterQueue covers no habana.ai/gaudi and Kueue reserves no quota,
//     naming the resource.
func TestQuotaOnKueueVendors(t *testing.T) {
	teams := filepath.Join(t.TempDir(), "teams.yaml")
	if err := os.WriteFile(teams, []byte(mixedTeams), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startKueueCluster(t, mixedNodes, KueueConfig().Resources.ExcludeResourcePrefixes)
	applyPlan(t, c, teams, map[string]int{"H100-80GB": 8, "MI300X": 128, "Gaudi3": 8})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	admitted := func(w kube.WorkloadState) bool { return w.Is("Admitted") }
	run := func(ns, name string, res corev1.ResourceName, n int64, flavor, label, value string) {
		t.Helper()
		if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, kube.KueueJobOf(ns, name, ns, 1, res, n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := c.WaitWorkload(ctx, ns, name, "Admitted", admitted)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Flavors[string(res)]; got != flavor {
			t.Errorf("%s admitted with %s on flavor %q, want %q", name, res, got, flavor)
		}
		nodes, err := c.WaitJobPods(ctx, ns, name, 1)
		if err != nil {
			t.Fatal(err)
		}
		node, err := c.Client.CoreV1().Nodes().Get(ctx, nodes[0], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Labels[label]; got != value {
			t.Errorf("%s placed on %s (%s=%q), want %s", name, node.Name, label, got, value)
		}
	}
	run("ml", "ml-amd", resource.AMDGPU, 8, "mi300x", resource.LabelAMDProductName, "AMD_Instinct_MI300X")
	run("ml", "ml-gaudi", resource.Gaudi, 4, "gaudi3", resource.LabelGPUModel, "Gaudi3")
	run("web", "web-amd", resource.AMDGPU, 16, "mi300x", resource.LabelAMDProductName, "AMD_Instinct_MI300X")
	if _, err := c.Client.BatchV1().Jobs("web").Create(ctx, kube.KueueJobOf("web", "web-gaudi", "web", 1, resource.Gaudi, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.WaitWorkload(ctx, "web", "web-gaudi", "refused for quota", func(w kube.WorkloadState) bool {
		q, ok := w.Conditions["QuotaReserved"]
		return ok && q.Status == "False" && strings.Contains(q.Message, resource.Gaudi)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("web-gaudi: %s", w.Conditions["QuotaReserved"].Message)
}
