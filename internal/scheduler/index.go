// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// nodeIndex mirrors the scheduler snapshot's nodes, sorted by name (the
// order of NormalizeScore's "first" tie-break), as a cluster.Cluster that
// the placement core's IndexedPlacer ranks in O(log n) a node. It is
// synced at each PreFilter: a node is copied again only when its NodeInfo
// generation or its reservations (nodeCache epoch) changed.
type nodeIndex struct {
	mu     sync.Mutex
	placer *placement.IndexedPlacer
	c      *cluster.Cluster
	pos    map[string]int // node name -> index in c
	infos  []fwk.NodeInfo // per index: the NodeInfo its state is of
	gens   []int64        // per index: that NodeInfo's generation
	list   []fwk.NodeInfo // the snapshot list of the last sync
	slot   []int          // per position in list: index in c
	// The placer keeps a tree per pod shape (2 int64s and an int32 a
	// leaf) and a log of the nodes changed: both grow with use, so the
	// index starts afresh after maxShapes shapes or 8 changes a node.
	shapes  map[cluster.Pod]struct{}
	changes int
}

// maxShapes bounds the pod shapes (CPU, memory, GPUs, share, models) the
// placer keeps a tree for: about 232 KiB each at 5,000 nodes.
const maxShapes = 64

func newNodeIndex(pl *placement.IndexedPlacer) *nodeIndex {
	return &nodeIndex{placer: pl, c: cluster.New(), shapes: map[cluster.Pod]struct{}{}}
}

// candidates returns the names of the n best nodes for p (request req) by
// the placement core's ranking that pass the pod's static node checks
// (staticFit), and are DRA nodes when draOnly (a pod asking its GPUs by
// ResourceClaims), visiting at most visit ranked nodes; nil, meaning every
// node, when no ranked node passes within visit or none fits at all, so
// that the framework evaluates every node and reports each one's reason.
func (x *nodeIndex) candidates(nodes []fwk.NodeInfo, nc *nodeCache, p *v1.Pod, req *cluster.Pod, draOnly bool, n, visit int) (sets.Set[string], error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	shape := *req
	shape.Name = ""
	if _, ok := x.shapes[shape]; !ok && len(x.shapes) >= maxShapes || x.changes > 8*len(x.c.Nodes)+1024 {
		x.c = cluster.New() // rebuilt by sync; the placer drops its trees and log
	}
	if err := x.sync(nodes, nc); err != nil {
		return nil, err
	}
	x.shapes[shape] = struct{}{}
	check := newStaticFit(p)
	var names sets.Set[string]
	seen := 0
	for i := range x.placer.Ranked(x.c, req) {
		seen++
		if check.fits(x.infos[i].Node()) && (!draOnly || nc.draNode(x.c.Nodes[i].Name) != nil) {
			if names == nil {
				names = sets.New[string]()
			}
			names.Insert(x.c.Nodes[i].Name)
			if names.Len() == n {
				break
			}
		}
		if seen >= visit {
			break
		}
	}
	return names, nil
}

// sync brings the index up to the snapshot list nodes: a node whose
// NodeInfo or generation changed, or whose reservations did, is copied
// again and noted to the placer; a node added or removed rebuilds it.
func (x *nodeIndex) sync(nodes []fwk.NodeInfo, nc *nodeCache) error {
	changed := nc.drainChanged()
	if len(nodes) != len(x.c.Nodes) {
		return x.rebuild(nodes, nc)
	}
	for j, ni := range nodes {
		var i int
		if j < len(x.list) && x.list[j] == ni {
			i = x.slot[j]
		} else {
			k, ok := x.pos[ni.Node().Name]
			if !ok {
				return x.rebuild(nodes, nc)
			}
			i = k
			x.slot[j], x.list[j] = i, ni
		}
		if x.infos[i] != ni || x.gens[i] != ni.GetGeneration() {
			if err := x.refresh(i, ni, nc); err != nil {
				return err
			}
		}
	}
	for _, name := range changed {
		if i, ok := x.pos[name]; ok {
			if err := x.refresh(i, x.infos[i], nc); err != nil {
				return err
			}
		}
	}
	return nil
}

// refresh copies node i's state from ni with a new Version, and notes it.
func (x *nodeIndex) refresh(i int, ni fwk.NodeInfo, nc *nodeCache) error {
	st, err := nc.get(ni)
	if err != nil {
		return err
	}
	v := x.c.Nodes[i].Version + 1
	x.c.Nodes[i] = st.node
	x.c.Nodes[i].Version = v
	x.infos[i], x.gens[i] = ni, ni.GetGeneration()
	x.placer.Changed(i)
	x.changes++
	return nil
}

// rebuild makes a new cluster of nodes sorted by name; the placer starts
// its trees afresh on it.
func (x *nodeIndex) rebuild(nodes []fwk.NodeInfo, nc *nodeCache) error {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b fwk.NodeInfo) int {
		switch an, bn := a.Node().Name, b.Node().Name; {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	})
	c := &cluster.Cluster{Nodes: make([]cluster.Node, len(sorted))}
	x.pos = make(map[string]int, len(sorted))
	x.infos, x.gens = sorted, make([]int64, len(sorted))
	for i, ni := range sorted {
		st, err := nc.get(ni)
		if err != nil {
			x.c = cluster.New() // synced again from scratch next time
			return err
		}
		c.Nodes[i] = st.node
		c.Nodes[i].Version = 1
		x.pos[ni.Node().Name] = i
		x.gens[i] = ni.GetGeneration()
	}
	x.c, x.changes = c, 0
	clear(x.shapes)
	x.list, x.slot = slices.Clone(nodes), make([]int, len(nodes))
	for j, ni := range nodes {
		x.slot[j] = x.pos[ni.Node().Name]
	}
	return nil
}

// staticFit is the part of the default filters that depends on the pod
// and the Node object alone: NodeUnschedulable, TaintToleration and
// NodeAffinity (nodeSelector and required node affinity), with upstream's
// helpers (pkg/scheduler/framework/plugins/nodeunschedulable,
// tainttoleration and nodeaffinity). The framework still runs the filters
// themselves on the nodes named; this only keeps PreFilter from naming
// nodes they are sure to reject. Comparison operators of tolerations are
// evaluated (the more permissive reading), so a node the filters accept is
// never left out.
type staticFit struct {
	pod      *v1.Pod
	affinity nodeaffinity.RequiredNodeAffinity
	logger   klog.Logger
}

func newStaticFit(p *v1.Pod) *staticFit {
	return &staticFit{pod: p, affinity: nodeaffinity.GetRequiredNodeAffinity(p), logger: klog.Background()}
}

func (s *staticFit) fits(n *v1.Node) bool {
	if n == nil {
		return false
	}
	if n.Spec.Unschedulable && !v1helper.TolerationsTolerateTaint(s.logger, s.pod.Spec.Tolerations,
		&v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}, true) {
		return false
	}
	if _, untolerated := v1helper.FindMatchingUntoleratedTaint(s.logger, n.Spec.Taints, s.pod.Spec.Tolerations,
		helper.DoNotScheduleTaintsFilterFunc(), true); untolerated {
		return false
	}
	ok, err := s.affinity.Match(n)
	return ok || err != nil // an error is the filter's to report
}
