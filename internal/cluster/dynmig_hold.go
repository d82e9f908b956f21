// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cluster

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// HoldDynamicMIG holds the instance of MIG profile k (the index order of
// gpu.MIGProfiles) at start slot start on GPU g, a GPU of MIG on demand
// (EnableDynamicMIG): an instance allocated outside the core's choice, as
// a DRA claim read back from the API, which need not be the first free
// placement. It holds no CPU or memory and counts no pod. It returns an
// error, and changes nothing, when g is not a dynamic MIG GPU, profile k
// has no placement at start, or that placement's memory slots or the
// compute slices are taken.
func (n *Node) HoldDynamicMIG(g, k, start int) error {
	if g < 0 || g >= len(n.GPUFree) || !n.MIGGPUs.Has(g) || !n.MIG[g].Dynamic {
		return fmt.Errorf("node %s: GPU %d is not a GPU of MIG on demand", n.Name, g)
	}
	if k < 0 || k >= gpu.NumMIGProfiles {
		return fmt.Errorf("node %s: MIG profile %d out of range 0..%d", n.Name, k, gpu.NumMIGProfiles-1)
	}
	i := -1
	for j, s := range gpu.MIGProfiles("A100-80GB")[k].Starts {
		if s == start {
			i = j
		}
	}
	if i < 0 {
		return fmt.Errorf("node %s: MIG profile %d has no placement at start %d", n.Name, k, start)
	}
	m := &n.MIG[g]
	if m.Slots&migMasks[k][i] != 0 || m.heldSlices()+gpu.MIGSlices(k) > 7 {
		return fmt.Errorf("node %s: GPU %d: the placement of MIG profile %d at start %d is taken", n.Name, g, k, start)
	}
	m.Slots |= migMasks[k][i]
	m.Starts[k] |= 1 << uint(i)
	m.Held[k]++
	n.GPUFree[g] = migFree(m.heldSlices())
	n.Version++
	return nil
}
