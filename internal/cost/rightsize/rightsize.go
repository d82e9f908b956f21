// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package rightsize recommends a smaller GPU share for each job that used
// little of what it held over a window: the right-sizing part of
// gpuplane cost. For a job whose p95 utilisation is low it finds
// the smallest MIG profile of the job's GPU model (or, on a model without
// MIG, the smallest milli-GPU share) that would still have held the job's
// peak frame-buffer memory and its p95 utilisation, and the money that share
// would have saved over the same hours. Every result carries the numbers it
// was decided on; a job with no recommendation carries the reason.
//
// It reads nothing: the caller (the cost command) gives each job's samples
// and its cost from internal/cost/alloc. Shares are priced by cost/alloc's
// rule (Share.Fraction), so a saving here agrees with the cost there.
package rightsize

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// DefaultThreshold is the default Options.Threshold: a job is a candidate
// when its p95 utilisation is below half of the share it held.
const DefaultThreshold = 0.5

// DefaultMilliStep is the default Options.MilliStep: milli-GPU
// recommendations are multiples of 100 milli-GPU (a tenth of a GPU).
const DefaultMilliStep = 100

// Quantile is the utilisation quantile a job is judged on: p95.
const Quantile = 0.95

// Job is one job's use of its GPUs over the window.
type Job struct {
	// Name is the job, e.g. "ml/train-1" (cost/alloc's "namespace/job").
	Name string
	// Model is the internal/gpu catalog model of the job's GPUs, e.g.
	// "A100-80GB".
	Model string
	// Held is the share the job held of each of its GPUs.
	Held alloc.Share
	// MIGSlices is the compute slices of the whole GPU for a MIG share; 0
	// takes it from internal/gpu's MIG table (as alloc.GPU.MIGSlices).
	MIGSlices int
	// GPUs is the number of GPUs (one share each) the job held at once.
	GPUs int
	// GPUHours is the job's allocated GPU-hours (cost/alloc's Row.GPUHours:
	// share × hours, summed over its GPUs).
	GPUHours float64
	// CostCents is the job's allocated cost in US cents (cost/alloc's
	// Row.Cents).
	CostCents int64
	// Util are utilisation samples (0..1) of the device the job held
	// (DCGM_FI_PROF_GR_ENGINE_ACTIVE, else DCGM_FI_DEV_GPU_UTIL/100), taken
	// at a regular interval, all GPUs' together. For a MIG share they are
	// the MIG instance's (relative to the instance), else the whole GPU's.
	// On a shared device (a time-sliced replica, a milli-GPU share) they
	// count the other pods on it too, so the job's own use is taken as at
	// most that.
	Util []float64
	// MemoryMiB are frame-buffer used samples (DCGM_FI_DEV_FB_USED, MiB) of
	// the device the job held, all GPUs' together; on a shared GPU they
	// include the other pods' memory. As DCGM and gpuplane's agent report
	// it, the series excludes the memory the driver reserves (nvidia-smi's
	// Reserved), which no smaller share could save.
	MemoryMiB []float64
}

// Options tune Recommend; the zero value takes the defaults.
type Options struct {
	// Threshold: a job is a candidate when its p95 utilisation, as a
	// fraction of one GPU, is below Threshold times the fraction it held;
	// 0 means DefaultThreshold. Must be in 0..1.
	Threshold float64
	// MilliStep is the granularity of milli-GPU recommendations, in
	// milli-GPU; 0 means DefaultMilliStep. Must be in 1..1000.
	MilliStep int64
}

// Recommendation is the outcome for one job. Recommended is empty when
// there is none; Reason always says why.
type Recommendation struct {
	Job   string
	Model string
	GPUs  int
	// Held describes the share held per GPU ("1 GPU", "MIG 3g",
	// "1/4 time-sliced replica", "300 milli-GPU") and HeldFraction is it as
	// a fraction of one GPU.
	Held         string
	HeldFraction float64
	// UtilSamples and MemorySamples count the samples the figures come
	// from.
	UtilSamples, MemorySamples int
	// UtilP95 is the p95 of the utilisation samples (0..1 of the device
	// held); NaN without samples.
	UtilP95 float64
	// UsedFraction is UtilP95 as a fraction of one GPU: UtilP95 × the
	// fraction of a GPU the samples refer to (the MIG instance's slices
	// over the GPU's for a MIG share, else 1). NaN without samples.
	UsedFraction float64
	// PeakMiB is the largest memory sample, MiB; NaN without samples.
	PeakMiB float64
	// Recommended is the recommended share per GPU: a MIG profile name
	// ("1g.10gb") or "N milli-GPU"; empty when none.
	Recommended string
	// RecommendedShare is the recommended share in cost/alloc's terms.
	RecommendedShare alloc.Share
	// RecommendedFraction is it as a fraction of one GPU.
	RecommendedFraction float64
	// RecommendedMiB is the memory of the recommended share, MiB.
	RecommendedMiB int64
	// GPUHours and CostCents are the job's, as given; RecommendedGPUHours
	// and RecommendedCostCents are the same hours on the recommended share;
	// SavingCents is the difference in cost, US cents.
	GPUHours, RecommendedGPUHours   float64
	CostCents, RecommendedCostCents int64
	SavingCents                     int64
	// Reason explains the recommendation or its absence.
	Reason string
}

