// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import "github.com/gpuplane/gpuplane/internal/cluster"

// Why a snapshot's pod with Kubernetes' own filters (cluster.NodeFilter)
// fits no node of the empty cluster, when its resources fit some.
const (
	// ReasonSelector: its nodeName, nodeSelector or required node
	// affinity matches no node its resources fit.
	ReasonSelector = "node_selector"
	// ReasonTaint: every node its resources fit and it selects has a
	// NoSchedule or NoExecute taint it does not tolerate, or is cordoned.
	ReasonTaint = "taint"
)

// filterUnfit is why pod p, which fits no node of the empty cluster c,
// fits none when its filters are the cause: ReasonSelector or ReasonTaint
// and the words; ok false when p has no filter or its resources fit no
// node either (unfitReason says why).
func filterUnfit(c *cluster.Cluster, p *cluster.Pod) (reason, why string, ok bool) {
	f := p.Filter
	if f == nil {
		return "", "", false
	}
	bare := *p
	bare.Filter = nil
	fits, selected := false, false
	for j := range c.Nodes {
		n := &c.Nodes[j]
		if !cluster.Feasible(n, &bare) {
			continue
		}
		fits = true
		if (f.NodeName == "" || f.NodeName == n.Name) && f.Selects(n) {
			selected = true
			break
		}
	}
	switch {
	case !fits:
		return "", "", false
	case !selected:
		return ReasonSelector, "matches by its nodeName, nodeSelector or required node affinity no node its resources fit", true
	}
	return ReasonTaint, "is kept off every node its resources fit and it selects by a taint it does not tolerate (NoSchedule, NoExecute) or a cordon", true
}
