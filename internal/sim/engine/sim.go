// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package engine is gpuplane's simulation engine: it replays a workload on a
// modelled cluster through the placement core (internal/placement) and
// measures GPU allocation ratio, fragmentation, queueing delay and cost,
// for several policies and seeds at once.
//
// Two experiments:
//   - fill, the method of Weng et al. (USENIX ATC 2023): the trace's pods
//     in random order, then pods sampled from it uniformly with replacement,
//     until the arrived GPU demand reaches Inflate × capacity; pods never
//     leave; a pod that fits nowhere fails and the run goes on.
//   - replay: a discrete-event replay in trace time (see replay.go).
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuplane/gpuplane/internal/cluster"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Config is one simulation: a workload, the experiment and the policies.
type Config struct {
	// Mode is "fill" or "replay".
	Mode string
	// Policies are placement.Names entries.
	Policies []string
	// Seeds runs per policy, with seeds Seed, Seed+1, ...
	Seeds int
	Seed  uint64
	// Inflate is the arrived GPU demand, as a multiple of the cluster's GPU
	// capacity, at which fill stops (the paper uses 1.3).
	Inflate float64
	// Popularity is the share of pods whose shapes make up FGD's target
	// workload (the paper uses 0.95).
	Popularity float64
	// TieBreak chooses among equally scored nodes.
	TieBreak placement.TieBreak
	// GPUAPI says who chooses the GPUs inside the chosen node: the policy
	// (device plugin, the default) or upstream's DRA allocator
	// (placement.WithGPUAPI).
	GPUAPI placement.GPUAPI
	// Parallel is the number of runs at once; 0 means GOMAXPROCS.
	Parallel int
	// Progress, if set, receives progress while runs are going: on a
	// terminal one line rewritten every second with runs done, total and
	// the time left; elsewhere a line every 30 s (IsTerminal).
	Progress io.Writer
	// Placements makes every Result hold what became of each pod.
	Placements bool
	// NodeDetail keeps ModelUse.NodeAllocation in the first seed's result
	// of each policy (for the HTML report).
	NodeDetail bool
	// Teams, replay only, admits GPU pods by team quota with Kueue's
	// semantics before placing them (teams.go); nil: no quotas.
	Teams *Teams
	// Once, fill only, submits the trace's pods once each, in random
	// order, with no sampling and no trimming: the workload stays the
	// same whatever the cluster's size (sizing); Inflate is then unused.
	Once bool
	// Gangs, replay only and without Teams, starts the pods of each gang
	// (NAME#0, NAME#1, ...: GangOf) together, when all have arrived and
	// all fit, as Kubernetes' gang scheduling places a training job whose
	// PodGroup gpuplane-webhook made (internal/gang); false: each pod
	// alone.
	Gangs bool
}

// Point is one sample of a fill run, taken as demand arrives.
type Point struct {
	// ArrivedRatio is arrived GPU demand / GPU capacity.
	ArrivedRatio float64 `json:"arrived_ratio"`
	// AllocationRatio is allocated / total milli-GPU.
	AllocationRatio float64 `json:"gpu_allocation_ratio"`
	// FragmentationRatio is fragmented / idle milli-GPU.
	FragmentationRatio float64 `json:"fragmentation_ratio"`
}

// Result is one run of one policy with one seed.
type Result struct {
	Policy string `json:"policy"`
	Seed   uint64 `json:"seed"`
	Mode   string `json:"mode"`
	// Pods is the number of pods that arrived.
	Pods int `json:"pods"`
	// TotalGPUMilli is the cluster's GPU capacity; ArrivedGPUMilli the GPU
	// demand of all arrived pods; AllocatedGPUMilli what is allocated at the
	// end of the run; all in milli-GPU.
	TotalGPUMilli     int64 `json:"total_gpu_milli"`
	ArrivedGPUMilli   int64 `json:"arrived_gpu_milli"`
	AllocatedGPUMilli int64 `json:"allocated_gpu_milli"`
	// GPUAllocationRatio is AllocatedGPUMilli / TotalGPUMilli (0..1).
	GPUAllocationRatio float64 `json:"gpu_allocation_ratio"`
	// UnallocatedGPUs is the idle GPU capacity at the end, in GPUs.
	UnallocatedGPUs float64 `json:"unallocated_gpus"`
	// FailedPods: fill: pods that fit nowhere on arrival; replay: pods
	// never started (ReplayStats.NeverStarted). Both count pods that fit
	// no node even of the empty cluster.
	FailedPods int `json:"failed_pods"`
	// Failed groups the failed pods by reason and shape, most pods first.
	Failed []FailedGroup `json:"failed,omitempty"`
	// FragmentationRatio is the fragmented share of idle GPU capacity at
	// the end, against the target workload (Weng et al., 2023).
	FragmentationRatio float64 `json:"fragmentation_ratio"`
	// IdleUSDPerHour is what the GPUs idle at the end cost, in USD per
	// hour (internal/cost/prices prices).
	IdleUSDPerHour float64 `json:"idle_usd_per_hour"`
	// WallSeconds is the run's wall-clock time.
	WallSeconds float64 `json:"wall_seconds"`
	// Curve samples the fill run as demand arrives.
	Curve []Point `json:"curve,omitempty"`
	// Replay holds the replay metrics.
	Replay *ReplayStats `json:"replay,omitempty"`
	// Placements, with Config.Placements, holds one entry per arrived pod
	// in arrival order.
	Placements []Placement `json:"-"`
	// ByModel is the allocation by GPU model at the end, models by name.
	ByModel []ModelUse `json:"by_model,omitempty"`
	// Teams is each team's share of a replay with Config.Teams, in the
	// teams file's order.
	Teams []TeamStats `json:"teams,omitempty"`
	// QuotaEvents are the admissions and preemptions of a replay with
	// Config.Teams and Config.Placements, in order.
	QuotaEvents []QuotaEvent `json:"quota_events,omitempty"`
	// Sharing holds the sharing metrics of a workload made by
	// Workload.WithSharing.
	Sharing *SharingStats `json:"sharing,omitempty"`
}

