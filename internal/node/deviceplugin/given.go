// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// The kubelet's pod-resources API reports the device IDs the kubelet
// picked, but a container given the scheduler's choice runs on other GPUs.
// Given records, per container and resource, the device IDs it was really
// given, and Translate puts them in place of the kubelet's, so the
// exporter's pod labels and allocation shares (and so cost) name the GPUs
// the container runs on.

// givenKey is one container's allocation of one resource.
type givenKey struct {
	owner    podresources.Owner
	resource string
}

// given is the record of Assignments: the device IDs each container was
// given by the scheduler's choice, and a version bumped on each change.
type given struct {
	mu      sync.Mutex
	ids     map[givenKey][]string
	at      map[givenKey]time.Time // when each record was made
	version uint64
}

// givenIDs are the device IDs a container asking size of resource holds
// under choice c on GPUs uuids: the UUIDs for whole GPUs, else size
// milli-GPU units of the chosen GPU (device.NewMilliID, numbered from 0:
// unique within the container, which is all the exporter needs).
func givenIDs(resource string, size int64, uuids []string) []string {
	if resource != string(gpuresource.GPUMilli) {
		return uuids
	}
	out := make([]string, 0, size)
	for k := range int(size) {
		out = append(out, string(device.NewMilliID(uuids[0], k)))
	}
	return out
}

// record notes that the container of choice c, asking size of resource,
// was given the GPUs uuids.
func (a *Assignments) record(c Choice, resource string, size int64, uuids []string) {
	ns, pod, _ := strings.Cut(c.Pod, "/")
	a.given.set(givenKey{podresources.Owner{Namespace: ns, Pod: pod, Container: c.Container}, resource}, givenIDs(resource, size, uuids))
}

func (g *given) set(k givenKey, ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ids == nil {
		g.ids, g.at = map[givenKey][]string{}, map[givenKey]time.Time{}
	}
	g.ids[k], g.at[k] = ids, time.Now()
	g.version++
}

// Restore records the choices of the pods of this node already allocated
// (gpuresource.AnnotationAllocated), read from the API server, so that an
// agent restart keeps naming the GPUs they run on. The UUIDs come from
// the pod's gpuresource.AnnotationGPUUUIDs, else from uuidOf (the node's
// GPU at an index; "" when there is none, which skips the pod).
func (a *Assignments) Restore(ctx context.Context, uuidOf func(index int) string) error {
	lctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	list, err := a.client.CoreV1().Pods(metav1.NamespaceAll).List(lctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.node})
	if err != nil {
		return fmt.Errorf("listing the pods of node %s for their given GPUs: %w", a.node, err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Annotations[gpuresource.AnnotationAllocated] != "true" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		c, err := parseChoice(p)
		if err != nil {
			klog.ErrorS(err, "Ignoring the recorded choice of an allocated pod")
			continue
		}
		uuids := c.UUIDs
		if uuids == nil {
			for _, g := range c.GPUs {
				uuids = append(uuids, uuidOf(g))
			}
		}
		if len(uuids) == 0 || uuids[0] == "" {
			continue
		}
		for _, r := range []corev1.ResourceName{gpuresource.GPU, gpuresource.GPUMilli} {
			if name, n, found := containerRequest(p, r); found == 1 {
				a.given.set(givenKey{podresources.Owner{Namespace: p.Namespace, Pod: p.Name, Container: name}, string(r)}, givenIDs(string(r), n, uuids))
			}
		}
	}
	return nil
}

// PodSource is what the exporter reads pod attribution from
// (exporter.PodSource); a *podresources.Watcher is one.
type PodSource interface {
	Current() *podresources.Mapping
	Errors() uint64
}

// Translate returns src with the device IDs of every container given the
// scheduler's choice replaced by the IDs it was given. Records of pods the
// kubelet no longer lists are dropped (only by a List answered after the
// record was made: an older one cannot list a pod just admitted). The same Mapping is returned while
// neither src's nor the record changes (the exporter rebuilds its targets
// only on a new Mapping).
func (a *Assignments) Translate(src PodSource) PodSource {
	return &translated{src: src, g: &a.given}
}

type translated struct {
	src PodSource
	g   *given

	mu      sync.Mutex
	in, out *podresources.Mapping
	version uint64
}

func (t *translated) Errors() uint64 { return t.src.Errors() }

func (t *translated) Current() *podresources.Mapping {
	m := t.src.Current()
	if m == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	if m == t.in && t.g.version == t.version && t.out != nil {
		return t.out
	}
	out := &podresources.Mapping{Pods: m.Pods, Time: m.Time, Allocations: givenAllocations(m.Allocations, t.g.ids)}
	if m.Pods != nil {
		for k := range t.g.ids {
			if !m.Pods[k.owner.Namespace+"/"+k.owner.Pod] && t.g.at[k].Before(m.Time) {
				delete(t.g.ids, k)
				delete(t.g.at, k)
				t.g.version++
			}
		}
	}
	t.in, t.out, t.version = m, out, t.g.version
	return out
}

// givenAllocations returns allocs with the device IDs of every container
// in ids (given the scheduler's choice) replaced by the IDs it was given.
func givenAllocations(allocs []podresources.Allocation, ids map[givenKey][]string) []podresources.Allocation {
	var out []podresources.Allocation
	done := map[givenKey]bool{}
	for _, al := range allocs {
		k := givenKey{al.Owner, al.ResourceName}
		given, ok := ids[k]
		if !ok {
			out = append(out, al)
			continue
		}
		if !done[k] {
			done[k] = true
			for _, id := range given {
				out = append(out, podresources.Allocation{ResourceName: al.ResourceName, DeviceID: id, Owner: al.Owner})
			}
		}
	}
	return out
}

// real returns the allocations of m with the device IDs the agent gave in
// place of the kubelet's: the GPUs each container really runs on.
func (g *given) real(m *podresources.Mapping) []podresources.Allocation {
	g.mu.Lock()
	defer g.mu.Unlock()
	return givenAllocations(m.Allocations, g.ids)
}
