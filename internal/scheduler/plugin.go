// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package scheduler holds gpuplane's kube-scheduler framework plugin: a thin
// translation between the framework's objects (Pod, NodeInfo, CycleState)
// and the placement core's state. Every GPU decision (fit, score, GPU
// choice) is made by internal/placement, the code the simulator runs.
package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "GPUPlacement"

// stateKey is where PreFilter leaves the pod's request in CycleState.
const stateKey fwk.StateKey = Name

// Plugin places GPU pods through the placement core. It implements
// PreEnqueue (park.go), PreFilter, Filter, PostFilter, Score (with
// NormalizeScore), Reserve and Bind.
type Plugin struct {
	handle fwk.Handle
	policy placement.Policy
	tie    placement.TieBreak
	nodes  *nodeCache
	parked parkedSet            // pods parked at PreEnqueue and reported
	events events.EventRecorder // nil: the handle's (tests set it)

	// index ranks the nodes for PreFilter's candidates (nil when
	// Args.Candidates is 0); widened holds the pods whose candidates were
	// all filtered out once, which are evaluated on every node since.
	index      *nodeIndex
	candidates int
	widened    sync.Map // types.UID -> struct{}

	binds bindSlots // the binds in flight, at most maxBindsInFlight

	mu  sync.Mutex
	rng *rand.Rand // SelectGPUs of random policies; used under mu

	// dra is the framework's shared DRA manager (nil without one),
	// claims finds pods' claims (dra_claims.go) and draCache keeps the
	// DRA view between cycles (dra_cache.go).
	dra      fwk.SharedDRAManager
	claims   claimSource
	draCache *draCache
}

var (
	_ fwk.PreFilterPlugin   = (*Plugin)(nil)
	_ fwk.FilterPlugin      = (*Plugin)(nil)
	_ fwk.PostFilterPlugin  = (*Plugin)(nil)
	_ fwk.ScorePlugin       = (*Plugin)(nil)
	_ fwk.ReservePlugin     = (*Plugin)(nil)
	_ fwk.BindPlugin        = (*Plugin)(nil)
	_ fwk.EnqueueExtensions = (*Plugin)(nil)
)

// New is the plugin factory registered with kube-scheduler
// (app.WithPlugin(Name, New)). Its arguments are Args, from the profile's
// pluginConfig.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args Args
	if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	policy, tie, err := args.build()
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	pl := &Plugin{handle: h, policy: policy, tie: tie, nodes: newNodeCache(), binds: newBindSlots(maxBindsInFlight), rng: rand.New(rand.NewPCG(args.Seed, 0))}
	if pl.candidates = int(*args.Candidates); pl.candidates > 0 {
		pl.index = newNodeIndex(placement.NewIndexedPlacer(policy, tie, rand.New(rand.NewPCG(args.Seed, 1))))
		pl.nodes.track = true
	}
	registerMetrics.Do(func() { legacyregistry.MustRegister(AnnotationConflicts) })
	pl.wireDRA(h)
	if h != nil && h.SharedInformerFactory() != nil {
		// Reservations live until the pod is gone: they are the
		// scheduler's record of what it bound, against which the pods'
		// annotations are checked (conflict.go).
		_, err := h.SharedInformerFactory().Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if p, ok := obj.(*v1.Pod); ok {
					pl.observePod(nil, p)
				}
			},
			UpdateFunc: func(oldObj, obj any) {
				o, ok1 := oldObj.(*v1.Pod)
				p, ok2 := obj.(*v1.Pod)
				if ok1 && ok2 {
					pl.observePod(o, p)
				}
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if p, ok := obj.(*v1.Pod); ok {
					pl.nodes.forget(p.UID)
					pl.parked.remove(p.UID)
					pl.widened.Delete(p.UID)
				}
			},
		})
		if err != nil {
			return nil, err
		}
		_, err = h.SharedInformerFactory().Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if n, ok := obj.(*v1.Node); ok {
					pl.nodes.forgetNode(n.Name)
				}
			},
		})
		if err != nil {
			return nil, err
		}
	}
	klog.FromContext(ctx).Info("GPU placement plugin", "policy", policy.Name(), "tieBreak", args.TieBreak, "candidates", pl.candidates)
	return pl, nil
}

// Name returns the plugin's name.
func (pl *Plugin) Name() string { return Name }

