// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package alloc attributes a cluster's GPU cost over a time window to
// the pods that held its GPUs, and the rest to idle capacity: the accounting
// core of gpuplane cost. It is a separate package from
// internal/cost/prices because it has a different job: internal/cost/prices keeps the one
// catalogue of prices and the simulator's rate arithmetic; this package takes
// those prices and a record of who held which GPU share when, and keeps the
// books. It reads nothing (no Prometheus, no Kubernetes) and uses the
// standard library and internal packages only.
//
// Rules (docs/cost.md gives them in full, with sources):
//   - Times are Unix milliseconds, Prometheus's timestamp unit; intervals are
//     half-open [start, end) and clipped to the window.
//   - A share is priced as the fraction of the GPU it holds: a whole GPU 1; a
//     MIG instance its compute slices over the GPU's compute slices (3g on an
//     A100 is 3/7; NVIDIA Multi-Instance GPU User Guide, "Supported MIG
//     Profiles"); a time-sliced replica 1/replicas; a fractional share
//     milli/1000.
//   - Where the holdings of one GPU add up to more than one GPU (which the
//     device plugin cannot produce), each is scaled down by the same factor
//     so that they add up to exactly one GPU, and a warning names the GPU.
//   - What no pod held of a GPU, the whole GPU or the remainder of a partly
//     held one, is idle, per node and model.
//   - Prices are taken to the micro-USD per GPU-hour and all sums are exact
//     rationals, so allocated plus idle equals the GPUs' cost over the window
//     exactly; rows are rounded to cents once, at the end, by the largest
//     remainder method, so that the cents add up to the window's cost
//     rounded half up to the cent.
package alloc

import (
	"fmt"
	"github.com/gpuplane/gpuplane/api/resource"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"math"
	"math/big"
	"sort"
	"time"
)

// msPerHour is one hour in milliseconds.
const msPerHour = 3_600_000

// DefaultMaxSampleHold is how long a utilisation sample stands for when no
// later sample follows, in milliseconds: Prometheus's default lookback delta
// (5 minutes, --query.lookback-delta), after which a series counts as stale.
const DefaultMaxSampleHold = 5 * 60 * 1000

// GPU is one physical GPU of the cluster.
type GPU struct {
	// Node is the Kubernetes node the GPU is on.
	Node string
	// UUID is the GPU's UUID, e.g. "GPU-5f1e...".
	UUID string
	// Model is the internal/gpu catalog model name, e.g. "A100-80GB", and
	// the key of its price.
	Model string
	// MIGSlices is the number of compute slices of the whole GPU; 0 takes
	// it from internal/gpu's MIG table (7 for A100, H100, H200: NVIDIA
	// Multi-Instance GPU User Guide, "Supported MIG Profiles", 7g = whole
	// GPU).
	MIGSlices int
	// Partition, for an AMD GPU that is a partition of a device (an
	// amd.com/gpu of a node in CPX: one of 8 of an MI300X), is the
	// device's partition mode; the GPU is priced at its share of the
	// device's price (cost.Prices.PartitionUSDPerHour: 6.00 / 8 = 0.75
	// USD per hour). The zero value: a whole device.
	Partition gpu.Partition
	// Start and End bound the GPU's life in the cluster, [Start, End) in
	// Unix milliseconds, for a node added or removed within the window: it
	// costs, and is idle, only then. 0 means the window's From (Start) or
	// To (End). A holding outside the life is cut to it, with a warning.
	Start, End int64
}

// ShareKind says how a holding divides a GPU.
type ShareKind int

// Share kinds.
const (
	// Whole is a whole GPU.
	Whole ShareKind = iota
	// MIG is a MIG instance of Share.Slices compute slices.
	MIG
	// Replica is one of Share.Replicas time-slicing replicas.
	Replica
	// Milli is Share.Milli milli-GPU of a fractional share.
	Milli
)

