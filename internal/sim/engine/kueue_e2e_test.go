// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

// The simulator's Kueue model against a running Kueue: one small workload
// replayed through Kueue v0.17.0 (internal/testenv/kube StartKueue) with
// gpuplane-scheduler on kwok nodes, and through the replay with teams,
// with the same arrivals. docs/simulate-validation.md reports the agreement.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// replayJob is one Job of a replay: team, pods of gpus GPUs each (more
// than one pod: a gang, admitted whole), arriving at step at, deleted at
// step end (-1: never).
type replayJob struct {
	name    string
	team    string
	pods    int32
	gpus    int64
	at, end int
}

// replayCase is a replay: a teams file, nodes of T4 GPUs, and jobs.
type replayCase struct {
	teams string
	nodes []kube.Node
	jobs  []replayJob
	steps int
}

// event is one admission or preemption, at a time step.
type event struct {
	step int
	kind string // "admitted" or "preempted"
	job  string
}

func (e event) String() string { return fmt.Sprintf("%d %s %s", e.step, e.kind, e.job) }

// sortEvents orders events by step, preemptions before admissions (a
// preemptor is admitted once its victims are gone), then by name: the
// order within one step is not compared.
func sortEvents(ev []event) {
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i], ev[j]
		if a.step != b.step {
			return a.step < b.step
		}
		if a.kind != b.kind {
			return a.kind == "preempted"
		}
		return a.job < b.job
	})
}

// outcome is what a replay is compared on: the events and, for each job,
// the nodes of the pods of its last run (sorted).
type outcome struct {
	events []event
	nodes  map[string][]string
	teams  []TeamStats // the simulator's only
}