// Recommend returns one Recommendation per job, those with the largest
// saving first, then by job name. A job's bad input (a sample outside its
// range, no GPUs, an invalid share) is an error naming the job and field.
func Recommend(jobs []Job, o Options) ([]Recommendation, error) {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return nil, fmt.Errorf("right-sizing threshold %v outside 0..1", o.Threshold)
	}
	if o.MilliStep == 0 {
		o.MilliStep = DefaultMilliStep
	}
	if o.MilliStep < 1 || o.MilliStep > resource.MilliPerGPU {
		return nil, fmt.Errorf("right-sizing milli-GPU step %d outside 1..%d", o.MilliStep, resource.MilliPerGPU)
	}
	cat := gpu.Default()
	out := make([]Recommendation, 0, len(jobs))
	for i, j := range jobs {
		r, err := recommend(j, o, cat)
		if err != nil {
			return nil, fmt.Errorf("job %d (%s): %w", i, j.Name, err)
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].SavingCents != out[b].SavingCents {
			return out[a].SavingCents > out[b].SavingCents
		}
		return out[a].Job < out[b].Job
	})
	return out, nil
}

// eps absorbs float rounding when a share is compared with a need computed
// from float samples (0.2 GPU needs 200 milli-GPU, not 201).
const eps = 1e-9

func recommend(j Job, o Options, cat *gpu.Catalog) (Recommendation, error) {
	r := Recommendation{
		Job: j.Name, Model: j.Model, GPUs: j.GPUs, GPUHours: j.GPUHours, CostCents: j.CostCents,
		UtilSamples: len(j.Util), MemorySamples: len(j.MemoryMiB),
		UtilP95: math.NaN(), UsedFraction: math.NaN(), PeakMiB: math.NaN(),
		RecommendedGPUHours: j.GPUHours, RecommendedCostCents: j.CostCents,
	}
	if err := checkJob(j); err != nil {
		return r, err
	}
	g := alloc.GPU{UUID: "of job " + j.Name, Model: j.Model, MIGSlices: j.MIGSlices}
	held, err := j.Held.Fraction(g)
	if err != nil {
		return r, fmt.Errorf("held share: %w", err)
	}
	r.Held = describe(j.Held)
	r.HeldFraction, _ = held.Float64()
	if err := checkSamples(j); err != nil {
		return r, err
	}
	if measured, err := measure(&r, j, g); !measured || err != nil {
		return r, err
	}
	if r.Reason = keepReason(&r, j, o); r.Reason != "" {
		return r, nil
	}
	var s smallerShare
	var ok bool
	if profiles := gpu.MIGProfiles(j.Model); len(profiles) > 0 {
		s, ok, err = smallerMIG(&r, j, g, profiles)
	} else {
		s, ok = smallerMilli(&r, j, o, cat)
	}
	if !ok || err != nil {
		return r, err
	}
	return r, recommendShare(&r, j, g, held, s)
}

// checkJob checks the job's GPUs, cost and GPU-hours.
func checkJob(j Job) error {
	if j.GPUs < 1 {
		return fmt.Errorf("GPUs %d, want at least 1", j.GPUs)
	}
	if j.CostCents < 0 {
		return fmt.Errorf("cost %d cents is negative", j.CostCents)
	}
	if !(j.GPUHours >= 0) || math.IsInf(j.GPUHours, 0) {
		return fmt.Errorf("GPU-hours %v, want a number >= 0", j.GPUHours)
	}
	return nil
}