// podState is the per-cycle state: the pod's request and the policy's
// per-pod precomputation.
type podState struct {
	pod   cluster.Pod
	score placement.State
	// claimGPUs: pod's GPUs are asked by ResourceClaims, so only DRA
	// nodes serve them.
	claimGPUs bool
	// migs are, for a claim of a MIG profile, the pod by the profile's
	// index in each node model's table, with their scores' states
	// (dra_claims.go addClaimGPUs); pod is one of them.
	migs map[int8]migVariant
	// plain: the claim asks one GPU of class gpu.nvidia.com and no
	// capacity; on a node whose GPUs are shared it holds what their
	// request policies' defaults consume (onNode).
	plain bool
}

type migVariant struct {
	pod   cluster.Pod
	score placement.State
}

// forNode returns the pod and score state for node n: for a MIG claim the
// variant of n's model (ok false when n's model has no such profile).
func (s *podState) forNode(n *cluster.Node) (*cluster.Pod, placement.State, bool) {
	if s.migs == nil {
		return &s.pod, s.score, true
	}
	for _, v := range s.migs {
		if n.ModelID >= 0 && v.pod.Models&(1<<uint(n.ModelID)) != 0 {
			return &v.pod, v.score, true
		}
	}
	return &s.pod, s.score, false
}

// onNode is pod p (s.pod or a MIG variant) as it asks node ns's GPUs: a
// plain claim (s.plain) on a DRA node whose shared GPUs give such a claim
// less than a GPU (nodeState.plain: NVIDIA's unlimited and integer
// share modes) asks that share, not a whole GPU. The score state is the
// pod's: built-in policies keep none (placement.State).
func (s *podState) onNode(p *cluster.Pod, ns *nodeState) *cluster.Pod {
	if !s.plain || !ns.dra || ns.plain <= 0 || ns.plain >= cluster.MilliGPU {
		return p
	}
	v := *p
	v.GPUMilli = ns.plain
	return &v
}

// Clone returns the state itself: it is not changed after PreFilter.
func (s *podState) Clone() fwk.StateData { return s }

func readState(cs fwk.CycleState) (*podState, *fwk.Status) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: reading cycle state: %w", Name, err))
	}
	s, ok := d.(*podState)
	if !ok {
		return nil, fwk.AsStatus(fmt.Errorf("%s: cycle state of type %T", Name, d))
	}
	return s, nil
}

// PreFilter translates the pod's request; a request the placement core
// cannot honour makes the pod unschedulable with the reason. PreEnqueue
// parks such pods before any cycle; this is for a profile that enables
// the plugin without PreEnqueue. Then it names the nodes worth
// evaluating (narrow): the Args.Candidates best by the placement core.
func (pl *Plugin) PreFilter(ctx context.Context, cs fwk.CycleState, p *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	req, err := checkRequest(p)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	if pl.dra != nil {
		sl, st, err := readDRA(pl.dra)
		if err != nil {
			return nil, fwk.AsStatus(fmt.Errorf("%s: %w", Name, err))
		}
		pl.nodes.updateDRA(pl.draCache.update(sl, st))
	}
	migs, plain, claimGPUs := pl.claims.addClaimGPUs(p, &req)
	state := &podState{pod: req, score: pl.policy.PreScore(&req), claimGPUs: claimGPUs, plain: plain}
	for k, v := range migs {
		if state.migs == nil {
			state.migs = map[int8]migVariant{}
		}
		state.migs[k] = migVariant{pod: v, score: pl.policy.PreScore(&v)}
	}
	cs.Write(stateKey, state)
	names, err := pl.narrow(p, &req, claimGPUs, nodes)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if names == nil {
		return nil, nil
	}
	cs.Write(narrowKey, narrowed{})
	return &fwk.PreFilterResult{NodeNames: names}, nil
}

// narrowKey marks in CycleState a cycle whose nodes PreFilter named.
const narrowKey fwk.StateKey = Name + "/narrowed"

type narrowed struct{}

func (narrowed) Clone() fwk.StateData { return narrowed{} }

// narrow returns the nodes the framework need evaluate for p: the
// placement core's Args.Candidates best nodes that pass p's static node
// checks (index.go). nil, every node, for a profile without candidates,
// for a gang pod (GangLocality's score must see every node), for a pod
// whose candidates were all filtered out before, and when the core finds
// no candidate (the framework then gives every node's reason and may
// preempt).
func (pl *Plugin) narrow(p *v1.Pod, req *cluster.Pod, draOnly bool, nodes []fwk.NodeInfo) (sets.Set[string], error) {
	if pl.index == nil || groupOf(p) != "" {
		return nil, nil
	}
	if _, ok := pl.widened.Load(p.UID); ok {
		return nil, nil
	}
	return pl.index.candidates(nodes, pl.nodes, p, req, draOnly, pl.candidates, 100*pl.candidates)
}