// Placement is what became of one pod in one run.
type Placement struct {
	// Seq is the pod's arrival number in the run, from 1: fill samples
	// pods with replacement, so one pod may arrive more than once.
	Seq int
	Pod string
	// Node and GPUs are where it was placed; Node is "" for a failed pod.
	Node string
	GPUs cluster.GPUSet
	// GPUMilli is the milli-GPU it holds on each of its GPUs.
	GPUMilli int64
	// StartSeconds (replay) is the trace time it was placed, in seconds;
	// NaN in fill and for a pod never started.
	StartSeconds float64
	// WaitSeconds (replay) is how long it waited: start − creation_time,
	// or for a pod never started the time it spent in the queue; NaN in
	// fill.
	WaitSeconds float64
	// Reason is why it failed (Reason* constants), "" if it was placed.
	Reason string
}

// Summary is the mean and standard deviation over seeds of one policy.
type Summary struct {
	Policy string `json:"policy"`
	Runs   int    `json:"runs"`
	// GPUAllocationRatioMean and Std are the mean and population standard
	// deviation over the seeds; the other fields are means over the seeds.
	GPUAllocationRatioMean float64 `json:"gpu_allocation_ratio_mean"`
	GPUAllocationRatioStd  float64 `json:"gpu_allocation_ratio_std"`
	FragmentationRatioMean float64 `json:"fragmentation_ratio_mean"`
	FailedPodsMean         float64 `json:"failed_pods_mean"`
	UnallocatedGPUsMean    float64 `json:"unallocated_gpus_mean"`
	IdleUSDPerHourMean     float64 `json:"idle_usd_per_hour_mean"`
	// Replay only: mean over seeds.
	QueueDelayMeanSeconds float64 `json:"queue_delay_mean_seconds,omitempty"`
	QueueDelayP95Seconds  float64 `json:"queue_delay_p95_seconds,omitempty"`
	TimeWeightedAllocMean float64 `json:"time_weighted_gpu_allocation_ratio,omitempty"`
}

// Report is a whole simulation's output.
type Report struct {
	// Source names the workload's inputs.
	Source   string    `json:"source"`
	Mode     string    `json:"mode"`
	Nodes    int       `json:"nodes"`
	GPUs     int       `json:"gpus"`
	Pods     int       `json:"trace_pods"`
	Inflate  float64   `json:"inflate,omitempty"`
	Results  []Result  `json:"results"`
	Summary  []Summary `json:"summary"`
	WallTime float64   `json:"wall_seconds"`
	// Version is the gpuplane build that ran (internal/version).
	Version string `json:"version,omitempty"`
	// Params are the run's settings; Inputs what it read.
	Params *Params `json:"params,omitempty"`
	Inputs []Input `json:"inputs,omitempty"`
	// Sharing compares sharing modes (gpuplane simulate --sharing) and
	// holds every mode's runs (SharingReport.Modes); Results and Summary
	// are the first mode's.
	Sharing *SharingReport `json:"sharing,omitempty"`
	// SnapshotPods (simulate --snapshot) is what became of each pod the
	// run placed, per policy, in the snapshot's order.
	SnapshotPods []PodOutcome `json:"snapshot_pods,omitempty"`
	// Recommendation is the best policy and sharing mode for the run's
	// goal, its cluster and cost, and the margin to the runner-up
	// (report.Recommend).
	Recommendation *Recommendation `json:"recommendation,omitempty"`
}

// PodOutcome is what became of one pod under one policy over its seeds.
type PodOutcome struct {
	Pod    string `json:"pod"`
	Policy string `json:"policy"`
	// Placed is in how many of Runs runs it got a node.
	Placed int `json:"placed_runs"`
	Runs   int `json:"runs"`
	// Node and GPUs (indices) are where the first seed placed it; Reason
	// why the first seed did not (Reason* constants).
	Node   string `json:"node,omitempty"`
	GPUs   []int  `json:"gpus,omitempty"`
	Reason string `json:"failed_reason,omitempty"`
}

// Params are a simulation's settings, as its report records them.
type Params struct {
	Policies  []string `json:"policies"`
	Seeds     int      `json:"seeds"`
	FirstSeed uint64   `json:"first_seed"`
	TieBreak  string   `json:"tie_break"`
	// GPUAPI is device-plugin or dra (Config.GPUAPI); absent: device-plugin.
	GPUAPI string `json:"gpu_api,omitempty"`
	// Gangs: pods NAME#i started together (Config.Gangs).
	Gangs      bool    `json:"gangs,omitempty"`
	Popularity float64 `json:"popularity"`
	// Inflate is fill's stop, a multiple of GPU capacity; 0 in replay.
	Inflate float64 `json:"inflate,omitempty"`
	// PricesUSDPerGPUHour is the price of each GPU model of the cluster,
	// in USD per GPU-hour, named as the node list writes it.
	PricesUSDPerGPUHour map[string]float64 `json:"prices_usd_per_gpu_hour"`
}