// checkSamples checks the job's utilisation and memory samples.
func checkSamples(j Job) error {
	for k, u := range j.Util {
		if !(u >= 0 && u <= 1) {
			return fmt.Errorf("utilisation sample %d is %v, want 0..1", k, u)
		}
	}
	for k, m := range j.MemoryMiB {
		if !(m >= 0) || math.IsInf(m, 0) {
			return fmt.Errorf("memory sample %d is %v MiB, want a number >= 0", k, m)
		}
	}
	return nil
}

// measure sets the job's p95 utilisation, the share of a GPU it used and
// its peak memory; without samples to tell it returns false, the reason
// in r.
func measure(r *Recommendation, j Job, g alloc.GPU) (bool, error) {
	if len(j.Util) == 0 {
		r.Reason = "no utilisation samples (an Ampere MIG device has none, docs/metrics.md)"
		return false, nil
	}
	r.UtilP95 = quantile(Quantile, j.Util)
	// The samples are the device's: a MIG instance's (also when its time is
	// shared), else the whole GPU's.
	device := 1.0
	if j.Held.Kind == alloc.MIG {
		f, err := alloc.Share{Kind: alloc.MIG, Slices: j.Held.Slices}.Fraction(g)
		if err != nil {
			return false, fmt.Errorf("held share: %w", err)
		}
		device, _ = f.Float64()
	}
	r.UsedFraction = r.UtilP95 * device
	if len(j.MemoryMiB) == 0 {
		r.Reason = "no memory samples (DCGM_FI_DEV_FB_USED)"
		return false, nil
	}
	r.PeakMiB = j.MemoryMiB[0]
	for _, m := range j.MemoryMiB {
		r.PeakMiB = max(r.PeakMiB, m)
	}
	return true, nil
}

// keepReason is why the job keeps its share whatever its size: it uses
// enough of it, or it spans several GPUs; "" if neither.
func keepReason(r *Recommendation, j Job, o Options) string {
	if limit := o.Threshold * r.HeldFraction; r.UsedFraction >= limit {
		// Enough digits to show the comparison: 3 decimals, else 7
		// significant digits (the float32 samples'), else equal.
		used, lim := strconv.FormatFloat(r.UsedFraction, 'f', 3, 64), strconv.FormatFloat(limit, 'f', 3, 64)
		if used == lim {
			used, lim = strconv.FormatFloat(r.UsedFraction, 'g', 7, 64), strconv.FormatFloat(limit, 'g', 7, 64)
		}
		reason := fmt.Sprintf("p95 utilisation %s GPU is not below %.2f of the held %s (%s GPU)", used, o.Threshold, r.Held, lim)
		if used == lim {
			reason += ": equal"
		}
		return reason
	}
	if j.GPUs > 1 {
		return fmt.Sprintf("p95 utilisation %.3f GPU is low, but the job spans %d GPUs: MIG instances have no GPU-to-GPU peer-to-peer (NVIDIA MIG user guide), and fewer GPUs would change its parallelism", r.UsedFraction, j.GPUs)
	}
	return ""
}

// smallerShare is a share smaller than the held one that holds the job:
// the share, its name and its memory.
type smallerShare struct {
	share alloc.Share
	name  string
	mib   int64
}

// smallerMIG returns the smallest MIG profile smaller than the held share
// that holds the job's use and peak memory; false, the reason in r, if
// none does.
func smallerMIG(r *Recommendation, j Job, g alloc.GPU, profiles []gpu.MIGProfile) (smallerShare, bool, error) {
	best := -1
	for k, p := range profiles {
		fr, err := alloc.Share{Kind: alloc.MIG, Slices: p.ComputeSlices}.Fraction(g)
		if err != nil {
			return smallerShare{}, false, fmt.Errorf("MIG profile %s: %w", p.Name, err)
		}
		frac, _ := fr.Float64()
		if name, err := apidra.ParseMIGProfile(p.Name); err == nil && name.MediaExtensions || frac >= r.HeldFraction-eps || frac < r.UsedFraction-eps || float64(p.MemoryMiB) < r.PeakMiB {
			continue
		}
		if best < 0 || p.ComputeSlices < profiles[best].ComputeSlices ||
			p.ComputeSlices == profiles[best].ComputeSlices && p.MemoryMiB < profiles[best].MemoryMiB {
			best = k
		}
	}
	if best < 0 {
		r.Reason = fmt.Sprintf("no MIG profile of %s smaller than the held %s holds p95 utilisation %.3f GPU and peak %.0f MiB",
			j.Model, r.Held, r.UsedFraction, r.PeakMiB)
		return smallerShare{}, false, nil
	}
	p := profiles[best]
	return smallerShare{alloc.Share{Kind: alloc.MIG, Slices: p.ComputeSlices}, p.Name, p.MemoryMiB}, true, nil
}

