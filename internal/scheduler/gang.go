// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gang/workload"
)

// GangLocalityName is the locality plugin's name in a
// KubeSchedulerConfiguration.
const GangLocalityName = "GangLocality"

// GangLocalityArgs are the locality plugin's arguments.
type GangLocalityArgs struct {
	// TopologyKeys are node labels naming a topology domain, most local
	// first. Default: gpu-feature-discovery's NVLink clique
	// ("nvidia.com/gpu.clique", nodes joined by multi-node NVLink), then
	// "topology.kubernetes.io/rack".
	TopologyKeys []string `json:"topologyKeys"`
}

// GangLocality keeps the pods of a gang together: for a pod of a PodGroup
// (spec.schedulingGroup), a node scores 100 when it shares the value of a
// topology label with a node that already holds a pod of the same group
// (bound or assumed), judged by the first key in TopologyKeys that the
// group's nodes carry; other nodes score 0. Pods of no group are skipped.
// Whether the gang fits at all stays upstream's GangScheduling decision;
// which GPUs of a node, GPUPlacement's. Upstream's
// TopologyAwareWorkloadScheduling (alpha in 1.37) makes a domain a hard
// requirement; this is the soft preference.
type GangLocality struct {
	handle fwk.Handle
	keys   []string
}

var (
	_ fwk.PreScorePlugin = (*GangLocality)(nil)
	_ fwk.ScorePlugin    = (*GangLocality)(nil)
)

// NewGangLocality is the locality plugin's factory.
func NewGangLocality(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args GangLocalityArgs
	if err := frameworkruntime.DecodeInto(obj, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", GangLocalityName, err)
	}
	if len(args.TopologyKeys) == 0 {
		args.TopologyKeys = []string{gpuresource.LabelGPUClique, "topology.kubernetes.io/rack"}
	}
	for _, k := range args.TopologyKeys {
		if k == "" {
			return nil, fmt.Errorf("%s args: empty topology key", GangLocalityName)
		}
	}
	warnGangsOff.Do(func() { warnIfGangsOff(h) })
	return &GangLocality{handle: h, keys: args.TopologyKeys}, nil
}

var warnGangsOff sync.Once

// warnIfGangsOff says in the log, once at start, when gangs cannot work:
// the scheduler's GenericWorkload gate is off (kube-scheduler then runs
// no GangScheduling plugin), or the API server does not serve the
// Workload API; either way gang pods would be placed one by one in
// silence.
func warnIfGangsOff(h fwk.Handle) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		klog.ErrorS(nil, "gangs off: the scheduler runs without --feature-gates=GenericWorkload=true (beta, off by default in Kubernetes 1.37); pods of a PodGroup are scheduled one by one")
	}
	if h == nil || h.ClientSet() == nil {
		return
	}
	if err := workload.Served(h.ClientSet().Discovery()); err != nil {
		klog.ErrorS(err, "gangs off")
	}
}

// Name returns the plugin's name.
func (g *GangLocality) Name() string { return GangLocalityName }

const localityKey fwk.StateKey = GangLocalityName

// domains is the topology label and the values of the nodes holding the
// pod's group.
type domains struct {
	key    string
	values map[string]bool
}

func (d *domains) Clone() fwk.StateData { return d }

// groupOf returns the pod's PodGroup name, or "".
func groupOf(p *v1.Pod) string {
	if p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return *p.Spec.SchedulingGroup.PodGroupName
}

// PreScore finds the nodes that hold the pod's group and their domain.
func (g *GangLocality) PreScore(ctx context.Context, cs fwk.CycleState, p *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	group := groupOf(p)
	if group == "" {
		return fwk.NewStatus(fwk.Skip)
	}
	all, err := g.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return fwk.AsStatus(err)
	}
	var held []*v1.Node
	for _, ni := range all {
		for _, pi := range ni.GetPods() {
			q := pi.GetPod()
			if q.UID != p.UID && q.Namespace == p.Namespace && groupOf(q) == group {
				held = append(held, ni.Node())
				break
			}
		}
	}
	d := localDomains(g.keys, held)
	if d == nil {
		return fwk.NewStatus(fwk.Skip)
	}
	cs.Write(localityKey, d)
	return nil
}

// localDomains returns the first key that a node of held carries and the
// values the nodes carry for it; nil when none does.
func localDomains(keys []string, held []*v1.Node) *domains {
	for _, k := range keys {
		vals := map[string]bool{}
		for _, n := range held {
			if v, ok := n.Labels[k]; ok {
				vals[v] = true
			}
		}
		if len(vals) > 0 {
			return &domains{key: k, values: vals}
		}
	}
	return nil
}

// Score is 100 for a node in a domain of the group, else 0.
func (g *GangLocality) Score(ctx context.Context, cs fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	s, err := cs.Read(localityKey)
	if err != nil {
		return 0, nil
	}
	d := s.(*domains)
	if v, ok := ni.Node().Labels[d.key]; ok && d.values[v] {
		return fwk.MaxNodeScore, nil
	}
	return 0, nil
}

// ScoreExtensions returns nil: scores are 0 or 100 already.
func (g *GangLocality) ScoreExtensions() fwk.ScoreExtensions { return nil }
