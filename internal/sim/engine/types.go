// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
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
	// DRAOrder is the order in which the DRA driver publishes MIG
	// placements under GPUAPI dra (placement.WithDRAOrder): the table's
	// (the default) or the core's.
	DRAOrder placement.DRAOrder
	// Parallel is the number of runs at once; 0 means GOMAXPROCS.
	Parallel int
	// Progress, if set, is told how far Run is: once with 0 and the
	// number of runs before the first starts, then after each run ends
	// with the runs done so far. Calls never overlap, and done only grows.
	Progress func(done, total int)
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
	// ServedGPUMilli is the GPU demand served: the milli-GPU the placed
	// pods asked for as the trace gives them (fill: the pods placed;
	// replay: every start), whatever a sharing mode made them hold.
	// PaddingGPUMilli is what they held beyond it: a share padded to a
	// whole GPU (exclusive), a MIG instance or a time-slicing replica
	// larger than the share; 0 under fractional.
	ServedGPUMilli  int64 `json:"served_gpu_milli"`
	PaddingGPUMilli int64 `json:"padding_gpu_milli"`
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
	IdleUSDPerHour float64 `json:"idle_usd_per_hour" round:"cent"`
	// WallSeconds is the run's wall-clock time.
	WallSeconds float64 `json:"wall_seconds" round:"ms"`
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
	// PlacedPodsMean are the pods placed (fill) or started (replay),
	// ArrivedPodsMean the pods that arrived; ServedRatioMean and Std the
	// GPU demand served over the arrived demand (Result.ServedGPUMilli /
	// ArrivedGPUMilli, 0..1), ServedGPUsMean the demand served in GPUs and
	// PaddingGPUsMean the padding (Result.PaddingGPUMilli) in GPUs.
	PlacedPodsMean  float64 `json:"placed_pods_mean"`
	ArrivedPodsMean float64 `json:"arrived_pods_mean"`
	ServedRatioMean float64 `json:"served_ratio_mean"`
	ServedRatioStd  float64 `json:"served_ratio_std"`
	ServedGPUsMean  float64 `json:"served_gpus_mean"`
	PaddingGPUsMean float64 `json:"padding_gpus_mean"`
	// FailedByClass is the mean failed pods per run of each failure class
	// (FailureClass) that has any.
	FailedByClass       map[string]float64 `json:"failed_by_class,omitempty"`
	UnallocatedGPUsMean float64            `json:"unallocated_gpus_mean"`
	IdleUSDPerHourMean  float64            `json:"idle_usd_per_hour_mean" round:"cent"`
	// Replay only: mean over seeds.
	QueueDelayMeanSeconds float64 `json:"queue_delay_mean_seconds,omitempty" round:"ms"`
	QueueDelayP95Seconds  float64 `json:"queue_delay_p95_seconds,omitempty" round:"ms"`
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
	WallTime float64   `json:"wall_seconds" round:"ms"`
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
	// Warnings are the warnings the run printed on stderr, in order,
	// without the "simulate: warning: " prefix; the HTML report lists
	// them too. Empty, not absent, when there were none.
	Warnings []string `json:"warnings"`
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
	// DRAMIGOrder is table, core or stale under --gpu-api dra (Config.DRAOrder;
	// --dra-mig-order, default core); absent without DRA.
	DRAMIGOrder string `json:"dra_mig_order,omitempty"`
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