// Input is one input of a simulation: Role is nodes, pods or prices;
// Name the file's path (or what generated it); Bytes its size and SHA256
// its hex digest, absent for a generated input.
type Input struct {
	Role   string `json:"role"`
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// PodsSHA256 returns the SHA-256 of the pod list (Inputs, role "pods"), in
// hex; "" when the pods were generated or not recorded.
func (r *Report) PodsSHA256() string {
	for _, in := range r.Inputs {
		if in.Role == "pods" {
			return in.SHA256
		}
	}
	return ""
}

// Workload is a prepared cluster template and pod list.
type Workload struct {
	podsFile  string
	gpuDemand int64 // Σ GPU requests of the trace's pods, milli-GPU
	template  *cluster.Cluster
	pods      []cluster.Pod
	specs     []trace.PodSpec
	target    *placement.TargetWorkload
	prices    []float64 // USD per GPU-hour by cluster model ID
	// unfit[i] is why pod i fits no node of the empty cluster
	// (ReasonTooLarge, ReasonNoModel, ReasonNoGPUNodes), "" if it fits one.
	unfit    []string
	warnings []string
	// sharing is the mode of a workload made by WithSharing (zero
	// otherwise: no sharing metrics); training[i] says pod i asked for
	// whole GPUs.
	sharing  Sharing
	training []bool
	// asked are the pods as the trace asks for them, before WithSharing
	// (nil: pods): fill's arrived demand counts these, so that every mode
	// sees the same pods arrive.
	asked []cluster.Pod
	bound bool // Bind put pods on the template
	// noDynamicMIG[i] marks node i a DRA node whose GPUs publish no MIG
	// placements (trace.NodeSpec.NoDynamicMIG): MIG on demand leaves it
	// whole. nil: none.
	noDynamicMIG []bool
	// migMode[i] is node i's trace.NodeSpec.MIGModeGPUs (nil: none set).
	migMode []uint64
}

// askedPods returns the pods as the trace asks for them.
func (w *Workload) askedPods() []cluster.Pod {
	if w.asked != nil {
		return w.asked
	}
	return w.pods
}

// maxUnfitListed is how many pods that fit no node Warnings names one by
// one.
const maxUnfitListed = 5

// Prepare builds a workload from node and pod specs, its GPUs priced by
// prices (nil: cost.Default()). nodesFile and podsFile name the inputs in
// errors and warnings. A pod that fits no node of the empty cluster is no
// error: every run counts it as arrived demand and as a failed pod, with
// its reason, as the paper's simulator does (hkust-adsl/
// kubernetes-scheduler-simulator, pkg/simulator/simulator.go, SchedulePods:
// a pod adds to arrPodGpuMilli before it is created and, unscheduled, goes
// to the failed pods); Warnings lists the first few. GPU model names
// compare case-insensitively (gpu.ModelID); a node's model is shown as the
// node list first writes it.
func Prepare(nodesFile string, nodes []trace.NodeSpec, podsFile string, pods []trace.PodSpec, popularity float64, prices *cost.Prices) (*Workload, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no nodes", nodesFile)
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("%s: no pods", podsFile)
	}
	if prices == nil {
		prices = cost.Default()
	}
	c, err := templateCluster(nodesFile, nodes)
	if err != nil {
		return nil, err
	}
	w := &Workload{podsFile: podsFile, template: c, specs: pods, pods: make([]cluster.Pod, len(pods)), unfit: make([]string, len(pods))}
	for i, n := range nodes {
		if n.MIGModeGPUs != 0 {
			if w.migMode == nil {
				w.migMode = make([]uint64, len(nodes))
			}
			w.migMode[i] = n.MIGModeGPUs
		}
		if n.NoDynamicMIG {
			if w.noDynamicMIG == nil {
				w.noDynamicMIG = make([]bool, len(nodes))
			}
			w.noDynamicMIG[i] = true
		}
	}
	if err := w.preparePods(nodesFile, podsFile); err != nil {
		return nil, err
	}
	w.target = placement.NewTargetWorkload(w.pods, popularity)
	w.prices = modelPrices(c, prices)
	return w, nil
}

// templateCluster builds the empty cluster of nodes; a node's model is
// shown as the node list first writes it.
func templateCluster(nodesFile string, nodes []trace.NodeSpec) (*cluster.Cluster, error) {
	c := cluster.New()
	spelling := map[int]string{} // model ID -> the node list's first spelling
	for _, n := range nodes {
		i, err := c.AddNode(n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", nodesFile, n.Line, err)
		}
		c.Nodes[i].Shared = n.Shared
		if n.MIG != nil && n.GPUs > 0 {
			// The GPUs MIG-enabled in the cluster read (a snapshot's), or
			// given a layout (a cluster YAML's): the first ones until
			// Bind puts the running pods in place.
			k := n.GPUs
			if n.MIGGPUs > 0 {
				k = n.MIGGPUs
			}
			c.Nodes[i].MIGOnly = cluster.GPUSet(1<<uint(k) - 1)
			if k == 64 {
				c.Nodes[i].MIGOnly = ^cluster.GPUSet(0)
			}
		}
		if id := c.Nodes[i].ModelID; id >= 0 {
			if _, ok := spelling[id]; !ok {
				spelling[id] = n.Model
			}
			c.Nodes[i].Model = spelling[id]
		}
	}
	return c, nil
}