// PostFilter handles a cycle whose named candidates the other filters
// all rejected (a pod's inter-pod affinity, topology spread, volumes,
// ports, DRA claims): the framework then finds the pod unschedulable
// though other nodes may take it. The pod is marked to be evaluated on
// every node from now on and activated, and the cycle ends
// UnschedulableAndUnresolvable, so that DefaultPreemption, after this
// plugin in the profile's postFilter list, evicts nothing for a choice
// made on the candidates alone. In other cycles it does nothing.
func (pl *Plugin) PostFilter(ctx context.Context, cs fwk.CycleState, p *v1.Pod, _ fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if _, err := cs.Read(narrowKey); err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	pl.widened.Store(p.UID, struct{}{})
	if pl.handle != nil {
		pl.handle.Activate(klog.FromContext(ctx), map[string]*v1.Pod{p.Namespace + "/" + p.Name: p})
	}
	return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
		fmt.Sprintf("the %d best nodes for its GPUs were filtered out; every node is tried next", pl.candidates))
}

// PreFilterExtensions returns nil: preemption's what-if removes pods from
// a NodeInfo copy, whose new generation rebuilds the node state.
func (pl *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter asks the placement core whether the pod fits the node.
func (pl *Plugin) Filter(ctx context.Context, cs fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	s, st := readState(cs)
	if st != nil {
		return st
	}
	ns, err := pl.nodes.get(ni)
	if err != nil {
		return fwk.AsStatus(err)
	}
	if s.pod.NumGPU > 0 && ns.reason != "" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ns.reason)
	}
	if st := draFilter(s, ns); st != nil {
		return st
	}
	pod, _, ok := s.forNode(&ns.node)
	pod = s.onNode(pod, ns)
	if !ok {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("GPU model %s has no MIG profile of the claim's", ns.node.Model))
	}
	if ok, reason := cluster.Fits(&ns.node, pod); !ok {
		if ns.unhealthy != 0 {
			reason += fmt.Sprintf(" (GPUs %s unhealthy)", formatGPUs(ns.unhealthy))
		}
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	return nil
}

// Score is the policy's score of the node, as in the simulator.
func (pl *Plugin) Score(ctx context.Context, cs fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	s, st := readState(cs)
	if st != nil {
		return 0, st
	}
	ns, err := pl.nodes.get(ni)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	pod, score, ok := s.forNode(&ns.node)
	if !ok {
		return 0, nil
	}
	pod = s.onNode(pod, ns)
	var buf cluster.Pod
	return placement.Score(pl.policy, score, &ns.node, pod, &buf), nil
}

// ScoreExtensions returns the plugin: it normalises its scores.
func (pl *Plugin) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore rescales the scores as the simulator's Placer does and,
// under the "first" tie-break, leaves exactly one node with the highest
// score: the lexicographically smallest name among the best, which is the
// openb simulator's rule (see placement.TieFirst). It needs the profile to
// score with this plugin alone; other Score plugins add to the sum.
func (pl *Plugin) NormalizeScore(ctx context.Context, cs fwk.CycleState, p *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	if len(scores) == 0 {
		return nil
	}
	if _, ok := pl.policy.(placement.UniformRandom); ok {
		return nil // all 0: the framework picks uniformly at random
	}
	if nz, ok := pl.policy.(placement.Normalizer); ok {
		raw := make([]int64, len(scores))
		for i := range scores {
			raw[i] = scores[i].Score
		}
		nz.NormalizeScores(raw)
		for i := range scores {
			scores[i].Score = raw[i]
		}
	}
	if pl.tie != placement.TieFirst {
		return nil
	}
	best := 0
	for i := 1; i < len(scores); i++ {
		if scores[i].Score > scores[best].Score ||
			(scores[i].Score == scores[best].Score && scores[i].Name < scores[best].Name) {
			best = i
		}
	}
	for i := range scores {
		if i == best {
			scores[i].Score = fwk.MaxNodeScore
		} else {
			scores[i].Score = min(scores[i].Score, fwk.MaxNodeScore-1)
		}
	}
	return nil
}