// Share is the part of one GPU a holding holds.
type Share struct {
	Kind ShareKind
	// Slices is the MIG instance's compute slices (the N of "Ng"), for MIG.
	Slices int
	// Replicas is the GPU's time-slicing replica count, for Replica.
	Replicas int
	// Milli is the share in milli-GPU (1..1000), for Milli.
	Milli int64
	// Num and Den, when Den is above 0, make the holding Num/Den (0 <
	// Num <= Den) of the share above: k of R time-slicing replicas of a
	// MIG instance is Kind MIG, Num k, Den R (3g on an A100, 1 of 2
	// replicas: 3/7 x 1/2 = 3/14 of the GPU). Den 0 means the whole share.
	Num, Den int64
}

// MIGShare returns the share of a MIG instance of the named profile (e.g.
// "3g.40gb") on a GPU of the named catalog model, from internal/gpu's MIG
// table.
func MIGShare(model, profile string) (Share, error) {
	p, ok := gpu.LookupMIGProfile(model, profile)
	if !ok {
		return Share{}, fmt.Errorf("no MIG profile %q for GPU model %q", profile, model)
	}
	return Share{Kind: MIG, Slices: p.ComputeSlices}, nil
}

// Holding is a pod holding a share of one GPU over [Start, End).
type Holding struct {
	Namespace, Pod string
	// Job is the pod's job (its top owner); empty counts as the pod.
	Job string
	// Team is the team the pod's namespace belongs to; empty is "(none)".
	Team string
	// GPU is the UUID of the GPU held.
	GPU   string
	Share Share
	// Util, when not empty, is the key in Input.Util of the utilisation
	// samples of the device held (a MIG device's own); empty takes the
	// GPU's (Input.Util[GPU]).
	Util string
	// Start and End bound the holding, in Unix milliseconds.
	Start, End int64
}

// Sample is one utilisation sample of a GPU: the share of time its engines
// were busy (0..1, e.g. DCGM_FI_PROF_GR_ENGINE_ACTIVE) at Time, in Unix
// milliseconds. A sample stands until the next one, at most MaxSampleHold.
type Sample struct {
	Time int64
	Util float64
}

// Grid is a device's utilisation on a regular grid: U[i] x Scale (0..1;
// NaN: no sample, unused) stands for [Start + i*Step, Start + (i+1)*Step),
// times in Unix milliseconds. float32 keeps a month at one sample a minute
// for 1,000 GPUs in 173 MB; Scale 0.01 keeps DCGM_FI_DEV_GPU_UTIL's whole
// percents exact.
type Grid struct {
	Start, Step int64
	U           []float32
	// Scale multiplies U; 0 means 1.
	Scale float64
}

func (g *Grid) scale() float64 {
	if g.Scale == 0 {
		return 1
	}
	return g.Scale
}

// busy returns the busy GPU-milliseconds in [t0, t1).
func (g *Grid) busy(t0, t1 int64) float64 {
	if t1 <= t0 || len(g.U) == 0 {
		return 0
	}
	i0 := int64(0)
	if t0 > g.Start {
		i0 = (t0 - g.Start) / g.Step
	}
	sum, sc := 0.0, g.scale()
	for i := i0; i < int64(len(g.U)); i++ {
		s := g.Start + i*g.Step
		if s >= t1 {
			break
		}
		u := g.U[i]
		if u != u { // NaN
			continue
		}
		sum += float64(u) * sc * float64(min(s+g.Step, t1)-max(s, t0))
	}
	return sum
}

// busySource is a device's utilisation over time.
type busySource interface {
	// busy returns the busy GPU-milliseconds in [t0, t1).
	busy(t0, t1 int64) float64
}

// Input is what Compute accounts for.
type Input struct {
	// From and To bound the window [From, To), in Unix milliseconds.
	From, To int64
	GPUs     []GPU
	Holdings []Holding
	// Util holds each GPU's utilisation samples, by GPU UUID, in any
	// order, and those of devices named by Holding.Util.
	Util map[string][]Sample
	// UtilGrid holds utilisation on a regular grid, by the same keys as
	// Util, a compact form for long windows; a key in both is an error.
	UtilGrid map[string]Grid
	// MaxSampleHold is the longest a sample stands for, in milliseconds; 0
	// means DefaultMaxSampleHold.
	MaxSampleHold int64
	// Prices gives USD per GPU-hour by model; a model without a price costs
	// 0, with a warning.
	Prices *cost.Prices
}

