// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/atomicfile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// WriteFeatureFile writes the labels as a node-feature-discovery local
// feature file ("key=value" lines, e.g. under
// /etc/kubernetes/node-feature-discovery/features.d/), replacing the file
// atomically (internal/atomicfile) so NFD never reads half of it.
func WriteFeatureFile(path string, l map[string]string) error {
	var b strings.Builder
	b.WriteString("# GPU feature labels written by gpuplane-node-agent\n")
	for _, line := range Sorted(l) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if err := atomicfile.Write(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("labels file %s: %w", path, err)
	}
	return nil
}

// ApplyToNode sets the labels l and the annotations ann (Annotations) on
// the named Node with one merge patch, and removes the labels under
// Prefixes (and not under Foreign) that the node carries but l does not (a MIG profile that is
// gone, for example). Other labels and annotations are untouched.
func ApplyToNode(ctx context.Context, c kubernetes.Interface, node string, l, ann map[string]string) error {
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("labelling node %s: %w", node, err)
	}
	patch := map[string]any{}
	for k, v := range l {
		if n.Labels[k] != v {
			patch[k] = v
		}
	}
	for k := range n.Labels {
		if _, keep := l[k]; keep {
			continue
		}
		if Owned(k) {
			patch[k] = nil // delete
		}
	}
	annPatch := map[string]any{}
	for k, v := range ann {
		if n.Annotations[k] != v {
			annPatch[k] = v
		}
	}
	if len(patch) == 0 && len(annPatch) == 0 {
		return nil
	}
	meta := map[string]any{}
	if len(patch) > 0 {
		meta["labels"] = patch
	}
	if len(annPatch) > 0 {
		meta["annotations"] = annPatch
	}
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labelling node %s: %w", node, err)
	}
	return nil
}

// RetryInterval is how long ApplyUntilDone waits after a failed attempt.
const RetryInterval = 30 * time.Second

// ApplyUntilDone applies the labels and annotations to the named Node with
// ApplyToNode, logging each failure and trying again every retry
// (RetryInterval on a node), until it succeeds or ctx is done. It returns
// nil once they are applied, ctx's error otherwise. The node agent runs it in the
// background: the API server being unreachable at start does not stop the
// device plugin.
func ApplyUntilDone(ctx context.Context, c kubernetes.Interface, node string, l, ann map[string]string, retry time.Duration) error {
	for {
		err := ApplyToNode(ctx, c, node, l, ann)
		if err == nil {
			klog.InfoS("Labelled node", "node", node, "labels", len(l))
			return nil
		}
		klog.ErrorS(err, "Labelling node failed; retrying", "node", node, "in", retry)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
}

// ApplyUnhealthy sets resource.AnnotationNodeUnhealthyGPUs on the named
// Node to the GPU indices bad, or removes it when bad is empty, with one
// merge patch; an error names the node.
func ApplyUnhealthy(ctx context.Context, c kubernetes.Interface, node string, bad []int) error {
	var v any // nil: remove
	if len(bad) > 0 {
		s := make([]string, len(bad))
		for i, g := range bad {
			s[i] = strconv.Itoa(g)
		}
		v = strings.Join(s, ",")
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{resource.AnnotationNodeUnhealthyGPUs: v}}})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("node %s: annotating unhealthy GPUs %v: %w", node, bad, err)
	}
	return nil
}
