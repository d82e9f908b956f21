// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// realMIGProfile: GPU 0 an A100-SXM4-80GB with MIG on (3g.40gb, 2g.20gb
// and two 1g.10gb), GPU 1 one with MIG off.
const realMIGProfile = `name: real-kubelet-mig
gpus:
  - {productName: NVIDIA A100-SXM4-80GB, mig: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}
  - {productName: NVIDIA A100-SXM4-80GB}
`

// allocations formats the exporter's gpuplane_device_allocation series as
// gpu/GPU_I_PROFILE/GPU_I_ID/vgpu=namespace/pod/container, sorted.
func allocations(m map[string]*dto.MetricFamily) []string {
	var out []string
	for _, s := range seriesOf(m, "gpuplane_device_allocation", nil) {
		ls := metricLabels(s)
		out = append(out, ls["gpu"]+"/"+ls["GPU_I_PROFILE"]+"/"+ls["GPU_I_ID"]+"/"+ls["vgpu"]+"="+ls["namespace"]+"/"+ls["pod"]+"/"+ls["container"])
	}
	slices.Sort(out)
	return out
}

func (e *realEnv) waitAllocations(want []string) {
	e.t.Helper()
	slices.Sort(want)
	e.a.eventually(e.t, fmt.Sprintf("allocations %v", want), func(m map[string]*dto.MetricFamily) bool {
		got := allocations(m)
		if !slices.Equal(got, want) {
			e.t.Logf("allocations %v", got)
			return false
		}
		return true
	})
}

// TestRealKubeletMIGMixed: under the mixed strategy the real kubelet
// accepts nvidia.com/gpu 1 (GPU 1), nvidia.com/mig-3g.40gb 1,
// nvidia.com/mig-2g.20gb 1 and nvidia.com/mig-1g.10gb 2 (GPU 0's
// devices). A pod per resource runs with that device's UUID (the MIG
// device's own, MIG-...) in NVIDIA_VISIBLE_DEVICES; the 1g.10gb pod asks
// for 2 and gets both. The exporter, reading the kubelet's pod-resources
// API, labels each device's allocation series with its pod, and MIG
// devices' with their GPU (0), profile and GPU instance ID.
func TestRealKubeletMIGMixed(t *testing.T) {
	e := startRealEnv(t, realMIGProfile, "version: v1\nflags: {migStrategy: mixed}\n")
	b, err := mock.Open(filepath.Join(e.dir, "profile.yaml"), mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mig := n.GPUs[0].MIG
	if len(mig) != 4 || n.GPUs[1].MIGEnabled {
		t.Fatalf("profile discovered as %+v", n.GPUs)
	}
	e.startAgent()
	counts := map[corev1.ResourceName]int64{gpuresource.GPU: 1, "nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/mig-1g.10gb": 2}
	for r, q := range counts {
		e.waitResource(r, q, q)
	}
	pods := []struct {
		name string
		res  corev1.ResourceName
		n    string
		want []string
	}{
		{"whole", gpuresource.GPU, "1", []string{n.GPUs[1].UUID}},
		{"m3", "nvidia.com/mig-3g.40gb", "1", []string{mig[0].UUID}},
		{"m2", "nvidia.com/mig-2g.20gb", "1", []string{mig[1].UUID}},
		{"m1", "nvidia.com/mig-1g.10gb", "2", []string{mig[2].UUID, mig[3].UUID}},
	}
	for _, p := range pods {
		e.createPod(p.name, map[corev1.ResourceName]string{p.res: p.n}, nil)
	}
	for _, p := range pods {
		e.waitRunning(p.name)
		slices.Sort(p.want)
		if v := e.visible(p.name); !slices.Equal(v, p.want) {
			t.Errorf("%s (%s: %s): NVIDIA_VISIBLE_DEVICES %v, want %v", p.name, p.res, p.n, v, p.want)
		}
	}
	gi := func(i int) string { return fmt.Sprint(mig[i].GPUInstanceID) }
	e.waitAllocations([]string{
		"1///=default/whole/main",
		"0/3g.40gb/" + gi(0) + "/=default/m3/main",
		"0/2g.20gb/" + gi(1) + "/=default/m2/main",
		"0/1g.10gb/" + gi(2) + "/=default/m1/main",
		"0/1g.10gb/" + gi(3) + "/=default/m1/main",
	})
}

// TestRealKubeletTimeSlicingRenamed: time-slicing with 4 replicas and
// renameByDefault: the real kubelet accepts nvidia.com/gpu.shared, 32
// (8 GPUs x 4), and has no nvidia.com/gpu. Replicas spread over GPUs
// (each next one from the GPU the request uses least, then the one with
// the most free replicas, ties to the lowest index): pod s1 asking 1
// gets a replica of GPU 0, s2 (1) of GPU 1, s3 (2) one each of GPUs 2
// and 3: NVIDIA_VISIBLE_DEVICES is those GPUs' UUIDs. The exporter,
// reading the kubelet's pod-resources API, labels each GPU's allocation
// series with the pod holding its replica.
func TestRealKubeletTimeSlicingRenamed(t *testing.T) {
	e := startRealEnv(t, realProfile, `version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
`)
	e.startAgent()
	const shared corev1.ResourceName = "nvidia.com/gpu.shared"
	e.waitResource(shared, 32, 32)
	if a, c, err := e.resources(gpuresource.GPU); err != nil || a != 0 || c != 0 {
		t.Errorf("nvidia.com/gpu allocatable %d, capacity %d (%v); want none", a, c, err)
	}
	for _, p := range []struct {
		name, n string
		want    []string
	}{
		{"s1", "1", realUUIDs(0)},
		{"s2", "1", realUUIDs(1)},
		{"s3", "2", realUUIDs(2, 3)},
	} {
		e.createPod(p.name, map[corev1.ResourceName]string{shared: p.n}, nil)
		e.waitRunning(p.name)
		if v := e.visible(p.name); !slices.Equal(v, p.want) {
			t.Errorf("%s (%s: %s): NVIDIA_VISIBLE_DEVICES %v, want %v", p.name, shared, p.n, v, p.want)
		}
	}
	// Without --kubernetes-virtual-gpus a replica's series is its GPU's: no
	// vgpu label.
	e.waitAllocations([]string{"0///=default/s1/main", "1///=default/s2/main", "2///=default/s3/main", "3///=default/s3/main"})
}
