// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"math"
	"sort"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/rightsize"
	"github.com/gpuplane/gpuplane/internal/cost/source"
)

// Rightsizing is one job's right-sizing (internal/cost/rightsize) in the
// report: what it held, the figures it was judged on and, when there is
// one, the recommended share and the money it would have saved. Money in
// USD with two decimals; P95Util, UsedFraction and PeakMiB are null
// without samples.
type Rightsizing struct {
	Job           string   `json:"job"`
	Model         string   `json:"model"`
	GPUs          int      `json:"gpus"`
	Held          string   `json:"held"`
	HeldFraction  float64  `json:"held_fraction"`
	UtilSamples   int      `json:"util_samples"`
	MemorySamples int      `json:"memory_samples"`
	P95Util       *float64 `json:"p95_util"`
	UsedFraction  *float64 `json:"used_fraction"`
	PeakMiB       *float64 `json:"peak_mib"`
	// Recommended is a MIG profile ("3g.40gb") or "N milli-GPU"; empty
	// when none.
	Recommended         string  `json:"recommended"`
	RecommendedFraction float64 `json:"recommended_fraction"`
	RecommendedMiB      int64   `json:"recommended_mib"`
	GPUHours            float64 `json:"gpu_hours"`
	RecommendedGPUHours float64 `json:"recommended_gpu_hours"`
	CostUSD             string  `json:"cost_usd"`
	RecommendedCostUSD  string  `json:"recommended_cost_usd"`
	SavingUSD           string  `json:"saving_usd"`
	Reason              string  `json:"reason"`
}

// noUsage is the reason given to a job without right-sizing input.
const noUsage = "no DCGM_FI_DEV_FB_USED series with the job's pod labels (docs/cost.md, right-sizing input)"

// rightsizing builds one rightsize.Job per job that held GPUs (not the
// unattributed holdings): its model and share from its holdings, its
// GPU-hours and cost from the report by job, its samples from the usage
// of its pods (res.Usage), and returns the recommendations, for the
// report and as internal/cost/rightsize gives them (for the HTML report).
func rightsizing(res *source.Result, byJob alloc.Report, threshold float64) ([]Rightsizing, []rightsize.Recommendation, error) {
	jobs, jobOf := heldJobs(res)
	cost := map[string]alloc.Row{}
	for _, r := range byJob.Rows {
		cost[r.Key] = r
	}
	var names []string
	for k := range jobs {
		names = append(names, k)
	}
	sort.Strings(names)
	util, mem := jobUsage(res, jobs, jobOf)
	in := make([]rightsize.Job, 0, len(names))
	for _, k := range names {
		j := jobs[k]
		x := rightsize.Job{Name: k, Model: j.model, Held: j.share, GPUs: concurrent(j.spans),
			GPUHours: cost[k].GPUHoursAllocated, CostCents: cost[k].CostCents, Util: util[k], MemoryMiB: mem[k]}
		if j.mixed != "" {
			x.Util, x.MemoryMiB = nil, nil // not sized: no recommendation, no saving
		}
		in = append(in, x)
	}
	recs, err := rightsize.Recommend(in, rightsize.Options{Threshold: threshold})
	if err != nil {
		return nil, nil, err
	}
	out := make([]Rightsizing, 0, len(recs))
	for i, r := range recs {
		x := rightsizingRow(r)
		if j := jobs[r.Job]; j.mixed != "" {
			x.Reason = j.mixed
		} else if !j.usage {
			x.Reason = noUsage
		}
		recs[i].Reason = x.Reason
		out = append(out, x)
	}
	return out, recs, nil
}

// podKey names a pod: its namespace and name.
type podKey struct{ ns, pod string }

// heldJob is what a job held: one GPU model and share (mixed says why
// not, if it held several), over spans, and whether its pods have usage.
type heldJob struct {
	model, mixed string
	share        alloc.Share
	spans        [][2]int64
	usage        bool
}

// heldJobs returns the jobs that held GPUs, by job key (the unattributed
// holdings left out), and the job of each pod.
func heldJobs(res *source.Result) (map[string]*heldJob, map[podKey]string) {
	model := map[string]string{}
	for _, g := range res.Input.GPUs {
		model[g.UUID] = g.Model
	}
	jobs := map[string]*heldJob{}
	jobOf := map[podKey]string{}
	for _, h := range res.Input.Holdings {
		if h.Pod == "" {
			continue
		}
		k := h.JobKey()
		j := jobs[k]
		if j == nil {
			j = &heldJob{model: model[h.GPU], share: h.Share}
			jobs[k] = j
		}
		if j.model != model[h.GPU] || j.share != h.Share {
			j.mixed = "held different GPU models or shares: not sized"
		}
		j.spans = append(j.spans, [2]int64{h.Start, h.End})
		jobOf[podKey{h.Namespace, h.Pod}] = k
	}
	return jobs, jobOf
}

// jobUsage returns each job's utilisation and memory samples, from the
// usage of its pods (NaN samples left out), and marks the jobs that have
// any.
func jobUsage(res *source.Result, jobs map[string]*heldJob, jobOf map[podKey]string) (util, mem map[string][]float64) {
	util, mem = map[string][]float64{}, map[string][]float64{}
	for _, u := range res.Usage {
		k, ok := jobOf[podKey{u.Namespace, u.Pod}]
		if !ok {
			continue
		}
		jobs[k].usage = true
		for i, m := range u.FBUsedMiB {
			if m == m {
				mem[k] = append(mem[k], float64(m))
			}
			if i < len(u.Util) && u.Util[i] == u.Util[i] {
				util[k] = append(util[k], float64(u.Util[i]))
			}
		}
	}
	return util, mem
}

// rightsizingRow is r as the report writes it.
func rightsizingRow(r rightsize.Recommendation) Rightsizing {
	return Rightsizing{Job: r.Job, Model: r.Model, GPUs: r.GPUs, Held: r.Held, HeldFraction: r.HeldFraction,
		UtilSamples: r.UtilSamples, MemorySamples: r.MemorySamples, P95Util: num(r.UtilP95), UsedFraction: num(r.UsedFraction), PeakMiB: num(r.PeakMiB),
		Recommended: r.Recommended, RecommendedFraction: r.RecommendedFraction, RecommendedMiB: r.RecommendedMiB,
		GPUHours: r.GPUHours, RecommendedGPUHours: r.RecommendedGPUHours,
		CostUSD: usd(r.CostCents), RecommendedCostUSD: usd(r.RecommendedCostCents), SavingUSD: usd(r.SavingCents), Reason: r.Reason}
}

// concurrent returns the most spans [start, end) that overlap at once.
func concurrent(spans [][2]int64) int {
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		evs = append(evs, ev{s[0], 1}, ev{s[1], -1})
	}
	sort.Slice(evs, func(a, b int) bool { return evs[a].t < evs[b].t || evs[a].t == evs[b].t && evs[a].d < evs[b].d })
	n, most := 0, 0
	for _, e := range evs {
		n += e.d
		most = max(most, n)
	}
	return most
}

// num returns a pointer to v, nil for NaN (JSON has no NaN).
func num(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}