// Ledger is the exact account of one window.
type Ledger struct {
	// Warnings lists what was clamped or priced 0.
	Warnings []string
	from, to int64
	holdings []held
	idle     map[idleKey]*idleAcc
	asset    *big.Rat // cents
}

type held struct {
	h       Holding
	node    string
	model   string
	shareMs *big.Rat // GPU-milliseconds allocated
	cents   *big.Rat
	usedMs  float64 // GPU-milliseconds used
}

type idleKey struct{ node, model string }

type idleAcc struct {
	ms    *big.Rat // GPU-milliseconds idle
	cents *big.Rat
}

// fraction returns the share as a fraction of the GPU g, checked.
func (s Share) fraction(g GPU) (*big.Rat, error) {
	f, err := s.kindFraction(g)
	if err != nil || s.Den == 0 {
		return f, err
	}
	if s.Den < 0 || s.Num < 1 || s.Num > s.Den {
		return nil, fmt.Errorf("part %d/%d outside (0, 1]", s.Num, s.Den)
	}
	return f.Mul(f, big.NewRat(s.Num, s.Den)), nil
}

// kindFraction returns the fraction of the GPU g of the share's kind alone.
func (s Share) kindFraction(g GPU) (*big.Rat, error) {
	switch s.Kind {
	case Whole:
		return big.NewRat(1, 1), nil
	case MIG:
		total := g.MIGSlices
		if total == 0 {
			for _, p := range gpu.MIGProfiles(g.Model) {
				total = max(total, p.ComputeSlices)
			}
		}
		if total == 0 {
			return nil, fmt.Errorf("MIG share on GPU %s of model %q, which has no MIG slice count (set MIGSlices)", g.UUID, g.Model)
		}
		if s.Slices < 1 || s.Slices > total {
			return nil, fmt.Errorf("MIG slices %d outside 1..%d of GPU %s", s.Slices, total, g.UUID)
		}
		return big.NewRat(int64(s.Slices), int64(total)), nil
	case Replica:
		if s.Replicas < 1 {
			return nil, fmt.Errorf("replicas %d, want at least 1", s.Replicas)
		}
		return big.NewRat(1, int64(s.Replicas)), nil
	case Milli:
		if s.Milli < 1 || s.Milli > resource.MilliPerGPU {
			return nil, fmt.Errorf("milli-GPU %d outside 1..%d", s.Milli, resource.MilliPerGPU)
		}
		return big.NewRat(s.Milli, resource.MilliPerGPU), nil
	}
	return nil, fmt.Errorf("unknown share kind %d", s.Kind)
}

func (h Holding) name() string {
	if h.Pod == "" {
		return "(unattributed)"
	}
	return h.Namespace + "/" + h.Pod
}

// Fraction returns the share as a fraction of the GPU g, by the pricing
// rule above (whole 1, MIG slices over the GPU's compute slices, replica
// 1/replicas, milli-GPU/1000); an error names what is out of range. It is
// the one home of the rule: internal/cost/rightsize prices a recommended share by
// it too.
func (s Share) Fraction(g GPU) (*big.Rat, error) { return s.fraction(g) }

// utilCurve is a GPU's cumulative utilisation: busy milliseconds since the
// first sample, at each sample.
type utilCurve struct {
	t    []int64
	u    []float64
	cum  []float64
	hold int64
}

func (c *utilCurve) busy(t0, t1 int64) float64 { return c.at(t1) - c.at(t0) }

// at returns busy GPU-milliseconds from the first sample to t.
func (c *utilCurve) at(t int64) float64 {
	k := sort.Search(len(c.t), func(i int) bool { return c.t[i] > t }) - 1
	if k < 0 {
		return 0
	}
	return c.cum[k] + c.u[k]*float64(min(t-c.t[k], c.hold))
}

