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

// ApplyUnplaced writes v, the GPUs of the pods gpuplane-scheduler did not
// place, as the Node's resource.AnnotationNodeUnplacedPods: its JSON,
// "{}" when v is empty (the annotation's presence tells the scheduler
// that the agent reports them). A nil v removes the annotation: the agent
// does not report them (an earlier run may have).
func ApplyUnplaced(ctx context.Context, c kubernetes.Interface, node string, v resource.UnplacedPods) error {
	var value any // nil: remove
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		value = string(b)
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{resource.AnnotationNodeUnplacedPods: value}}})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("node %s: annotating the GPUs of pods the scheduler did not place: %w", node, err)
	}
	return nil
}
