// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

// Assignments finds the pod whose container an Allocate call is for, when
// gpuplane-scheduler has chosen its GPUs. The kubelet's Allocate carries
// device IDs but no pod. As HAMi's device plugin does (util.GetPendingPod
// in github.com/Project-HAMi/HAMi pkg/util), it lists the pods bound to
// this node and takes one the scheduler annotated that has not been
// allocated yet and asks for the same amount. HAMi serialises binds per
// node with a node lock so that only one pod can be pending; gpuplane asks
// the kubelet instead (UseKubelet): the kubelet's pod-resources List shows
// the pod under admission and no devices of the resource for its
// container yet, which tells apart pods of equal requests bound at once.
// It is safe for concurrent use: Take calls are serialised.
type Assignments struct {
	client  kubernetes.Interface
	node    string
	mu      sync.Mutex
	kubelet func(context.Context) (*podresources.Mapping, error)
	given   given

	// Timeout bounds each API call (default 5 s).
	Timeout time.Duration
}

// NewAssignments returns the lookup of pods bound to the named node through
// client.
func NewAssignments(client kubernetes.Interface, node string) *Assignments {
	return &Assignments{client: client, node: node, Timeout: 5 * time.Second}
}

// UseKubelet makes Take ask list (the kubelet's pod-resources List, e.g.
// podresources.Watcher.List) which pod is under admission. Without it, or
// when list fails, Take takes the pod bound first, which is only right
// when pods of equal requests are bound to the node more than a second
// apart (the resolution of the PodScheduled condition's time).
func (a *Assignments) UseKubelet(list func(context.Context) (*podresources.Mapping, error)) {
	a.kubelet = list
}

// Choice is the scheduler's choice for one pod, as written on it.
type Choice struct {
	// Pod is the pod's namespace/name.
	Pod string
	// Container is the name of the pod's container that asks for the
	// resource (set by Take).
	Container string
	// GPUs are the chosen GPU indices of the node (gpuresource.AnnotationGPUs),
	// in the annotation's order.
	GPUs []int
	// UUIDs are the chosen GPUs' UUIDs (gpuresource.AnnotationGPUUUIDs); nil
	// when the pod does not carry them.
	UUIDs []string
	// Share is the milli-GPU per chosen GPU (gpuresource.AnnotationGPUShare),
	// 0 when the pod does not carry it.
	Share int64

	// view is the kubelet's pod-resources List that Take read, to check
	// the choice against (inuse.go); nil without UseKubelet, or with
	// viewErr when the List failed.
	view    *podresources.Mapping
	viewErr error
}

// Take finds the pod of this node that carries the scheduler's choice, has
// not been allocated and whose one GPU container asks for size of resource
// (device IDs of nvidia.com/gpu, milli-GPU of gpuplane.io/gpu-milli). When
// the kubelet's view (UseKubelet) shows such pods under admission, only
// they are candidates, and when it shows only pods without the scheduler's
// choice under admission (a pod of another scheduler), none is. Among
// several candidates, the one bound first (its PodScheduled condition's
// time, else its creation time), then by namespace/name. It calls give
// with the pod's choice and, when give succeeds, marks the pod allocated
// (gpuresource.AnnotationAllocated), so the next call takes the next pod.
// It reports false, calling nothing, when no pod matches; an API error, a
// malformed annotation or give's error is returned naming the pod.
func (a *Assignments) Take(ctx context.Context, resource string, size int64, give func(Choice) error) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, a.Timeout)
	list, err := a.client.CoreV1().Pods(metav1.NamespaceAll).List(lctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.node})
	cancel()
	if err != nil {
		return false, fmt.Errorf("listing the pods of node %s for the scheduler's choice: %w", a.node, err)
	}
	cands, admitting, view, viewErr := a.candidates(ctx, list.Items, corev1.ResourceName(resource), size)
	if len(cands) == 0 {
		if admitting > 0 {
			klog.V(2).InfoS("The pod under admission has no scheduler's choice; the kubelet's devices are given", "node", a.node, "resource", resource, "size", size)
		}
		return false, nil
	}
	sort.Slice(cands, func(i, j int) bool {
		ti, tj := boundAt(cands[i]), boundAt(cands[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		if cands[i].Namespace != cands[j].Namespace {
			return cands[i].Namespace < cands[j].Namespace
		}
		return cands[i].Name < cands[j].Name
	})
	p := cands[0]
	c, err := parseChoice(p)
	if err != nil {
		return false, err
	}
	c.Container, _, _ = containerRequest(p, corev1.ResourceName(resource))
	c.view, c.viewErr = view, viewErr
	if err := give(c); err != nil {
		var inUse *InUseError
		if errors.As(err, &inUse) {
			a.warn(ctx, p, ReasonGPUInUse, err.Error())
		}
		return false, fmt.Errorf("pod %s: %w", c.Pod, err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{gpuresource.AnnotationAllocated: "true"}}})
	if err != nil {
		return false, err
	}
	pctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	if _, err := a.client.CoreV1().Pods(p.Namespace).Patch(pctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("pod %s: marking it %s: %w", c.Pod, gpuresource.AnnotationAllocated, err)
	}
	return true, nil
}