func newCurve(uuid string, s []Sample, hold int64) (*utilCurve, error) {
	s = append([]Sample(nil), s...)
	sort.Slice(s, func(i, j int) bool { return s[i].Time < s[j].Time })
	c := &utilCurve{t: make([]int64, len(s)), u: make([]float64, len(s)), cum: make([]float64, len(s)), hold: hold}
	for i, x := range s {
		if !(x.Util >= 0 && x.Util <= 1) {
			return nil, fmt.Errorf("GPU %s: utilisation %v at %s outside 0..1", uuid, x.Util, rfc3339(x.Time))
		}
		if i > 0 && x.Time == s[i-1].Time {
			return nil, fmt.Errorf("GPU %s: two utilisation samples at %s", uuid, rfc3339(x.Time))
		}
		c.t[i], c.u[i] = x.Time, x.Util
		if i > 0 {
			c.cum[i] = c.cum[i-1] + c.u[i-1]*float64(min(x.Time-c.t[i-1], hold))
		}
	}
	return c, nil
}

// source returns the utilisation of the device key: its grid, else its
// samples (none: never busy).
func (in Input) source(key string, hold int64) (busySource, error) {
	g, ok := in.UtilGrid[key]
	if !ok {
		return newCurve(key, in.Util[key], hold)
	}
	if _, both := in.Util[key]; both {
		return nil, fmt.Errorf("device %s: utilisation both as samples and as a grid", key)
	}
	if g.Step <= 0 {
		return nil, fmt.Errorf("device %s: utilisation grid step %d ms, want a positive step", key, g.Step)
	}
	if !(g.Scale >= 0) {
		return nil, fmt.Errorf("device %s: utilisation grid scale %v, want 0 or more", key, g.Scale)
	}
	for i, u := range g.U {
		if v := float64(u) * g.scale(); u == u && !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("device %s: utilisation %v at %s outside 0..1", key, v, rfc3339(g.Start+int64(i)*g.Step))
		}
	}
	return &g, nil
}

