// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuplane/gpuplane/api/resource"
)

// Prune removes the labels the node agent owns (Owned: under Prefixes and
// not under Foreign) from every Node, with one merge patch per node that
// carries any (a null value deletes a key, RFC 7386); other labels are
// untouched, and so is nvidia.com/gpu.present, which the agent writes but
// administrators and the GPU operator set too, and which the chart's
// default affinity selects: without it a later install would run no agent
// on the node to put it back. It returns the number of nodes patched and of labels removed
// in all. As node-feature-discovery's nfd-master -prune, which its chart
// runs as a post-delete hook Job, it is what the chart's uninstall hook
// runs (gpuplane-node-agent --prune-labels). An error names the node, or
// the list call; nodes patched before it stay patched.
func Prune(ctx context.Context, c kubernetes.Interface) (nodes, removed int, err error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("pruning labels: listing nodes: %w", err)
	}
	for _, n := range list.Items {
		patch := map[string]any{}
		for k := range n.Labels {
			if Owned(k) && k != resource.LabelGPUPresent {
				patch[k] = nil // delete
			}
		}
		if len(patch) == 0 {
			continue
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": patch}})
		if err != nil {
			return nodes, removed, err
		}
		if _, err := c.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			return nodes, removed, fmt.Errorf("pruning labels of node %s: %w", n.Name, err)
		}
		nodes++
		removed += len(patch)
	}
	return nodes, removed, nil
}