// smallerMilli returns the smallest milli-GPU share, in steps of
// o.MilliStep, smaller than the held share that holds the job's use and
// peak memory; false, the reason in r, if none does.
func smallerMilli(r *Recommendation, j Job, o Options, cat *gpu.Catalog) (smallerShare, bool) {
	m, ok := cat.Get(j.Model)
	if !ok || m.MemoryMiB == 0 {
		r.Reason = fmt.Sprintf("memory of GPU model %q unknown to the catalog: no milli-GPU share can be sized", j.Model)
		return smallerShare{}, false
	}
	need := max(int64(math.Ceil(r.UsedFraction*resource.MilliPerGPU-eps)), int64(math.Ceil(r.PeakMiB*resource.MilliPerGPU/float64(m.MemoryMiB)-eps)), 1)
	need = (need + o.MilliStep - 1) / o.MilliStep * o.MilliStep
	if need > resource.MilliPerGPU || float64(need) >= r.HeldFraction*resource.MilliPerGPU-eps {
		r.Reason = fmt.Sprintf("no milli-GPU share smaller than the held %s holds p95 utilisation %.3f GPU and peak %.0f MiB of %d MiB",
			r.Held, r.UsedFraction, r.PeakMiB, m.MemoryMiB)
		return smallerShare{}, false
	}
	return smallerShare{alloc.Share{Kind: alloc.Milli, Milli: need}, fmt.Sprintf("%d milli-GPU", need), need * m.MemoryMiB / 1000}, true
}

// recommendShare recommends s in place of the held share, with its GPU-hours,
// cost and saving in proportion.
func recommendShare(r *Recommendation, j Job, g alloc.GPU, held *big.Rat, s smallerShare) error {
	recFrac, err := s.share.Fraction(g)
	if err != nil {
		return fmt.Errorf("recommended share: %w", err)
	}
	ratio := new(big.Rat).Quo(recFrac, held)
	r.Recommended, r.RecommendedShare, r.RecommendedMiB = s.name, s.share, s.mib
	r.RecommendedFraction, _ = recFrac.Float64()
	f, _ := ratio.Float64()
	r.RecommendedGPUHours = j.GPUHours * f
	r.RecommendedCostCents = roundHalfUp(new(big.Rat).Mul(big.NewRat(j.CostCents, 1), ratio))
	r.SavingCents = j.CostCents - r.RecommendedCostCents
	r.Reason = fmt.Sprintf("p95 utilisation %.3f GPU and peak %.0f MiB fit %s (%s GPU, %d MiB) instead of the held %s",
		r.UsedFraction, r.PeakMiB, s.name, recFrac.RatString(), s.mib, r.Held)
	return nil
}

// quantile is Prometheus's quantile_over_time (prometheus v0.316.0,
// promql/quantile.go, func quantile): the samples sorted, rank q×(n−1), linear
// interpolation between the two samples around it.
func quantile(q float64, v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	rank := q * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	w := rank - float64(lo)
	return s[lo]*(1-w) + s[hi]*w
}

// roundHalfUp rounds a non-negative rational to the nearest integer,
// halves up (as cost/alloc rounds cents).
func roundHalfUp(x *big.Rat) int64 {
	n := new(big.Int).Mul(x.Num(), big.NewInt(2))
	n.Add(n, x.Denom())
	n.Quo(n, new(big.Int).Mul(x.Denom(), big.NewInt(2)))
	return n.Int64()
}

// describe names a held share; Num/Den of it when Den > 0 (2 of 4
// time-slicing replicas read from the node agent are "2/4 of 1 GPU").
func describe(s alloc.Share) string {
	if s.Den > 0 {
		whole := s
		whole.Num, whole.Den = 0, 0
		return fmt.Sprintf("%d/%d of %s", s.Num, s.Den, describe(whole))
	}
	switch s.Kind {
	case alloc.MIG:
		return fmt.Sprintf("MIG %dg", s.Slices)
	case alloc.Replica:
		return fmt.Sprintf("1/%d time-sliced replica", s.Replicas)
	case alloc.Milli:
		return fmt.Sprintf("%d milli-GPU", s.Milli)
	}
	return "1 GPU"
}