// Compute keeps the books of one window. Errors name the GPU or holding (by
// index and pod) and the field at fault.
func Compute(in Input) (*Ledger, error) {
	if in.To <= in.From {
		return nil, fmt.Errorf("window: to %s is not after from %s", rfc3339(in.To), rfc3339(in.From))
	}
	hold := in.MaxSampleHold
	if hold == 0 {
		hold = DefaultMaxSampleHold
	}
	if hold < 0 {
		return nil, fmt.Errorf("max sample hold %d ms is negative", hold)
	}
	prices := in.Prices
	if prices == nil {
		prices = &cost.Prices{}
	}
	l := &Ledger{from: in.From, to: in.To, idle: map[idleKey]*idleAcc{}, asset: new(big.Rat)}
	byUUID, err := indexGPUs(in.GPUs)
	if err != nil {
		return nil, err
	}
	perGPU, err := holdingsByGPU(in, byUUID)
	if err != nil {
		return nil, err
	}
	devUtil, err := deviceSources(in, hold)
	if err != nil {
		return nil, err
	}
	l.warnStrayUtil(in, byUUID, devUtil)
	unpriced := map[string]bool{}
	for gi, g := range in.GPUs {
		pr, ok := prices.Get(g.Model)
		if g.Partition != (gpu.Partition{}) {
			pr.USDPerHour = prices.PartitionUSDPerHour(g.Model, g.Partition)
		}
		if (!ok || pr.USDPerHour == 0) && !unpriced[g.Model] {
			unpriced[g.Model] = true
			l.Warnings = append(l.Warnings, fmt.Sprintf("no price for GPU model %q; its GPUs cost 0", g.Model))
		}
		if err := l.book(in, g, pr.USDPerHour, hold, perGPU[gi], devUtil); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// indexGPUs checks the GPUs and returns their indices by UUID.
func indexGPUs(gpus []GPU) (map[string]int, error) {
	byUUID := map[string]int{}
	for i, g := range gpus {
		if g.UUID == "" {
			return nil, fmt.Errorf("GPU %d (node %q): empty UUID", i, g.Node)
		}
		if g.End != 0 && g.End < g.Start {
			return nil, fmt.Errorf("GPU %s: life ends at %s before it starts at %s", g.UUID, rfc3339(g.End), rfc3339(g.Start))
		}
		if _, dup := byUUID[g.UUID]; dup {
			return nil, fmt.Errorf("GPU %d: UUID %s listed twice", i, g.UUID)
		}
		byUUID[g.UUID] = i
	}
	return byUUID, nil
}

// holdingsByGPU checks the holdings and returns their indices by GPU.
func holdingsByGPU(in Input, byUUID map[string]int) ([][]int, error) {
	perGPU := make([][]int, len(in.GPUs))
	for i, h := range in.Holdings {
		gi, ok := byUUID[h.GPU]
		if !ok {
			return nil, fmt.Errorf("holding %d (%s): GPU %q is not in the GPU list", i, h.name(), h.GPU)
		}
		if h.End < h.Start {
			return nil, fmt.Errorf("holding %d (%s): end %s before start %s", i, h.name(), rfc3339(h.End), rfc3339(h.Start))
		}
		if _, err := h.Share.fraction(in.GPUs[gi]); err != nil {
			return nil, fmt.Errorf("holding %d (%s): share: %w", i, h.name(), err)
		}
		perGPU[gi] = append(perGPU[gi], i)
	}
	return perGPU, nil
}

// deviceSources returns the utilisation of each device that a holding
// names, by key.
func deviceSources(in Input, hold int64) (map[string]busySource, error) {
	devUtil := map[string]busySource{}
	for _, h := range in.Holdings {
		if h.Util != "" && devUtil[h.Util] == nil {
			c, err := in.source(h.Util, hold)
			if err != nil {
				return nil, err
			}
			devUtil[h.Util] = c
		}
	}
	return devUtil, nil
}

// warnStrayUtil warns of utilisation for a GPU not in the list that no
// holding names either.
func (l *Ledger) warnStrayUtil(in Input, byUUID map[string]int, devUtil map[string]busySource) {
	keys := make([]string, 0, len(in.Util)+len(in.UtilGrid))
	for uuid := range in.Util {
		keys = append(keys, uuid)
	}
	for uuid := range in.UtilGrid {
		keys = append(keys, uuid)
	}
	sort.Strings(keys)
	for _, uuid := range keys {
		if _, ok := byUUID[uuid]; !ok && devUtil[uuid] == nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("utilisation samples for GPU %s, which is not in the GPU list, ignored", uuid))
		}
	}
}

// book keeps the books of GPU g, priced usdPerHour, over its life in the
// window: what its holdings idx cost, and its idle time and cost.
func (l *Ledger) book(in Input, g GPU, usdPerHour float64, hold int64, idx []int, devUtil map[string]busySource) error {
	// micro-USD per GPU-hour; cents per GPU-millisecond = micro / 1e4 / 3.6e6.
	micro := int64(math.Round(usdPerHour * 1e6))
	centsPerMs := big.NewRat(micro, 1e4*msPerHour)
	curve, err := in.source(g.UUID, hold)
	if err != nil {
		return err
	}
	from, to := g.life(in.From, in.To)
	life := max(to-from, 0)
	hs, clamped, cut := sweep(in, g, from, to, idx, curve, devUtil)
	if clamped != "" {
		l.Warnings = append(l.Warnings, clamped)
	}
	if cut != "" {
		l.Warnings = append(l.Warnings, cut)
	}
	idleMs := big.NewRat(life, 1)
	for _, x := range hs {
		if x.shareMs.Sign() == 0 {
			continue // held nothing within the window
		}
		idleMs.Sub(idleMs, x.shareMs)
		x.cents = new(big.Rat).Mul(x.shareMs, centsPerMs)
		l.holdings = append(l.holdings, x)
	}
	k := idleKey{g.Node, g.Model}
	acc := l.idle[k]
	if acc == nil {
		acc = &idleAcc{ms: new(big.Rat), cents: new(big.Rat)}
		l.idle[k] = acc
	}
	acc.ms.Add(acc.ms, idleMs)
	acc.cents.Add(acc.cents, new(big.Rat).Mul(idleMs, centsPerMs))
	l.asset.Add(l.asset, new(big.Rat).Mul(big.NewRat(life, 1), centsPerMs))
	return nil
}

