// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

type fixedSource struct{ m *podresources.Mapping }

func (f *fixedSource) Current() *podresources.Mapping { return f.m }
func (f *fixedSource) Errors() uint64                 { return 0 }

// TestTranslate: two pods whose kubelet device IDs and chosen GPUs differ.
// The kubelet gave a GPU-0 and b GPU-1 (its own IDs); the scheduler chose
// GPU-5 for a and GPU-6 for b. A 300 milli-GPU pod s was counted by the
// kubelet on units of GPU-0 and GPU-1; its choice is GPU-7. A NIC of a's
// is kept. Translate names the chosen GPUs; when b leaves the kubelet's
// list its record goes.
func TestTranslate(t *testing.T) {
	own := func(pod string) podresources.Owner {
		return podresources.Owner{Namespace: "ml", Pod: pod, Container: "main"}
	}
	al := func(res, id, pod string) podresources.Allocation {
		return podresources.Allocation{ResourceName: res, DeviceID: id, Owner: own(pod)}
	}
	var milli []podresources.Allocation
	for k := range 300 {
		id := "GPU-0::m" + strconv.Itoa(k)
		if k >= 200 {
			id = "GPU-1::m" + strconv.Itoa(k)
		}
		milli = append(milli, al("gpuplane.io/gpu-milli", id, "s"))
	}
	src := &fixedSource{&podresources.Mapping{
		Pods:        map[string]bool{"ml/a": true, "ml/b": true, "ml/s": true},
		Allocations: append([]podresources.Allocation{al("nvidia.com/gpu", "GPU-0", "a"), al("example.com/nic", "nic0", "a"), al("nvidia.com/gpu", "GPU-1", "b")}, milli...),
	}}
	a := NewAssignments(fake.NewClientset(), "n")
	a.record(Choice{Pod: "ml/a", Container: "main", GPUs: []int{5}}, "nvidia.com/gpu", 1, []string{"GPU-5"})
	a.record(Choice{Pod: "ml/b", Container: "main", GPUs: []int{6}}, "nvidia.com/gpu", 1, []string{"GPU-6"})
	a.record(Choice{Pod: "ml/s", Container: "main", GPUs: []int{7}}, "gpuplane.io/gpu-milli", 300, []string{"GPU-7"})
	tr := a.Translate(src)
	m := tr.Current()
	per := map[string]map[string]int{} // pod -> device UUID -> count
	for _, x := range m.Allocations {
		if per[x.Owner.Pod] == nil {
			per[x.Owner.Pod] = map[string]int{}
		}
		u := x.DeviceID
		if i := strings.Index(u, "::"); i >= 0 {
			u = u[:i]
		}
		per[x.Owner.Pod][u]++
	}
	want := map[string]map[string]int{"a": {"GPU-5": 1, "nic0": 1}, "b": {"GPU-6": 1}, "s": {"GPU-7": 300}}
	if !reflect.DeepEqual(per, want) {
		t.Errorf("translated %v, want %v", per, want)
	}
	if tr.Current() != m {
		t.Error("a second Current with nothing changed built a new Mapping")
	}

	// A List answered before the records were made lists none of them:
	// nothing is dropped.
	src.m = &podresources.Mapping{Pods: map[string]bool{}, Time: time.Now().Add(-time.Hour)}
	_ = tr.Current()
	if n := len(a.given.ids); n != 3 {
		t.Errorf("an old List dropped records: %d kept, want 3", n)
	}
	src.m = &podresources.Mapping{Pods: map[string]bool{"ml/a": true}, Time: time.Now(), Allocations: []podresources.Allocation{al("nvidia.com/gpu", "GPU-0", "a")}}
	if got := tr.Current().Allocations; len(got) != 1 || got[0].DeviceID != "GPU-5" {
		t.Errorf("after b and s left: %v", got)
	}
	if n := len(a.given.ids); n != 1 {
		t.Errorf("%d records kept, want 1 (a)", n)
	}
}

// TestRestore: an agent restart rebuilds the records from the allocated
// pods' annotations (UUIDs, else the node's GPU at the index).
func TestRestore(t *testing.T) {
	client := fake.NewClientset()
	p := boundPod("a", "2,3", 2, metav1.Now().Time)
	p.Annotations["gpuplane.io/allocated"] = "true"
	q := boundPod("b", "1", 1, metav1.Now().Time) // not allocated: no record
	for _, x := range []*corev1.Pod{p, q} {
		if _, err := client.CoreV1().Pods("ml").Create(context.Background(), x, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a := NewAssignments(client, "n")
	if err := a.Restore(context.Background(), func(i int) string { return "GPU-" + strconv.Itoa(i) }); err != nil {
		t.Fatal(err)
	}
	want := map[givenKey][]string{{podresources.Owner{Namespace: "ml", Pod: "a", Container: "main"}, "nvidia.com/gpu"}: {"GPU-2", "GPU-3"}}
	if !reflect.DeepEqual(a.given.ids, want) {
		t.Errorf("records %v, want %v", a.given.ids, want)
	}
}
