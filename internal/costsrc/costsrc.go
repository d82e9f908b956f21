// Package costsrc reads the node agent's metrics over a window into the
// input of the cost accounting (internal/costalloc): the GPUs, who held
// which share of which GPU when, each GPU's utilisation, and per-pod usage
// series for right-sizing. It reads them from Prometheus's HTTP API (range
// queries, ReadPrometheus) or from an OpenMetrics file of the kind promtool
// backfills (ReadOpenMetrics); both evaluate the series on the same grid of
// steps, so that the same data gives the same input. docs/cost.md gives the
// mapping rules.
package costsrc

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/internal/costalloc"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// The node agent's series read (docs/metrics.md).
const (
	metricHealth   = "gpuplane_device_health"
	metricShare    = "gpuplane_device_allocation_share"
	metricEngine   = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	metricGPUUtil  = "DCGM_FI_DEV_GPU_UTIL"
	metricFBUsed   = "DCGM_FI_DEV_FB_USED"
	labelHostname  = "Hostname"
	labelUUID      = "UUID"
	labelModel     = "modelName"
	labelProfile   = "GPU_I_PROFILE"
	labelInstance  = "GPU_I_ID"
	labelPod       = "pod"
	labelNamespace = "namespace"
)

// Metrics are the metric names read, in the order read.
var Metrics = []string{metricHealth, metricShare, metricEngine, metricGPUUtil, metricFBUsed}

// JobLabels are the pod labels that name a pod's job, in the order tried,
// as Prometheus sanitises them on series (kube-state-metrics'
// label_<name>): job-name (a Kubernetes Job's pods), training.kubeflow.org/
// job-name (Kubeflow's PyTorchJob, MPIJob, ...), ray.io/cluster (a
// RayCluster's pods).
var JobLabels = []string{"label_job_name", "label_training_kubeflow_org_job_name", "label_ray_io_cluster"}

// DefaultStep is the default time between two evaluations, in milliseconds:
// 30 s, Prometheus's usual scrape interval and the chart's.
const DefaultStep = 30_000

// Window is the time range read and its grid: the series are evaluated at
// From, From+Step, ... before To, in Unix milliseconds; each evaluation
// stands for [t, t+Step).
type Window struct {
	From, To, Step int64
}

func (w Window) check() error {
	if w.Step <= 0 {
		return fmt.Errorf("step %d ms: want a positive step", w.Step)
	}
	if w.To <= w.From {
		return fmt.Errorf("window: to %d ms is not after from %d ms", w.To, w.From)
	}
	return nil
}

// last returns the last grid time of the window.
func (w Window) last() int64 { return w.From + (w.To-w.From-1)/w.Step*w.Step }

// points returns the number of grid times.
func (w Window) points() int { return int((w.To-w.From-1)/w.Step) + 1 }

// index returns the grid index of grid time t.
func (w Window) index(t int64) int64 { return (t - w.From) / w.Step }

// series is one series on the window's grid: its labels and the grid times
// at which it had a value (the last sample in (t-Step, t]), ascending.
type series struct {
	labels map[string]string
	t      []int64
	v      []float64
}

// Usage is one pod's use of one device, on the grid, for right-sizing: its
// frame-buffer memory and its device's utilisation, over the steps from the
// first to the last of its DCGM_FI_DEV_FB_USED samples.
type Usage struct {
	Namespace, Pod string
	// GPU is the UUID of the GPU; MIGProfile and MIGInstance name the MIG
	// device, empty for a whole GPU.
	GPU, MIGProfile, MIGInstance string
	// Model is the GPU's catalog model.
	Model string
	// Start is the first grid time and Step the grid's step, in Unix
	// milliseconds: value i is at Start + i*Step.
	Start, Step int64
	// FBUsedMiB is DCGM_FI_DEV_FB_USED at each step, in MiB; NaN where
	// there was no sample.
	FBUsedMiB []float32
	// Util is the device's utilisation (0..1) at each step; NaN where
	// there was no sample.
	Util []float32
}

// Result is what a read gives.
type Result struct {
	// Input is the accounting's input; Prices is left for the caller.
	Input costalloc.Input
	// Usage is each pod's use of each device it held, sorted by namespace,
	// pod, GPU, MIG instance.
	Usage []Usage
	// Unattributed counts share series without pod or namespace labels;
	// they are kept, as "(unattributed)" holdings.
	Unattributed int
	// Warnings lists what could not be mapped (series without a GPU UUID,
	// unknown GPU models, share values that are no fraction).
	Warnings []string
	// Series is how many series were read.
	Series int
}

