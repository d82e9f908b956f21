// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/gpuplane/gpuplane/internal/cluster"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/placement"
)

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
	var (
		mu   sync.Mutex
		done int
	)
	if cfg.Progress != nil {
		cfg.Progress(0, len(jobs))
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
				mu.Lock()
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
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
	pol = placement.WithDRAOrder(pol, cfg.GPUAPI, cfg.DRAOrder, w.target)
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
		var buf cluster.Pod
		pl.Node, pl.GPUs, pl.GPUMilli = c.Nodes[node].Name, gpus, c.Nodes[node].Served(&w.pods[i], &buf).GPUMilli
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

// allocate binds p to node of c through pl and returns the milli-GPU it
// took, in whole devices (cluster.Node.DeviceMilli): its request, or for a pod asking for a MIG profile what its
// instance or whole GPU holds (cluster.Node.FreeAfter).
func allocate(pl placer, c *cluster.Cluster, node int, p *cluster.Pod, gpus cluster.GPUSet) (int64, error) {
	before := c.Nodes[node].GPUFreeTotal()
	if err := pl.Allocate(c, node, p, gpus); err != nil {
		return 0, err
	}
	return c.Nodes[node].DeviceMilli(before - c.Nodes[node].GPUFreeTotal()), nil
}

// held returns the milli-GPU pod p holds on node of c, as the node serves
// it (cluster.Node.Served: k nvidia.com/gpu replicas are a share of one
// GPU), in whole devices (cluster.Node.DeviceMilli: a CPX partition of an
// MI300X is 125).
func held(c *cluster.Cluster, node int, p *cluster.Pod) int64 {
	var buf cluster.Pod
	n := &c.Nodes[node]
	return n.DeviceMilli(n.Served(p, &buf).TotalGPUMilli())
}

// served returns the GPU demand of pod p, as the trace asks for it (a run's
// asked pod), that node of c serves once the run's pod is placed there:
// what p holds there (held), or on a node of partitions (Node.PerDevice)
// p's own demand in whole devices, which the partitions the run's pod
// holds cover (a 100 milli-GPU pod holds a CPX partition of 125: 100
// served, 25 padding).
func served(c *cluster.Cluster, node int, p *cluster.Pod) int64 {
	if c.Nodes[node].PerDevice > 0 {
		return p.TotalGPUMilli()
	}
	return held(c, node, p)
}

// devicePrice is the price of one whole device of node n's GPUs in USD
// per hour (a partition's times the partitions per device), which
// DeviceMilli's milli-GPU are priced at.
func (w *Workload) devicePrice(n *cluster.Node) float64 {
	return w.price(n.ModelID) * float64(max(1, n.PerDevice))
}

// release returns p's resources to node of c through pl and returns the
// milli-GPU it freed, in whole devices (cluster.Node.DeviceMilli).
func release(pl placer, c *cluster.Cluster, node int, p *cluster.Pod, gpus cluster.GPUSet) (int64, error) {
	before := c.Nodes[node].GPUFreeTotal()
	if err := pl.Release(c, node, p, gpus); err != nil {
		return 0, err
	}
	return c.Nodes[node].DeviceMilli(c.Nodes[node].GPUFreeTotal() - before), nil
}