// preparePods turns w's pod specs into pods, finds those that fit no node
// of the empty cluster, and warns of them and of GPU models no node has.
func (w *Workload) preparePods(nodesFile, podsFile string) error {
	c := w.template
	var clusterModels cluster.ModelSet
	for i := range c.Nodes {
		if c.Nodes[i].ModelID >= 0 {
			clusterModels |= 1 << uint(c.Nodes[i].ModelID)
		}
	}
	absent := absentModels{byID: map[int]*absentModel{}}
	fitsSome := map[cluster.Pod]bool{}
	var unfit []string
	nUnfit := 0
	for i, s := range w.specs {
		p, err := podOf(podsFile, &s)
		if err != nil {
			return err
		}
		w.pods[i] = p
		w.gpuDemand += p.TotalGPUMilli()
		if p.Models&^clusterModels != 0 {
			absent.add(&s, clusterModels)
		}
		if fitsSomeNode(c, p, fitsSome) {
			continue
		}
		var why string
		w.unfit[i], why = unfitReason(&p, &s, clusterModels, nodesFile)
		nUnfit++
		if len(unfit) < maxUnfitListed {
			unfit = append(unfit, fmt.Sprintf("%s:%d: pod %s (cpu_milli %d, memory_mib %d, num_gpu %d, gpu_milli %d) %s: %s",
				podsFile, s.Line, trace.Quote(s.Name), s.CPUMilli, s.MemoryMiB, s.NumGPU, s.GPUMilli, why, w.unfit[i]))
		}
	}
	w.warnings = append(w.warnings, absent.warnings(nodesFile, podsFile)...)
	w.warnings = append(w.warnings, unfit...)
	if nUnfit > 0 {
		w.warnings = append(w.warnings, fmt.Sprintf("%d of %d pods of %s fit no node of %s even when it is empty (%d listed above): each run counts them as arrived demand and as failed pods",
			nUnfit, len(w.specs), podsFile, nodesFile, len(unfit)))
	}
	return nil
}

// podOf is the pod that spec s asks for.
func podOf(podsFile string, s *trace.PodSpec) (cluster.Pod, error) {
	p, err := s.Pod(podsFile)
	if err != nil {
		return cluster.Pod{}, err
	}
	if err := p.Validate(); err != nil {
		return cluster.Pod{}, fmt.Errorf("%s:%d: pod %s: %w", podsFile, s.Line, trace.Quote(s.Name), err)
	}
	return p, nil
}

// fitsSomeNode reports whether p fits some node of the empty cluster c,
// remembered in seen by the pod's shape.
func fitsSomeNode(c *cluster.Cluster, p cluster.Pod, seen map[cluster.Pod]bool) bool {
	key := p
	key.Name = ""
	ok, known := seen[key]
	if !known {
		for j := range c.Nodes {
			if cluster.Feasible(&c.Nodes[j], &p) {
				ok = true
				break
			}
		}
		seen[key] = ok
	}
	return ok
}

// unfitReason is why pod p of spec s fits no node of nodesFile: the
// reason and, for the warning, the words.
func unfitReason(p *cluster.Pod, s *trace.PodSpec, clusterModels cluster.ModelSet, nodesFile string) (reason, why string) {
	switch {
	case p.NumGPU > 0 && clusterModels == 0:
		return ReasonNoGPUNodes, "requests GPUs and no node of " + nodesFile + " has any"
	case p.Models != 0 && p.Models&clusterModels == 0:
		return ReasonNoModel, fmt.Sprintf("allows GPU models %s, none of which %s has", trace.Quote(s.GPUSpec), nodesFile)
	}
	why = "is larger than every node of " + nodesFile
	if p.NumGPU > 0 && p.Models != 0 {
		why += " with a GPU model it allows (" + trace.Quote(s.GPUSpec) + ")"
	}
	return ReasonTooLarge, why
}

// absentModels are the models that gpu_spec names and no node has: pods,
// first line, spelling, in the order first named.
type absentModels struct {
	byID map[int]*absentModel
	ids  []int
}

type absentModel struct {
	pods, line int
	name       string
}

// add counts the models of s that the cluster lacks.
func (a *absentModels) add(s *trace.PodSpec, clusterModels cluster.ModelSet) {
	for _, m := range strings.Split(s.GPUSpec, "|") {
		m = strings.TrimSpace(m)
		id, err := gpu.ModelID(m)
		if m == "" || err != nil || clusterModels&(1<<uint(id)) != 0 {
			continue
		}
		if a.byID[id] == nil {
			a.byID[id] = &absentModel{line: int(s.Line), name: m}
			a.ids = append(a.ids, id)
		}
		a.byID[id].pods++
	}
}

// warnings names each absent model.
func (a *absentModels) warnings(nodesFile, podsFile string) []string {
	names := "gpu_spec names"
	if nodesFile == podsFile { // a Kubernetes snapshot gives both
		names = "the GPU model constraints (annotation, nodeSelector, node affinity) name"
	}
	var ws []string
	for _, id := range a.ids {
		m := a.byID[id]
		ws = append(ws, fmt.Sprintf("%s has no GPU model %s, which %s in %d pods (first %s:%d)",
			nodesFile, trace.Quote(m.name), names, m.pods, podsFile, m.line))
	}
	return ws
}