// build maps the series, by metric name, to a Result.
func build(w Window, by map[string][]series) (*Result, error) {
	r := &Result{Input: costalloc.Input{From: w.From, To: w.To}}
	cat := gpu.Default()
	type gpuInfo struct{ node, model string }
	gpus := map[string]*gpuInfo{}
	unknownModel := map[string]bool{}
	noUUID := map[string]int{}
	for _, name := range Metrics {
		r.Series += len(by[name])
		for _, s := range by[name] {
			uuid := s.labels[labelUUID]
			if uuid == "" {
				noUUID[name]++
				continue
			}
			if gpus[uuid] != nil {
				continue
			}
			product := s.labels[labelModel]
			model := product
			if m, ok := cat.FromProductName(product); ok {
				model = m.Name
			} else if !unknownModel[product] {
				unknownModel[product] = true
				r.Warnings = append(r.Warnings, fmt.Sprintf("GPU model %q (modelName) is not in the catalog; priced by that name", product))
			}
			gpus[uuid] = &gpuInfo{node: s.labels[labelHostname], model: model}
		}
	}
	for _, name := range Metrics {
		if n := noUUID[name]; n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d %s series without a UUID label: not placed on any GPU", n, name))
		}
	}
	if len(gpus) == 0 {
		return nil, fmt.Errorf("no GPU series (%s, %s) from %s to %s: no node agent data in the window", metricHealth, metricShare,
			time.UnixMilli(w.From).UTC().Format(time.RFC3339), time.UnixMilli(w.To).UTC().Format(time.RFC3339))
	}
	uuids := make([]string, 0, len(gpus))
	for u := range gpus {
		uuids = append(uuids, u)
	}
	sort.Strings(uuids)
	for _, u := range uuids {
		r.Input.GPUs = append(r.Input.GPUs, costalloc.GPU{Node: gpus[u].node, UUID: u, Model: gpus[u].model})
	}

	// Utilisation: per GPU (series without GPU_I_ID) and per MIG device
	// (UUID/GPU_I_ID).
	r.Input.UtilGrid = utilGrids(w, by)

	bad := 0
	for _, s := range by[metricShare] {
		uuid := s.labels[labelUUID]
		g := gpus[uuid]
		if g == nil {
			continue // counted above
		}
		ns, pod := s.labels[labelNamespace], s.labels[labelPod]
		if ns == "" || pod == "" {
			r.Unattributed++
			ns, pod = "", ""
		}
		job := ""
		for _, l := range JobLabels {
			if job = s.labels[l]; job != "" {
				break
			}
		}
		profile, inst := s.labels[labelProfile], s.labels[labelInstance]
		utilKey := ""
		if inst != "" {
			utilKey = uuid + "/" + inst
		}
		for i := 0; i < len(s.t); {
			j := i + 1
			for j < len(s.t) && s.t[j] == s.t[j-1]+w.Step && s.v[j] == s.v[i] {
				j++
			}
			num, den, ok := fraction(s.v[i])
			if !ok {
				bad++
				i = j
				continue
			}
			var sh costalloc.Share
			if profile != "" {
				var err error
				if sh, err = costalloc.MIGShare(g.model, profile); err != nil {
					return nil, fmt.Errorf("%s{UUID=%q, %s=%q}: %w", metricShare, uuid, labelProfile, profile, err)
				}
			}
			if num != den {
				sh.Num, sh.Den = num, den
			}
			r.Input.Holdings = append(r.Input.Holdings, costalloc.Holding{
				Namespace: ns, Pod: pod, Job: job, GPU: uuid, Share: sh, Util: utilKey,
				Start: s.t[i], End: s.t[j-1] + w.Step,
			})
			i = j
		}
	}
	if bad > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d %s values are no fraction k/n with n <= 1024 in (0, 1]; not counted", bad, metricShare))
	}
	models := make(map[string]string, len(gpus))
	for u, g := range gpus {
		models[u] = g.model
	}
	r.Usage = usage(w, by, r.Input.UtilGrid, models)
	return r, nil
}

// fraction returns v as num/den with den <= 1024 (time-slicing's largest
// replica count; milli-GPU shares have den 1000 at most) in (0, 1]. The
// node agent writes k/replicas as the float64 nearest it, and Prometheus
// keeps float64s exactly, so the fraction is found again exactly:
// fractions with denominators up to 1024 lie at least 1/1024^2 apart.
func fraction(v float64) (num, den int64, ok bool) {
	if !(v > 0 && v <= 1) {
		return 0, 0, false
	}
	for d := int64(1); d <= 1024; d++ {
		n := math.Round(v * float64(d))
		if n >= 1 && math.Abs(n/float64(d)-v) < 1e-9 {
			return int64(n), d, true
		}
	}
	return 0, 0, false
}

