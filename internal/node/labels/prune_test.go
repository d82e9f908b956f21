// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestPrune removes the agent's labels from every node and keeps the rest,
// as node-feature-discovery's nfd-master -prune removes only NFD's own
// (kubernetes-sigs/node-feature-discovery,
// deployment/helm/node-feature-discovery/templates/post-delete-job.yaml).
func TestPrune(t *testing.T) {
	kept := map[string]string{
		"kubernetes.io/hostname":                  "gpu-1",
		"feature.node.kubernetes.io/cpu-model.id": "143", // NFD's
		"nvidia.com/gpu.deploy.device-plugin":     "false",
		"nvidia.com/gpu.workload.config":          "container",
		"nvidia.com/mig.config":                   "all-1g.10gb",
		"nvidia.com/mig.config.state":             "success",
		"nvidia.com/device-plugin.config":         "a100",
		"gpuplane.io/kubelet-api":                 "dra",
		"nvidia.com/gpu.present":                  "true", // the chart's affinity: kept
	}
	gpu1 := map[string]string{
		"nvidia.com/gpu.count":                 "8",
		"nvidia.com/gpu.product":               "NVIDIA-A100-SXM4-80GB",
		"nvidia.com/cuda.driver-version.major": "570",
		"nvidia.com/mig.strategy":              "mixed",
		"nvidia.com/mig-1g.10gb.count":         "7",
		"gpuplane.io/gpu.model":                "A100-80GB",
	}
	for k, v := range kept {
		gpu1[k] = v
	}
	cpu := map[string]string{"kubernetes.io/hostname": "cpu-1"}
	c := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: gpu1}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-2", Labels: map[string]string{"nvidia.com/gpu.count": "0"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", Labels: cpu}},
	)
	ctx := context.Background()
	nodes, removed, err := Prune(ctx, c)
	// gpu-1: 6 owned labels; gpu-2: 1; cpu-1: none, not patched.
	if err != nil || nodes != 2 || removed != 7 {
		t.Fatalf("Prune = %d nodes, %d labels, %v; want 2, 7, nil", nodes, removed, err)
	}
	for name, want := range map[string]map[string]string{"gpu-1": kept, "gpu-2": nil, "cpu-1": cpu} {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Labels) != len(want) || (len(want) > 0 && !reflect.DeepEqual(n.Labels, want)) {
			t.Errorf("%s labels = %v, want %v", name, n.Labels, want)
		}
	}
	var patches int
	for _, a := range c.Actions() {
		if a.GetVerb() == "patch" {
			patches++
		}
	}
	if patches != 2 {
		t.Errorf("%d patches, want 2 (cpu-1 has nothing to remove)", patches)
	}
	// Again: nothing left to remove.
	if nodes, removed, err := Prune(ctx, c); err != nil || nodes != 0 || removed != 0 {
		t.Errorf("second Prune = %d, %d, %v; want 0, 0, nil", nodes, removed, err)
	}
}

// TestPruneError names the node whose patch failed.
func TestPruneError(t *testing.T) {
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{"nvidia.com/gpu.count": "8"}}})
	c.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	_, _, err := Prune(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "pruning labels of node gpu-1: forbidden") {
		t.Errorf("Prune = %v, want an error naming gpu-1", err)
	}
}