// modelPrices maps the model IDs of c to prices, looked up by the
// catalog's spelling; a model without a price costs 0.
func modelPrices(c *cluster.Cluster, prices *cost.Prices) []float64 {
	byID := make([]float64, 64)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.ModelID >= 0 {
			byID[n.ModelID] = prices.USDPerHour(gpu.ModelName(n.ModelID))
		}
	}
	return byID
}

// Prices returns the price of each GPU model of the cluster in USD per
// GPU-hour, by the name the node list writes.
func (w *Workload) Prices() map[string]float64 {
	out := map[string]float64{}
	for i := range w.template.Nodes {
		if n := &w.template.Nodes[i]; n.ModelID >= 0 {
			out[n.Model] = w.prices[n.ModelID]
		}
	}
	return out
}

// Warnings returns what Prepare found questionable but not wrong: pods
// that fit no node (the first few, then a count), and GPU models that
// gpu_spec names and no node has.
func (w *Workload) Warnings() []string { return w.warnings }

// UnfitPods returns how many of the trace's pods fit no node even of the
// empty cluster (Warnings lists the first few).
func (w *Workload) UnfitPods() int {
	n := 0
	for _, u := range w.unfit {
		if u != "" {
			n++
		}
	}
	return n
}

// FitsNoNode returns how many of the workload's pods, as they are asked
// (after WithSharing: rounded up, or turned into a MIG profile), fit no
// node of its empty cluster as laid out (MIG-enabled GPUs serve only MIG
// pods). Unlike UnfitPods, which Prepare counts once, it counts anew.
// first names the first such pod as "file:line: pod name" ("" if none).
func (w *Workload) FitsNoNode() (n int, first string) {
	fits := map[cluster.Pod]bool{}
	for i := range w.pods {
		key := w.pods[i]
		key.Name = ""
		ok, seen := fits[key]
		if !seen {
			for j := range w.template.Nodes {
				if cluster.Feasible(&w.template.Nodes[j], &w.pods[i]) {
					ok = true
					break
				}
			}
			fits[key] = ok
		}
		if !ok {
			if n == 0 {
				first = fmt.Sprintf("%s:%d: pod %s", w.podsFile, w.specs[i].Line, trace.Quote(w.specs[i].Name))
			}
			n++
		}
	}
	return n, first
}

// price returns the price of one GPU of the cluster's model id (a node's
// ModelID; -1 for a node without GPUs), in USD per GPU-hour.
func (w *Workload) price(id int) float64 {
	if id < 0 {
		return 0
	}
	return w.prices[id]
}

// Target returns the workload's target workload (FGD's and the
// fragmentation metric's).
func (w *Workload) Target() *placement.TargetWorkload { return w.target }

// newCluster returns a fresh copy of the empty cluster with its nodes in
// a random order drawn from rng. Under placement.TieFirst the order decides
// ties, as the random node-name prefixes of the openb simulator do (it
// names node i "%04d-<name>" after a random permutation and its scheduler
// takes the lexicographically smallest of equally scored nodes).
func (w *Workload) newCluster(rng *rand.Rand) *cluster.Cluster {
	c := *w.template
	c.Nodes = make([]cluster.Node, len(w.template.Nodes))
	for i, j := range rng.Perm(len(c.Nodes)) {
		c.Nodes[i] = w.template.Nodes[j]
		c.Nodes[i].GPUFree = append([]int64(nil), w.template.Nodes[j].GPUFree...)
		if w.template.Nodes[j].MIG != nil {
			c.Nodes[i].MIG = append([]cluster.MIGGPU(nil), w.template.Nodes[j].MIG...)
		}
	}
	return &c
}

// checkConfig refuses a configuration Run cannot run on w.
func checkConfig(w *Workload, cfg Config) error {
	if cfg.Seeds < 1 {
		return errors.New("seeds must be at least 1")
	}
	if cfg.Mode != "fill" && cfg.Mode != "replay" {
		return fmt.Errorf("unknown mode %q (fill or replay)", cfg.Mode)
	}
	if cfg.Mode == "fill" && !cfg.Once && !(cfg.Inflate > 0 && cfg.Inflate <= 100) {
		return fmt.Errorf("inflate %v out of range (0, 100]", cfg.Inflate)
	}
	if len(cfg.Policies) == 0 {
		return errors.New("no policy")
	}
	if cfg.Teams != nil && cfg.Mode != "replay" {
		return errors.New("teams apply to replay only")
	}
	if cfg.Gangs && (cfg.Mode != "replay" || cfg.Teams != nil) {
		return errors.New("gangs apply to replay without teams only (teams admit a gang whole already)")
	}
	if w.bound && cfg.Mode != "fill" {
		return errors.New("pods bound before the run (Bind) apply to fill only")
	}
	if cfg.Teams != nil && cfg.Teams.PodTeam != nil && len(cfg.Teams.PodTeam) != len(w.specs) {
		return fmt.Errorf("teams: %d pod teams for %d pods", len(cfg.Teams.PodTeam), len(w.specs))
	}
	for _, p := range cfg.Policies {
		if _, err := placement.New(p, w.target); err != nil {
			return err
		}
	}
	return nil
}

// Check returns the error Run would refuse w and cfg with before it runs
// anything (a configuration it cannot run, a workload the mode cannot
// use); nil if none.
func (w *Workload) Check(cfg Config) error {
	if err := checkConfig(w, cfg); err != nil {
		return err
	}
	return w.check(cfg.Mode, cfg.Once)
}

