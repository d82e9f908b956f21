// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// paperFor returns the published results that apply to r: a fill run to
// 1.3 × capacity of a public openb pod list recognised by its SHA-256
// (trace.PublishedResults) on the openb GPU node list
// (openb_node_list_gpu_node.csv: 1,213 nodes, 6,212 GPUs).
func paperFor(r *engine.Report) (trace.Published, bool) {
	if r.Mode != "fill" || r.Inflate != 1.3 || r.Nodes != 1213 || r.GPUs != 6212 {
		return trace.Published{}, false
	}
	sum := r.PodsSHA256()
	for _, p := range trace.PublishedResults {
		if p.SHA256 == sum {
			return p, true
		}
	}
	return trace.Published{}, false
}