// utilKey returns the key of a series' device: the GPU's UUID, or
// UUID/GPU_I_ID for a MIG device.
func utilKey(l map[string]string) string {
	if i := l[labelInstance]; i != "" {
		return l[labelUUID] + "/" + i
	}
	return l[labelUUID]
}

// utilGrids returns each device's utilisation (0..1) on the window's grid:
// the graphics engine activity where the device has any, else
// DCGM_FI_DEV_GPU_UTIL / 100. A device served under several series at
// once (one per time-slicing replica with --kubernetes-virtual-gpus, or
// one per pod as its holders change) has one value per time, the largest.
func utilGrids(w Window, by map[string][]series) map[string]costalloc.Grid {
	n := w.points()
	// Values are kept in the metric's unit (whole percents stay exact in
	// float32) and scaled by the Grid.
	collect := func(name string, scale float64) map[string][]float32 {
		out := map[string][]float32{}
		for _, s := range by[name] {
			if s.labels[labelUUID] == "" {
				continue
			}
			k := utilKey(s.labels)
			g := out[k]
			if g == nil {
				g = make([]float32, n)
				for i := range g {
					g[i] = float32(math.NaN())
				}
				out[k] = g
			}
			for i, t := range s.t {
				v := s.v[i]
				if math.IsNaN(v) {
					continue
				}
				u := float32(min(max(v, 0), 1/scale))
				if j := w.index(t); g[j] != g[j] || u > g[j] {
					g[j] = u
				}
			}
		}
		return out
	}
	out := map[string]costalloc.Grid{}
	for k, g := range collect(metricEngine, 1) {
		out[k] = costalloc.Grid{Start: w.From, Step: w.Step, U: g, Scale: 1}
	}
	for k, g := range collect(metricGPUUtil, 0.01) {
		if _, ok := out[k]; !ok {
			out[k] = costalloc.Grid{Start: w.From, Step: w.Step, U: g, Scale: 0.01}
		}
	}
	return out
}

// usage returns, for each pod and device with DCGM_FI_DEV_FB_USED series
// attributed to the pod, its frame-buffer use and its device's utilisation
// over the span of those series.
func usage(w Window, by map[string][]series, util map[string]costalloc.Grid, models map[string]string) []Usage {
	type key struct{ ns, pod, uuid, inst string }
	type span struct {
		l        map[string]string
		from, to int64 // grid times, inclusive
		ss       []series
	}
	spans := map[key]*span{}
	for _, s := range by[metricFBUsed] {
		l := s.labels
		k := key{l[labelNamespace], l[labelPod], l[labelUUID], l[labelInstance]}
		if k.ns == "" || k.pod == "" || k.uuid == "" || len(s.t) == 0 {
			continue
		}
		sp := spans[k]
		if sp == nil {
			sp = &span{l: l, from: s.t[0], to: s.t[len(s.t)-1]}
			spans[k] = sp
		}
		sp.from, sp.to = min(sp.from, s.t[0]), max(sp.to, s.t[len(s.t)-1])
		sp.ss = append(sp.ss, s)
	}
	out := make([]Usage, 0, len(spans))
	for k, sp := range spans {
		m := int((sp.to-sp.from)/w.Step) + 1
		u := Usage{Namespace: k.ns, Pod: k.pod, GPU: k.uuid, MIGProfile: sp.l[labelProfile], MIGInstance: k.inst, Model: models[k.uuid],
			Start: sp.from, Step: w.Step, FBUsedMiB: make([]float32, m), Util: make([]float32, m)}
		for i := range m {
			u.FBUsedMiB[i], u.Util[i] = float32(math.NaN()), float32(math.NaN())
		}
		for _, s := range sp.ss {
			for i, t := range s.t {
				u.FBUsedMiB[(t-sp.from)/w.Step] = float32(s.v[i])
			}
		}
		if g, ok := util[utilKey(sp.l)]; ok {
			for i, x := range g.U[w.index(sp.from) : w.index(sp.to)+1] {
				u.Util[i] = float32(float64(x) * g.Scale)
			}
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return strings.Compare(a.Namespace+"\x00"+a.Pod+"\x00"+a.GPU+"\x00"+a.MIGInstance, b.Namespace+"\x00"+b.Pod+"\x00"+b.GPU+"\x00"+b.MIGInstance) < 0
	})
	return out
}