// candidates returns the pods of pods that may be the one an Allocate of
// size of resource is for: running or pending, one container asking
// exactly size, the scheduler's choice on them, not yet allocated; when
// the kubelet's view shows pods of that request under admission, only
// those of them. admitting is how many pods of that request, with or
// without the scheduler's choice, the kubelet shows under admission (0
// when its view is unknown). view is the kubelet's view it read (nil
// without UseKubelet, or with its error).
func (a *Assignments) candidates(ctx context.Context, pods []corev1.Pod, resource corev1.ResourceName, size int64) (cands []*corev1.Pod, admitting int, view *podresources.Mapping, viewErr error) {
	if a.kubelet != nil {
		if view, viewErr = a.kubelet(ctx); viewErr != nil {
			view = nil
			klog.V(2).InfoS("No kubelet view of the pod under admission; taking the pod bound first", "err", viewErr)
		}
	}
	var under []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		name, n, containers := containerRequest(p, resource)
		if containers == 0 || n != size {
			continue
		}
		// pod-resources lists regular containers (and sidecars) only.
		adm := view != nil && containers == 1 && regular(p, name) && view.Admitting(p.Namespace+"/"+p.Name, name, string(resource))
		if adm {
			admitting++
		}
		if _, ok := p.Annotations[gpuresource.AnnotationGPUs]; !ok {
			continue
		}
		if _, done := p.Annotations[gpuresource.AnnotationAllocated]; done {
			continue
		}
		if containers > 1 {
			klog.InfoS("Pod with the scheduler's choice has more than one GPU container; not matched", "pod", klog.KObj(p), "resource", resource, "containers", containers)
			continue
		}
		cands = append(cands, p)
		if adm {
			under = append(under, p)
		}
	}
	if admitting > 0 {
		return under, admitting, view, viewErr
	}
	return cands, 0, view, viewErr
}

// ReasonGPUInUse is the reason of the Warning event on a pod whose
// scheduler's choice names a GPU that another pod's container holds.
const ReasonGPUInUse = "GPUInUse"

// warn records a Warning event of reason on pod p; a failure is logged.
func (a *Assignments) warn(ctx context.Context, p *corev1.Pod, reason, msg string) {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: p.Name + ".", Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID, ResourceVersion: p.ResourceVersion},
		Reason:         reason,
		Message:        msg,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "gpuplane-node-agent", Host: a.node},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	ectx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	if _, err := a.client.CoreV1().Events(p.Namespace).Create(ectx, ev, metav1.CreateOptions{}); err != nil {
		klog.ErrorS(err, "Recording an event on the pod", "pod", klog.KObj(p), "reason", reason)
	}
}

// containerRequest returns the number of the pod's containers (init or
// regular) that ask for resource, and the name of the last one and the
// amount it asks: its limit, else its request (an extended resource's
// request equals its limit).
func containerRequest(p *corev1.Pod, resource corev1.ResourceName) (name string, n int64, found int) {
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			q, has := c.Resources.Limits[resource]
			if !has {
				q, has = c.Resources.Requests[resource]
			}
			if has && q.Value() > 0 {
				found++
				name, n = c.Name, q.Value()
			}
		}
	}
	return name, n, found
}

// regular reports whether the pod has a regular container of that name.
func regular(p *corev1.Pod, name string) bool {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// boundAt is when the pod was bound: its PodScheduled condition's last
// transition, else (a pod created with spec.nodeName) its creation.
func boundAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

// parseChoice reads the scheduler's annotations of p; errors name the pod,
// the annotation and the value.
func parseChoice(p *corev1.Pod) (Choice, error) {
	c := Choice{Pod: p.Namespace + "/" + p.Name}
	bad := func(key, why string) error {
		return fmt.Errorf("pod %s: annotation %s=%q: %s", c.Pod, key, p.Annotations[key], why)
	}
	seen := map[int]bool{}
	for _, f := range strings.Split(p.Annotations[gpuresource.AnnotationGPUs], ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 {
			return c, bad(gpuresource.AnnotationGPUs, fmt.Sprintf("%q is not a GPU index", f))
		}
		if seen[i] {
			return c, bad(gpuresource.AnnotationGPUs, fmt.Sprintf("GPU %d is listed twice", i))
		}
		seen[i] = true
		c.GPUs = append(c.GPUs, i)
	}
	if s, ok := p.Annotations[gpuresource.AnnotationGPUUUIDs]; ok {
		c.UUIDs = strings.Split(s, ",")
		if len(c.UUIDs) != len(c.GPUs) {
			return c, bad(gpuresource.AnnotationGPUUUIDs, fmt.Sprintf("%d UUIDs for %d GPUs", len(c.UUIDs), len(c.GPUs)))
		}
	}
	if s, ok := p.Annotations[gpuresource.AnnotationGPUShare]; ok {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v < 1 || v > gpuresource.MilliPerGPU {
			return c, bad(gpuresource.AnnotationGPUShare, fmt.Sprintf("want milli-GPU 1..%d", gpuresource.MilliPerGPU))
		}
		c.Share = v
	}
	return c, nil
}
