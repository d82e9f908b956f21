// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func annotated(ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "p", Annotations: ann}}
}

func TestParseChoice(t *testing.T) {
	c, err := parseChoice(annotated(map[string]string{"gpuplane.io/gpus": "3, 0", "gpuplane.io/gpu-uuids": "GPU-d,GPU-a", "gpuplane.io/gpu-share": "1000"}))
	if want := (Choice{Pod: "ml/p", GPUs: []int{3, 0}, UUIDs: []string{"GPU-d", "GPU-a"}, Share: 1000}); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("parseChoice = %+v, %v; want %+v", c, err, want)
	}
	for _, tc := range []struct {
		ann  map[string]string
		want string
	}{
		{map[string]string{"gpuplane.io/gpus": ""}, `pod ml/p: annotation gpuplane.io/gpus="": "" is not a GPU index`},
		{map[string]string{"gpuplane.io/gpus": "0,x"}, `annotation gpuplane.io/gpus="0,x": "x" is not a GPU index`},
		{map[string]string{"gpuplane.io/gpus": "-1"}, `"-1" is not a GPU index`},
		{map[string]string{"gpuplane.io/gpus": "2,2"}, "GPU 2 is listed twice"},
		{map[string]string{"gpuplane.io/gpus": "0,1", "gpuplane.io/gpu-uuids": "GPU-a"}, `annotation gpuplane.io/gpu-uuids="GPU-a": 1 UUIDs for 2 GPUs`},
		{map[string]string{"gpuplane.io/gpus": "0", "gpuplane.io/gpu-share": "0"}, `annotation gpuplane.io/gpu-share="0": want milli-GPU 1..1000`},
		{map[string]string{"gpuplane.io/gpus": "0", "gpuplane.io/gpu-share": "1001"}, "want milli-GPU 1..1000"},
	} {
		if _, err := parseChoice(annotated(tc.ann)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseChoice(%v) = %v, want an error with %q", tc.ann, err, tc.want)
		}
	}
}

func TestContainerRequest(t *testing.T) {
	q := func(n int64) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "side"}, {Name: "main", Resources: corev1.ResourceRequirements{Requests: q(3)}}},
	}}
	if _, n, found := containerRequest(p, "nvidia.com/gpu"); n != 3 || found != 1 {
		t.Errorf("one GPU container (requests only): %d, %d containers", n, found)
	}
	if _, _, found := containerRequest(p, "gpuplane.io/gpu-milli"); found != 0 {
		t.Errorf("gpu-milli: %d containers", found)
	}
	p.Spec.InitContainers[0].Resources.Limits = q(1)
	if _, _, found := containerRequest(p, "nvidia.com/gpu"); found != 2 {
		t.Errorf("an init container asks too: %d containers, want 2", found)
	}
}

func TestAllocateChoiceRefuses(t *testing.T) {
	n := testNode(t, "l40s-pcie-4")
	c := testConfig(t, "gpuplane: {milliGPU: true}")
	whole := testPlugin(t, &n, c, "nvidia.com/gpu")
	milli := testPlugin(t, &n, c, "gpuplane.io/gpu-milli")
	for _, tc := range []struct {
		p    *Plugin
		c    Choice
		size int64
		want string
	}{
		{whole, Choice{GPUs: []int{0}}, 2, "annotation gpuplane.io/gpus names 1 GPUs; the container asks for 2 of nvidia.com/gpu, which takes 2 GPUs"},
		{whole, Choice{GPUs: []int{0}, Share: 500}, 1, "annotation gpuplane.io/gpu-share=500; the container asks for 1 of nvidia.com/gpu, which takes 1000 milli-GPU per GPU"},
		{milli, Choice{GPUs: []int{0, 1}}, 300, "names 2 GPUs; the container asks for 300 of gpuplane.io/gpu-milli, which takes 1 GPU"},
		{milli, Choice{GPUs: []int{1}, Share: 200}, 300, "annotation gpuplane.io/gpu-share=200; the container asks for 300 of gpuplane.io/gpu-milli, which takes 300 milli-GPU per GPU"},
	} {
		if _, err := tc.p.allocateChoice(tc.c, tc.size); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v of %d: %v, want an error with %q", tc.p.res.Name, tc.c, tc.size, err, tc.want)
		}
	}
	// A share without gpu-share: the request is the share.
	r, err := milli.allocateChoice(Choice{Pod: "ml/p", GPUs: []int{2}}, 250)
	if err != nil || r.Envs["NVIDIA_VISIBLE_DEVICES"] != n.GPUs[2].UUID || r.Envs["GPUPLANE_GPU_SHARE"] != "250" {
		t.Errorf("share of 250 on GPU 2: %v, %v", r, err)
	}
}