// simulate replays rc through the simulator (replay with teams, fgd with
// tie-break first, as the test's gpuplane-scheduler runs), one second per
// step.
func simulate(t *testing.T, rc replayCase) outcome {
	t.Helper()
	f := teamsFile(t, rc.teams)
	index := map[string]int{}
	for k, tm := range f.Teams {
		index[tm.Name] = k
	}
	var nodes []trace.NodeSpec
	for _, n := range rc.nodes {
		nodes = append(nodes, trace.NodeSpec{Name: n.Name, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, GPUs: n.GPUs, Model: n.Model})
	}
	var pods []trace.PodSpec
	var team []int
	for _, j := range rc.jobs {
		sched, del := math.NaN(), math.NaN()
		if j.end >= 0 {
			sched, del = float64(j.at), float64(j.end)
		}
		for p := range j.pods {
			name := j.name
			if j.pods > 1 {
				name = fmt.Sprintf("%s#%d", j.name, p)
			}
			pods = append(pods, trace.PodSpec{Name: name, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: int8(j.gpus), GPUMilli: 1000, GPUSpec: "T4",
				Creation: float64(j.at), Scheduled: sched, Deletion: del})
			team = append(team, index[j.team])
		}
	}
	w := prepare(t, nodes, pods)
	rep, err := Run(context.Background(), w, Config{Mode: "replay", Policies: []string{"fgd"}, TieBreak: placement.TieFirst, Seeds: 1, Seed: 1,
		Placements: true, Teams: &Teams{File: f, PodTeam: team}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	out := outcome{nodes: map[string][]string{}, teams: r.Teams}
	for _, e := range r.QuotaEvents {
		out.events = append(out.events, event{step: int(e.Seconds), kind: e.Kind, job: e.Workload})
	}
	for _, p := range r.Placements {
		if p.Node != "" {
			job := p.Pod
			if g := GangOf(job); g != "" {
				job = g
			}
			out.nodes[job] = append(out.nodes[job], p.Node)
		}
	}
	for _, n := range out.nodes {
		sort.Strings(n)
	}
	sortEvents(out.events)
	return out
}

// recorder records the admissions and preemptions of Workloads and the
// nodes pods are bound to, as the watches see them.
type recorder struct {
	mu       sync.Mutex
	t0       time.Time
	step     time.Duration
	events   []event
	reserved map[string]bool // workload -> QuotaReserved
	evicted  map[string]bool
	bound    map[string]string   // pod -> node
	runs     map[string][]string // job -> nodes of its pods, in binding order
}

func (r *recorder) at(t time.Time) int { return int(t.Sub(r.t0) / r.step) }

// workload handles one Workload event.
func (r *recorder) workload(u *unstructured.Unstructured, now time.Time) {
	job := ""
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "Job" {
			job = o.Name
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	res, ev := false, false
	for _, cd := range conds {
		m, _ := cd.(map[string]any)
		switch {
		case m["type"] == "QuotaReserved" && m["status"] == "True":
			res = true
		case m["type"] == "Evicted" && m["status"] == "True" && m["reason"] == "Preempted":
			ev = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	name := u.GetName()
	if ev && !r.evicted[name] {
		r.events = append(r.events, event{step: r.at(now), kind: "preempted", job: job})
	}
	if res && !r.reserved[name] {
		r.events = append(r.events, event{step: r.at(now), kind: "admitted", job: job})
	}
	r.reserved[name], r.evicted[name] = res, ev
}

// pod handles one Pod event.
func (r *recorder) pod(p *corev1.Pod) {
	if p.Spec.NodeName == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.bound[p.Name]; ok {
		return
	}
	r.bound[p.Name] = p.Spec.NodeName
	job := p.Labels["job-name"]
	r.runs[job] = append(r.runs[job], p.Spec.NodeName)
}

// watchAll feeds the recorder from watches on Workloads and Pods until
// ctx ends.
func (r *recorder) watchAll(ctx context.Context, t *testing.T, c *kube.Cluster) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ww, err := dyn.Resource(kube.KueueGV.WithResource("workloads")).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.Client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for e := range ww.ResultChan() {
			if u, ok := e.Object.(*unstructured.Unstructured); ok && e.Type != watch.Deleted {
				r.workload(u, time.Now())
			}
		}
	}()
	go func() {
		for e := range pw.ResultChan() {
			if p, ok := e.Object.(*corev1.Pod); ok {
				r.pod(p)
			}
		}
	}()
	go func() {
		<-ctx.Done()
		ww.Stop()
		pw.Stop()
	}()
}

// kueueReplay replays rc through Kueue, one step every step.
func kueueReplay(t *testing.T, rc replayCase, step time.Duration) outcome {
	t.Helper()
	f := teamsFile(t, rc.teams)
	c := kube.StartT(t, kube.Options{})
	kube.StartKueueT(t, c, kube.KueueOptions{ExcludeResourcePrefixes: quota.KueueConfig().Resources.ExcludeResourcePrefixes})
	kube.StartGPUplaneSchedulerT(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if err := c.CreateNodes(ctx, rc.nodes); err != nil {
		t.Fatal(err)
	}
	capacity := map[string]int{}
	for _, n := range rc.nodes {
		capacity[n.Model] += n.GPUs
	}
	objs, err := quota.Plan("teams.yaml", f, capacity)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := quota.WriteYAML(&buf, objs); err != nil {
		t.Fatal(err)
	}
	for _, tm := range f.Teams {
		if err := c.CreateNamespaces(ctx, tm.Namespaces...); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ApplyYAML(ctx, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Kueue must see the queues before the first Job: wait until each
	// team's LocalQueue is served by an active ClusterQueue.
	waitQueues(ctx, t, c, f)
	r := &recorder{step: step, reserved: map[string]bool{}, evicted: map[string]bool{}, bound: map[string]string{}, runs: map[string][]string{}}
	r.t0 = time.Now().Truncate(time.Second).Add(time.Second)
	r.watchAll(ctx, t, c)
	for s := 0; s <= rc.steps; s++ {
		if err := sleepUntil(ctx, c, r.t0.Add(time.Duration(s)*step)); err != nil {
			t.Fatal(err)
		}
		for _, j := range rc.jobs {
			if j.end == s {
				bg := metav1.DeletePropagationBackground
				if err := c.Client.BatchV1().Jobs(j.team).Delete(ctx, j.name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, j := range rc.jobs {
			if j.at == s {
				if _, err := c.Client.BatchV1().Jobs(j.team).Create(ctx, kube.KueueJob(j.team, j.name, j.team, j.pods, j.gpus), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := sleepUntil(ctx, c, r.t0.Add(time.Duration(rc.steps+1)*step)); err != nil {
		t.Fatal(err)
	}
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := outcome{events: append([]event(nil), r.events...), nodes: map[string][]string{}}
	for _, j := range rc.jobs {
		runs := r.runs[j.name]
		if len(runs) >= int(j.pods) {
			last := append([]string(nil), runs[len(runs)-int(j.pods):]...)
			sort.Strings(last)
			out.nodes[j.name] = last
		}
	}
	sortEvents(out.events)
	return out
}

// waitQueues waits until every team's ClusterQueue is Active.
func waitQueues(ctx context.Context, t *testing.T, c *kube.Cluster, f *quota.Teams) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range f.Teams {
		for {
			u, err := dyn.Resource(kube.KueueGV.WithResource("clusterqueues")).Get(ctx, tm.Name, metav1.GetOptions{})
			if err == nil && kube.ConditionTrue(u, "Active") {
				break
			}
			if err := sleepUntil(ctx, c, time.Now().Add(100*time.Millisecond)); err != nil {
				t.Fatalf("ClusterQueue %s not active: %v", tm.Name, err)
			}
		}
	}
}

// sleepUntil waits until t; it ends early, with an error, when a
// control-plane component exits or ctx ends.
func sleepUntil(ctx context.Context, c *kube.Cluster, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-c.Exited():
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// compare reports the two outcomes side by side and whether they agree.
func compare(t *testing.T, sim, kq outcome) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %-28s\n", "Kueue v0.17.0", "simulate --teams")
	for i := range max(len(kq.events), len(sim.events)) {
		var k, s string
		if i < len(kq.events) {
			k = kq.events[i].String()
		}
		if i < len(sim.events) {
			s = sim.events[i].String()
		}
		mark := ""
		if k != s {
			mark = "  <- differs"
		}
		fmt.Fprintf(&b, "%-28s %-28s%s\n", k, s, mark)
	}
	var jobs []string
	for j := range kq.nodes {
		jobs = append(jobs, j)
	}
	for j := range sim.nodes {
		if _, ok := kq.nodes[j]; !ok {
			jobs = append(jobs, j)
		}
	}
	sort.Strings(jobs)
	placed := 0
	for _, j := range jobs {
		k, s := strings.Join(kq.nodes[j], ","), strings.Join(sim.nodes[j], ",")
		mark := ""
		if k != s {
			mark = "  <- differs"
		} else {
			placed++
		}
		fmt.Fprintf(&b, "placed %-6s %-20s %-20s%s\n", j, k, s, mark)
	}
	t.Logf("replay:\n%s", b.String())
	same := 0
	for i := range min(len(kq.events), len(sim.events)) {
		if kq.events[i] == sim.events[i] {
			same++
		}
	}
	t.Logf("agreement: %d of %d events, %d of %d placements", same, max(len(kq.events), len(sim.events)), placed, len(jobs))
	if same != len(kq.events) || len(kq.events) != len(sim.events) || placed != len(jobs) {
		t.Error("the simulator and Kueue differ (table above)")
	}
}

// labCase is the replay of docs/simulate-validation.md: teams a (priority 0) and b
// (priority 100) with 4 T4s of nominal quota each in one cohort, on two
// nodes of 4 T4s. Worked out from Kueue's source (pkg/scheduler
// scheduler.go, pkg/scheduler/preemption):
//
//	0 b1 (4) admitted within b's nominal
//	1 b2 (2) admitted, b borrowing 2 of a's idle quota
//	2 g, a gang of 2 pods of 1 GPU, admitted within a's nominal
//	3 a2 (2): a within nominal, the cohort full: reclaimWithinCohort Any
//	  preempts b2, the borrowing workload; a2 admitted
//	4 a3 (1): a would borrow; b does not borrow, so nothing to preempt:
//	  a3 waits
//	5 g deleted: a3 (within nominal) and b2 (would borrow, priority 100)
//	  both fit alone; Kueue orders heads within nominal first: a3
//	  admitted, b2 no longer fits and waits
//	6 b1 deleted: b2 admitted
var labCase = replayCase{
	teams: `cohort: lab
teams:
- {name: a, namespaces: [a], priority: 0, quotas: [{model: T4, product: T4, nominal: 4}]}
- {name: b, namespaces: [b], priority: 100, quotas: [{model: T4, nominal: 4}]}
`,
	nodes: []kube.Node{
		{Name: "n0", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"},
		{Name: "n1", CPUMilli: 32000, MemoryMiB: 128 << 10, GPUs: 4, Model: "T4"},
	},
	jobs: []replayJob{
		{name: "b1", team: "b", pods: 1, gpus: 4, at: 0, end: 6},
		{name: "b2", team: "b", pods: 1, gpus: 2, at: 1, end: -1},
		{name: "g", team: "a", pods: 2, gpus: 1, at: 2, end: 5},
		{name: "a2", team: "a", pods: 1, gpus: 2, at: 3, end: -1},
		{name: "a3", team: "a", pods: 1, gpus: 1, at: 4, end: -1},
	},
	steps: 6,
}

// TestSimulatorAgreesWithKueue replays labCase through Kueue (3 s a step)
// and the simulator and compares admissions, preemptions and time steps,
// and the nodes of each job's last run.
func TestSimulatorAgreesWithKueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		rc   replayCase
	}{{"lab", labCase}, {"unplaceable", unplaceableCase}, {"victim", victimCase}} {
		t.Run(tc.name, func(t *testing.T) {
			sim := simulate(t, tc.rc)
			kq := kueueReplay(t, tc.rc, 3*time.Second)
			compare(t, sim, kq)
		})
	}
}