// Reserve chooses the pod's GPUs on the node with the policy and holds
// them until the pod is bound (its annotation then records them) or
// Unreserve.
func (pl *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, p *v1.Pod, nodeName string) *fwk.Status {
	s, st := readState(cs)
	if st != nil {
		return st
	}
	if s.pod.NumGPU == 0 {
		return nil
	}
	ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(err)
	}
	// Build afresh, without this pod: the snapshot may already hold it
	// as assumed, without GPUs.
	ns, err := buildNodeWith(ni, p.UID, pl.nodes.held, pl.nodes.draNode(nodeName))
	if err != nil {
		return fwk.AsStatus(err)
	}
	if ns.dra {
		// DynamicResources allocates the devices and its PreBind writes
		// them into the claim; DefaultBinder binds (Bind skips).
		return nil
	}
	pl.mu.Lock()
	var buf cluster.Pod
	gpus := placement.SelectGPUs(pl.policy, s.score, &ns.node, &s.pod, &buf, pl.rng)
	pl.mu.Unlock()
	if err := ns.node.Add(&s.pod, gpus); err != nil {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("no GPUs free on node %s: %v", nodeName, err))
	}
	pl.nodes.reserve(p.UID, nodeName, gpus)
	cs.Write(choiceKey, &choice{gpus: gpus, uuids: ns.uuidsOf(gpus), share: s.pod.GPUMilli})
	return nil
}

// Unreserve releases the pod's GPUs.
func (pl *Plugin) Unreserve(ctx context.Context, cs fwk.CycleState, p *v1.Pod, nodeName string) {
	pl.nodes.forget(p.UID)
}

const choiceKey fwk.StateKey = Name + "/choice"

// choice is the GPUs Reserve chose.
type choice struct {
	gpus  cluster.GPUSet
	uuids []string
	share int64
}

func (c *choice) Clone() fwk.StateData { return c }

// Bind binds a GPU pod with its chosen GPUs (gpuresource.AnnotationGPUs,
// gpuresource.AnnotationGPUUUIDs, gpuresource.AnnotationGPUShare) as annotations of the Binding,
// which the API server merges into the pod in the same write: one request
// per pod, as DefaultBinder makes, and no moment when a pod is bound
// without its GPUs written. Pods without GPUs are left to DefaultBinder,
// which must come after this plugin in the profile's bind list.
func (pl *Plugin) Bind(ctx context.Context, cs fwk.CycleState, p *v1.Pod, nodeName string) *fwk.Status {
	d, err := cs.Read(choiceKey)
	if err != nil {
		return fwk.NewStatus(fwk.Skip)
	}
	c := d.(*choice)
	ann := map[string]string{
		gpuresource.AnnotationGPUs:     formatGPUs(c.gpus),
		gpuresource.AnnotationGPUShare: strconv.FormatInt(c.share, 10),
	}
	if c.uuids != nil {
		ann[gpuresource.AnnotationGPUUUIDs] = strings.Join(c.uuids, ",")
	}
	if err := pl.binds.acquire(ctx); err != nil {
		return fwk.AsStatus(fmt.Errorf("binding pod %s/%s: %w", p.Namespace, p.Name, err))
	}
	defer pl.binds.release()
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Annotations: ann},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if ac := pl.handle.APICacher(); ac != nil {
		onFinish, err := ac.BindPod(binding)
		if err != nil {
			return fwk.AsStatus(err)
		}
		if err := ac.WaitOnFinish(ctx, onFinish); err != nil {
			return fwk.AsStatus(err)
		}
		return nil
	}
	if err := schedutil.BindPod(ctx, pl.handle.ClientSet(), binding); err != nil {
		return fwk.AsStatus(fmt.Errorf("binding pod %s/%s with its GPUs: %w", p.Namespace, p.Name, err))
	}
	return nil
}

// EventsToRegister: a pod rejected for lack of GPUs may fit after a pod
// leaves or a node is added or changes; a pod parked for its request
// (PreEnqueue) only after its own update changes the request.
func (pl *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: pl.skipParked},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeLabel | fwk.UpdateNodeAnnotation}, QueueingHintFn: pl.skipParked},
		{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}, QueueingHintFn: pl.isSchedulableAfterPodUpdate},
		// On DRA nodes GPUs come free when a claim is deallocated or
		// deleted, and appear or recover with the slices.
		{Event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update | fwk.Delete}, QueueingHintFn: pl.skipParked},
		{Event: fwk.ClusterEvent{Resource: fwk.ResourceSlice, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: pl.skipParked},
	}, nil
}
