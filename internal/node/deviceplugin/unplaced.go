// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Unplaced returns the GPUs of n held by the pods whose GPUs
// gpuplane-scheduler does not know (gpuresource.AnnotationNodeUnplacedPods):
// every pod the kubelet's pod-resources List shows holding a device of a
// GPU of n (its devices as really given: inuse.go), except a pod bound to
// this node whose gpuresource.AnnotationGPUs names exactly the GPUs it
// holds (and whose gpuresource.AnnotationGPUShare, when set, is what it
// holds on each). It asks the kubelet now, and the API server when a pod
// holds a GPU; it fails without UseKubelet, or when either fails.
func (a *Assignments) Unplaced(ctx context.Context, n *device.Node) (gpuresource.UnplacedPods, error) {
	if a.kubelet == nil {
		return nil, errors.New("the pods the scheduler did not place need the kubelet's pod-resources socket")
	}
	view, err := a.kubelet(ctx)
	if err != nil {
		return nil, err
	}
	held := map[string]map[int]int64{}
	for g, hs := range useOf(n, a.given.real(view)) {
		for _, h := range hs {
			pod := h.owner.Namespace + "/" + h.owner.Pod
			if held[pod] == nil {
				held[pod] = map[int]int64{}
			}
			held[pod][g] = min(held[pod][g]+h.milli, device.MilliUnits)
		}
	}
	if len(held) == 0 {
		return gpuresource.UnplacedPods{}, nil // no pod holds a GPU: no API call
	}
	lctx, cancel := context.WithTimeout(ctx, a.Timeout)
	list, err := a.client.CoreV1().Pods(metav1.NamespaceAll).List(lctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.node})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("listing the pods of node %s for the GPUs they hold: %w", a.node, err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		pod := p.Namespace + "/" + p.Name
		if gpus, ok := held[pod]; ok && placed(p, gpus) {
			delete(held, pod)
		}
	}
	out := gpuresource.UnplacedPods{}
	for pod, gpus := range held {
		m := make(map[string]int64, len(gpus))
		for g, milli := range gpus {
			m[strconv.Itoa(g)] = milli
		}
		out[pod] = m
	}
	return out, nil
}

// placed reports whether pod p's scheduler's choice names exactly the GPUs
// it holds, gpus (milli-GPU by GPU index).
func placed(p *corev1.Pod, gpus map[int]int64) bool {
	if _, ok := p.Annotations[gpuresource.AnnotationGPUs]; !ok {
		return false
	}
	c, err := parseChoice(p)
	if err != nil || len(c.GPUs) != len(gpus) {
		return false
	}
	for _, g := range c.GPUs {
		milli, ok := gpus[g]
		if !ok || c.Share != 0 && milli != c.Share {
			return false
		}
	}
	return true
}