// sweep accounts for the holdings idx of GPU g within [from, to), its life
// in the window: the GPU-milliseconds each held (scaled down where they add
// up to more than one GPU) and used. It returns a warning when it scaled,
// and one when it cut a holding to the GPU's life.
func sweep(in Input, g GPU, from, to int64, idx []int, gpuCurve busySource, devUtil map[string]busySource) ([]held, string, string) {
	type event struct {
		t     int64
		i     int // into out
		start bool
	}
	cut := ""
	out := make([]held, 0, len(idx))
	frac := make([]*big.Rat, 0, len(idx))
	curves := make([]busySource, 0, len(idx))
	var ev []event
	for _, hi := range idx {
		h := in.Holdings[hi]
		curve := gpuCurve
		if h.Util != "" {
			curve = devUtil[h.Util]
		}
		curves = append(curves, curve)
		s, e := max(h.Start, from), min(h.End, to)
		if ws, we := max(h.Start, in.From), min(h.End, in.To); cut == "" && ws < we && (ws < from || we > to) {
			cut = fmt.Sprintf("GPU %s on node %s: holding %s from %s to %s outside the GPU's life in the window (%s to %s); cut to it", g.UUID, g.Node, h.name(), rfc3339(h.Start), rfc3339(h.End), rfc3339(from), rfc3339(to))
		}
		f, _ := h.Share.fraction(g)
		x := held{h: h, node: g.Node, model: g.Model, shareMs: new(big.Rat)}
		if e > s {
			x.shareMs.Mul(f, big.NewRat(e-s, 1))
			fl, _ := f.Float64()
			x.usedMs = fl * curve.busy(s, e)
			ev = append(ev, event{s, len(out), true}, event{e, len(out), false})
		}
		out = append(out, x)
		frac = append(frac, f)
	}
	sort.Slice(ev, func(a, b int) bool {
		if ev[a].t != ev[b].t {
			return ev[a].t < ev[b].t
		}
		return !ev[a].start && ev[b].start // ends first: [start, end)
	})
	one := big.NewRat(1, 1)
	total := new(big.Rat)
	active := map[int]bool{}
	warn := ""
	for k, x := range ev {
		if k > 0 && x.t > ev[k-1].t && total.Cmp(one) > 0 {
			// [prev, t) holds more than one GPU: scale each share by 1/total.
			t0, t1 := ev[k-1].t, x.t
			if warn == "" {
				warn = fmt.Sprintf("GPU %s on node %s: holdings add up to %s GPU from %s; scaled down to 1 GPU", g.UUID, g.Node, total.FloatString(3), rfc3339(t0))
			}
			cut := new(big.Rat).Sub(one, new(big.Rat).Inv(total)) // share of each holding removed
			cutF, _ := cut.Float64()
			for i := range active {
				busy := curves[i].busy(t0, t1)
				d := new(big.Rat).Mul(frac[i], big.NewRat(t1-t0, 1))
				d.Mul(d, cut)
				out[i].shareMs.Sub(out[i].shareMs, d)
				fl, _ := frac[i].Float64()
				out[i].usedMs -= fl * cutF * busy
			}
		}
		if x.start {
			active[x.i] = true
			total.Add(total, frac[x.i])
		} else {
			delete(active, x.i)
			total.Sub(total, frac[x.i])
		}
	}
	return out, warn, cut
}

// life returns the GPU's life within the window [from, to).
func (g GPU) life(from, to int64) (int64, int64) {
	if g.Start != 0 {
		from = max(from, g.Start)
	}
	if g.End != 0 {
		to = min(to, g.End)
	}
	return from, to
}

// rfc3339 writes a time in Unix milliseconds as an RFC 3339 UTC time, as
// the command line takes it.
func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
