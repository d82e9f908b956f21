// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// boundPod is a pod bound to node n at t asking gpus nvidia.com/gpu in its
// container "main"; choice "" means no scheduler's choice on it.
func boundPod(name, choice string, gpus int64, t time.Time) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "main",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t)}}},
	}
	if choice != "" {
		p.Annotations = map[string]string{"gpuplane.io/gpus": choice}
	}
	return p
}

// TestTakeKubeletView: four pods of 2 GPUs bound in the same second (the
// PodScheduled condition's resolution), so the time cannot order them.
// Without the kubelet's view Take takes ml/a (first by name); with it, the
// pod the kubelet lists without devices (under admission) whatever its
// name. a is admitted already (it has devices in the view), c is not
// listed yet (the kubelet has not seen it). The fake field selector does
// not filter, so every pod is on node n.
func TestTakeKubeletView(t *testing.T) {
	at := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{boundPod("a", "0,1", 2, at), boundPod("b", "2,3", 2, at), boundPod("c", "4,5", 2, at), boundPod("other", "", 2, at)}
	view := func(listed ...string) *podresources.Mapping {
		m := &podresources.Mapping{Pods: map[string]bool{"ml/a": true},
			Allocations: []podresources.Allocation{{ResourceName: "nvidia.com/gpu", DeviceID: "GPU-0", Owner: podresources.Owner{Namespace: "ml", Pod: "a", Container: "main"}}}}
		for _, p := range listed {
			m.Pods["ml/"+p] = true
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		view    *podresources.Mapping
		err     error
		wantPod string // "" when Take finds none
	}{
		{"no view: bound first, then name", nil, nil, "ml/a"},
		{"view fails: the same", nil, errors.New("socket gone"), "ml/a"},
		{"b under admission", view("b"), nil, "ml/b"},
		{"c under admission", view("c"), nil, "ml/c"},
		{"only a pod without the choice under admission", view("other"), nil, ""},
		{"nobody under admission: bound first of the rest", view(), nil, "ml/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			for _, p := range pods {
				q := p.DeepCopy()
				if tc.view != nil && len(tc.view.Allocations) > 0 && q.Name == "a" {
					q.Annotations["gpuplane.io/allocated"] = "true"
				}
				if _, err := client.CoreV1().Pods("ml").Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			a := NewAssignments(client, "n")
			if tc.view != nil || tc.err != nil {
				a.UseKubelet(func(context.Context) (*podresources.Mapping, error) { return tc.view, tc.err })
			}
			var got string
			found, err := a.Take(context.Background(), "nvidia.com/gpu", 2, func(c Choice) error { got = c.Pod; return nil })
			if err != nil || found != (tc.wantPod != "") || got != tc.wantPod {
				t.Fatalf("Take = %v, %v, gave %q; want %q", found, err, got, tc.wantPod)
			}
			if got == "" {
				return
			}
			p, err := client.CoreV1().Pods("ml").Get(context.Background(), got[len("ml/"):], metav1.GetOptions{})
			if err != nil || p.Annotations["gpuplane.io/allocated"] != "true" {
				t.Errorf("%s not marked allocated: %v %v", got, p.Annotations, err)
			}
		})
	}
}
