// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/node/labels"
)

// PruneLabels removes the GPU feature labels the agent owns
// (labels.Owned, but nvidia.com/gpu.present: labels.Prune) from every Node and logs how many nodes and labels
// (gpuplane-node-agent --prune-labels, the chart's uninstall hook Job). It
// talks to the API server of the kubeconfig file, or with in-cluster
// credentials when kubeconfig is empty; it needs get, list and patch on
// nodes. An error names the credentials or the node that failed.
func PruneLabels(ctx context.Context, kubeconfig string) error {
	defer klog.Flush()
	rc, err := restConfig(Options{Kubeconfig: kubeconfig})
	if err == nil && rc == nil {
		if rc, err = rest.InClusterConfig(); err != nil {
			err = fmt.Errorf("--prune-labels without --kubeconfig: %w", err)
		}
	}
	if err != nil {
		return err
	}
	c, err := kubeClient(rc)
	if err != nil {
		return err
	}
	nodes, removed, err := labels.Prune(ctx, c)
	if err != nil {
		return err
	}
	klog.InfoS("Pruned GPU feature labels", "nodes", nodes, "labels", removed)
	return nil
}