// Run runs every policy with every seed, in parallel, and summarises.
func Run(ctx context.Context, w *Workload, cfg Config) (*Report, error) {
	if err := w.Check(cfg); err != nil {
		return nil, err
	}
	type job struct {
		policy string
		seed   uint64
		idx    int
	}
	var jobs []job
	for _, p := range cfg.Policies {
		for s := 0; s < cfg.Seeds; s++ {
			jobs = append(jobs, job{p, cfg.Seed + uint64(s), len(jobs)})
		}
	}
	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	var done atomic.Int64
	stop := make(chan struct{})
	progressDone := make(chan struct{})
	if cfg.Progress != nil {
		go func() {
			progress(cfg.Progress, &done, len(jobs), start, stop)
			close(progressDone)
		}()
	} else {
		close(progressDone)
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for i := 0; i < par; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if ctx.Err() != nil {
					errs[j.idx] = ctx.Err()
					continue
				}
				results[j.idx], errs[j.idx] = runOne(ctx, w, cfg, j.policy, j.seed)
				done.Add(1)
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(stop)
	<-progressDone
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep := &Report{Mode: cfg.Mode, Nodes: len(w.template.Nodes), GPUs: int(w.template.TotalGPUMilli() / cluster.MilliGPU),
		Pods: len(w.pods), Results: results, WallTime: time.Since(start).Seconds()}
	if cfg.Mode == "fill" && !cfg.Once {
		rep.Inflate = cfg.Inflate
	}
	rep.Summary = summarise(cfg.Policies, results)
	return rep, nil
}

func progress(out io.Writer, done *atomic.Int64, total int, start time.Time, stop chan struct{}) {
	tty := IsTerminal(out)
	every := 30 * time.Second // a pipe or CI log: a line now and then
	if tty {
		every = time.Second // a terminal: one line, rewritten
	}
	t := time.NewTicker(every)
	defer t.Stop()
	printed := false
	for {
		select {
		case <-stop:
			if printed {
				line := fmt.Sprintf("simulate: %d/%d runs done in %.1f s", done.Load(), total, time.Since(start).Seconds())
				if tty {
					line = "\r" + line + "\x1b[K"
				}
				fmt.Fprintln(out, line)
			}
			return
		case <-t.C:
			printed = true
			line := ProgressLine(int(done.Load()), total, time.Since(start))
			if tty {
				fmt.Fprint(out, "\r"+line+"\x1b[K") // back to the line's start, erase the rest
			} else {
				fmt.Fprintln(out, line)
			}
		}
	}
}

// ProgressLine is one progress report: runs done of total, the time so far
// and, once a run is done, an estimate of the time left at the pace so far:
// "simulate: 3/12 runs, 6 s, about 18 s left".
func ProgressLine(done, total int, elapsed time.Duration) string {
	line := fmt.Sprintf("simulate: %d/%d runs, %s", done, total, roundDuration(elapsed))
	if done > 0 && done < total {
		left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		line += ", about " + roundDuration(left) + " left"
	}
	return line
}

// roundDuration writes d in whole seconds, or minutes and seconds from a
// minute: "6 s", "2 min 05 s".
func roundDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 60 {
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// IsTerminal reports whether w is a terminal (a character device), where
// progress rewrites one line; elsewhere (a pipe, a file, CI) it prints a
// line every 30 s. It needs no x/term: os.File.Stat's ModeCharDevice.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// check checks the workload as a whole for the experiment mode, before
// any policy runs; fill with once (Config.Once) needs no GPU demand.
func (w *Workload) check(mode string, once bool) error {
	if mode == "fill" {
		if w.template.TotalGPUMilli() == 0 {
			return errors.New("fill needs a cluster with GPUs: arrived demand is measured against GPU capacity")
		}
		if w.gpuDemand == 0 && !once {
			return errors.New("fill needs pods that request GPUs: the arrived GPU demand could never reach --inflate × capacity")
		}
		return nil
	}
	for _, s := range w.specs {
		if math.IsNaN(s.Creation) {
			return fmt.Errorf("%s:%d: column creation_time: pod %s has none, and replay needs it", w.podsFile, s.Line, trace.Quote(s.Name))
		}
	}
	return nil
}

// placer is what fill and replay need of a placement.IndexedPlacer: every
// change to the cluster goes through it.
type placer interface {
	Place(c *cluster.Cluster, p *cluster.Pod) (node int, gpus cluster.GPUSet, ok bool)
	Allocate(c *cluster.Cluster, i int, p *cluster.Pod, gpus cluster.GPUSet) error
	Release(c *cluster.Cluster, i int, p *cluster.Pod, gpus cluster.GPUSet) error
}

func runOne(ctx context.Context, w *Workload, cfg Config, policy string, seed uint64) (Result, error) {
	t0 := time.Now()
	pol, err := placement.New(policy, w.target)
	if err != nil {
		return Result{}, err
	}
	pol = placement.WithGPUAPI(pol, cfg.GPUAPI)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var r Result
	if cfg.Mode == "fill" {
		inflate := cfg.Inflate
		if cfg.Once {
			inflate = 0 // fill: the trace's pods once each
		}
		r, err = fill(ctx, w, placement.NewIndexedPlacer(pol, cfg.TieBreak, rng), rng, inflate, cfg.Placements)
	} else {
		r, err = replay(ctx, w, placement.NewIndexedPlacer(pol, cfg.TieBreak, rng), rng, cfg.Placements, cfg.Teams, cfg.Gangs)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s seed %d: %w", policy, seed, err)
	}
	r.Policy, r.Seed, r.Mode = policy, seed, cfg.Mode
	r.WallSeconds = time.Since(t0).Seconds()
	if !cfg.NodeDetail || seed != cfg.Seed {
		for i := range r.ByModel {
			r.ByModel[i].NodeAllocation = nil
		}
	}
	return r, nil
}

// failReason returns why pod i failed: its reason to fit no node of the
// empty cluster, else dflt.
func (w *Workload) failReason(i int, dflt string) string {
	if w.unfit[i] != "" {
		return w.unfit[i]
	}
	return dflt
}

// placement returns the Placement of pod i, arrival seq: on node with gpus
// if ok, else failed (reason from failReason(i, dflt)).
func (w *Workload) placement(seq, i int, c *cluster.Cluster, node int, gpus cluster.GPUSet, ok bool, start, wait float64, dflt string) Placement {
	pl := Placement{Seq: seq, Pod: w.specs[i].Name, StartSeconds: start, WaitSeconds: wait}
	if ok {
		pl.Node, pl.GPUs, pl.GPUMilli = c.Nodes[node].Name, gpus, w.pods[i].GPUMilli
		if w.pods[i].MIGProfile != 0 && gpus&c.Nodes[node].MIGGPUs == 0 {
			pl.GPUMilli = cluster.MilliGPU // a MIG pod on a whole GPU
		}
	} else {
		pl.Reason = w.failReason(i, dflt)
	}
	return pl
}

// finish fills the end-of-run fields from the cluster's state.
func (w *Workload) finish(r *Result, c *cluster.Cluster, fragSum float64) {
	r.TotalGPUMilli = c.TotalGPUMilli()
	free := c.FreeGPUMilli()
	r.AllocatedGPUMilli = r.TotalGPUMilli - free
	if r.TotalGPUMilli > 0 {
		r.GPUAllocationRatio = float64(r.AllocatedGPUMilli) / float64(r.TotalGPUMilli)
	}
	r.UnallocatedGPUs = float64(free) / cluster.MilliGPU
	if free > 0 {
		r.FragmentationRatio = fragSum / float64(free)
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		r.IdleUSDPerHour += cost.USDPerHour(n.GPUFreeTotal(), w.price(n.ModelID))
	}
	r.ByModel = byModel(c)
}

// fragTracker keeps every node's fragmentation and their sum up to date.
type fragTracker struct {
	tw   *placement.TargetWorkload
	node []float64
	sum  float64
}

func newFragTracker(tw *placement.TargetWorkload, c *cluster.Cluster) *fragTracker {
	f := &fragTracker{tw: tw, node: make([]float64, len(c.Nodes))}
	for i := range c.Nodes {
		f.node[i] = tw.NodeFrag(&c.Nodes[i])
		f.sum += f.node[i]
	}
	return f
}

func (f *fragTracker) update(c *cluster.Cluster, i int) {
	v := f.tw.NodeFrag(&c.Nodes[i])
	f.sum += v - f.node[i]
	f.node[i] = v
}

// exact recomputes the sum, dropping accumulated rounding.
func (f *fragTracker) exact() float64 {
	s := 0.0
	for _, v := range f.node {
		s += v
	}
	return s
}

// curvePoints is how many samples a fill curve holds at most.
const curvePoints = 200

// maxFillPods bounds a fill run's pod count (the paper's runs submit about
// 11,000).
const maxFillPods = 20_000_000

// fill runs the fill experiment (the package doc); with placements it
// records what became of each pod. Arrived demand counts the pods as the
// trace asks for them, under any sharing mode. inflate 0 submits the
// trace's pods once each (Config.Once). The workload has passed
// check("fill").
func fill(ctx context.Context, w *Workload, pl placer, rng *rand.Rand, inflate float64, placements bool) (Result, error) {
	c := w.newCluster(rng)
	capacity := c.TotalGPUMilli()
	target := int64(math.Floor(inflate * float64(capacity)))
	// The trace's pods in random order, then samples with replacement.
	order := rng.Perm(len(w.pods))
	asked := w.askedPods()
	var demand int64
	for _, i := range order {
		demand += asked[i].TotalGPUMilli()
	}
	if inflate == 0 {
		target = demand
	}
	order, demand = trim(order, demand, target, asked, rng)
	for inflate > 0 {
		if len(order) > maxFillPods {
			return Result{}, fmt.Errorf("fill would submit more than %d pods before the GPU demand reaches %.2f × capacity: too few pods request GPUs", maxFillPods, inflate)
		}
		i := rng.IntN(len(w.pods))
		if demand+asked[i].TotalGPUMilli() > target {
			break
		}
		demand += asked[i].TotalGPUMilli()
		order = append(order, i)
	}

	frag := newFragTracker(w.target, c)
	var use *useTracker
	if w.sharing.Mode != "" {
		use = newUseTracker(w, c)
	}
	var r Result
	failed := failures{}
	var arrived int64
	step := float64(target) / curvePoints
	next := 0.0
	free := c.FreeGPUMilli() // less than capacity after Bind
	for k, i := range order {
		if k&1023 == 0 && ctx.Err() != nil {
			return r, ctx.Err()
		}
		p := &w.pods[i]
		arrived += asked[i].TotalGPUMilli()
		node, gpus, ok := pl.Place(c, p)
		if ok {
			took, err := allocate(pl, c, node, p, gpus)
			if err != nil {
				return r, fmt.Errorf("placement chose an infeasible node: %w", err)
			}
			free -= took
			frag.update(c, node)
			if use != nil {
				use.add(c, node, gpus, k, i)
			}
		} else {
			r.FailedPods++
			failed.add(w.failReason(i, ReasonNoRoom), &w.specs[i])
		}
		if placements {
			r.Placements = append(r.Placements, w.placement(k+1, i, c, node, gpus, ok, math.NaN(), math.NaN(), ReasonNoRoom))
		}
		if float64(arrived) >= next || k == len(order)-1 {
			pt := Point{ArrivedRatio: float64(arrived) / float64(capacity), AllocationRatio: float64(capacity-free) / float64(capacity)}
			if free > 0 {
				pt.FragmentationRatio = frag.sum / float64(free)
			}
			r.Curve = append(r.Curve, pt)
			next = (math.Floor(float64(arrived)/step) + 1) * step
		}
	}
	r.Pods = len(order)
	r.ArrivedGPUMilli = arrived
	r.Failed = failed.groups()
	w.finish(&r, c, frag.exact())
	if use != nil {
		use.result(&r, false)
	}
	return r, nil
}

// allocate binds p to node of c through pl and returns the milli-GPU it
// took: its request, or for a pod asking for a MIG profile what its
// instance or whole GPU holds (cluster.Node.FreeAfter).
func allocate(pl placer, c *cluster.Cluster, node int, p *cluster.Pod, gpus cluster.GPUSet) (int64, error) {
	before := c.Nodes[node].GPUFreeTotal()
	if err := pl.Allocate(c, node, p, gpus); err != nil {
		return 0, err
	}
	return before - c.Nodes[node].GPUFreeTotal(), nil
}

// release returns p's resources to node of c through pl and returns the
// milli-GPU it freed.
func release(pl placer, c *cluster.Cluster, node int, p *cluster.Pod, gpus cluster.GPUSet) (int64, error) {
	before := c.Nodes[node].GPUFreeTotal()
	if err := pl.Release(c, node, p, gpus); err != nil {
		return 0, err
	}
	return c.Nodes[node].GPUFreeTotal() - before, nil
}

// trim drops pods from order at random until their GPU demand is at most
// target, and returns the rest in their order and their demand. Each step
// draws k = rng.IntN(remaining) and drops the k-th remaining pod, as
// deleting order[k] from the slice would; a Fenwick tree over the
// positions still present finds it in O(log n).
func trim(order []int, demand, target int64, pods []cluster.Pod, rng *rand.Rand) ([]int, int64) {
	if demand <= target {
		return order, demand
	}
	n := len(order)
	tree := make([]int32, n+1) // 1-based; all positions present
	for i := 1; i <= n; i++ {
		tree[i] = int32(i & -i)
	}
	top := 1
	for top*2 <= n {
		top *= 2
	}
	dropped := make([]bool, n)
	for left := n; demand > target && left > 0; left-- {
		// The position (0-based) of the k-th present entry, k from 0.
		k := int32(rng.IntN(left))
		pos := 0
		for step := top; step > 0; step /= 2 {
			if next := pos + step; next <= n && tree[next] <= k {
				pos = next
				k -= tree[next]
			}
		}
		dropped[pos] = true
		demand -= pods[order[pos]].TotalGPUMilli()
		for i := pos + 1; i <= n; i += i & -i {
			tree[i]--
		}
	}
	kept := order[:0]
	for i, o := range order {
		if !dropped[i] {
			kept = append(kept, o)
		}
	}
	return kept, demand
}

func summarise(policies []string, results []Result) []Summary {
	var out []Summary
	for _, p := range policies {
		s := Summary{Policy: p}
		var allocs []float64
		for _, r := range results {
			if r.Policy != p {
				continue
			}
			s.Runs++
			allocs = append(allocs, r.GPUAllocationRatio)
			s.FragmentationRatioMean += r.FragmentationRatio
			s.FailedPodsMean += float64(r.FailedPods)
			s.UnallocatedGPUsMean += r.UnallocatedGPUs
			s.IdleUSDPerHourMean += r.IdleUSDPerHour
			if r.Replay != nil {
				s.QueueDelayMeanSeconds += r.Replay.QueueDelayMeanSeconds
				s.QueueDelayP95Seconds += r.Replay.QueueDelayP95Seconds
				s.TimeWeightedAllocMean += r.Replay.TimeWeightedAllocationRatio
			}
		}
		if s.Runs == 0 {
			continue
		}
		n := float64(s.Runs)
		s.GPUAllocationRatioMean, s.GPUAllocationRatioStd = meanStd(allocs)
		s.FragmentationRatioMean /= n
		s.FailedPodsMean /= n
		s.UnallocatedGPUsMean /= n
		s.IdleUSDPerHourMean /= n
		s.QueueDelayMeanSeconds /= n
		s.QueueDelayP95Seconds /= n
		s.TimeWeightedAllocMean /= n
		out = append(out, s)
	}
	return out
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// percentile returns the q-quantile (0..1) of sorted xs by the
// nearest-rank method.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	k = max(0, min(k, len(sorted)-1))
	return sorted[k]
}
