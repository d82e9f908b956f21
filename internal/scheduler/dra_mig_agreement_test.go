// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// migPods are the MIG profiles (gpu.MIGProfiles index on A100-80GB) the
// MIG agreement draws from: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb,
// 7g.80gb.
var migPods = []int{0, 2, 3, 4, 5, 6}

// TestSimAgreementDRAMIG is TestSimAgreementDRA with MIG on demand: 12
// kwok nodes of 8 MIG-mode A100-80GB whose every placement gpuplane's
// driver publishes (dra.Build with MIG: counters), and 240 pods drawn
// with a fixed seed: five in six a claim of class mig.nvidia.com for one
// profile (a selector on the profile attribute), the others
// nvidia.com/gpu: 1 or 2. The simulator's side is a cluster of
// GPUs of MIG on demand (cluster.Node.EnableDynamicMIG, as `simulate
// --gpu-api dra --sharing mig` makes it), the scheduler's the real
// allocator's devices; the GPU and, for a MIG pod, the start slot must be
// the same for every pod.
func TestSimAgreementDRAMIG(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and gpuplane-scheduler")
	}
	const nodes, gpus, pods = 12, 8, 240
	podsFile := testenv.Openb(t, "openb_pod_list_default.csv")
	rng := rand.New(rand.NewPCG(7, 0))
	draws := make([]migDraw, pods)
	for i := range draws {
		draws[i].cpu = 1000 * int64(1+rng.IntN(8))
		if rng.IntN(6) == 0 {
			draws[i].gpus = []int{1, 2}[rng.IntN(2)]
		} else {
			draws[i].k = migPods[rng.IntN(len(migPods))]
		}
	}
	profiles := gpu.MIGProfiles("A100-80GB")
	want, kwok := simMIGDecisions(t, draws, nodes, gpus, podsFile)

	// The scheduler's.
	kc := startCluster(t, kwok)
	installClasses(t, kc.Client)
	for _, n := range kwok {
		publishSlices(t, kc.Client, n.Name, migGPUs(gpus), dra.Options{MIG: true}, nil)
	}
	for _, k := range migPods {
		createMIGTemplate(t, kc, profiles[k].Name)
	}
	sp := startScheduler(t, kc, map[string]any{"policy": "fgd", "tieBreak": "first", "targetWorkloadFile": podsFile})
	agree, disagree, placed := 0, 0, 0
	for i, d := range draws {
		spec := podSpec{name: fmt.Sprintf("p%05d", i), cpu: fmt.Sprintf("%dm", d.cpu), mem: "1Gi", gpus: int64(d.gpus)}
		if d.gpus == 0 {
			createClaimPod(t, kc.Client, spec, "mig-"+profiles[d.k].Name)
		} else {
			createPod(t, kc.Client, spec)
		}
		node, devices, _ := waitDRAPod(t, kc.Client, sp, spec.name)
		got := decision{node: node, gpus: migDecision(devices)}
		if node != "" {
			placed++
		} else {
			zero := int64(0)
			kc.Client.CoreV1().Pods("default").Delete(t.Context(), spec.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
		if got == want[i] {
			agree++
		} else if disagree++; disagree <= 10 {
			t.Errorf("pod %d (%d GPUs, MIG %s): scheduler %v (%s), simulator %v", i, d.gpus, profiles[d.k].Name, got, devices, want[i])
		}
	}
	t.Logf("fgd dra MIG on demand: %d nodes of %d A100-80GB, %d pods (%d placed): %d agree (%.2f%%)", nodes, gpus, pods, placed, agree, 100*float64(agree)/pods)
}

// simMIGDecisions places draws as the simulator does under --gpu-api dra
// --sharing mig: fgd over nodes of gpus A100-80GB of MIG on demand, the
// devices by placement.DRAGPUs; a MIG pod's decision is "<GPU>:<start>".
// It returns the decisions and the nodes for kwok.
func simMIGDecisions(t *testing.T, draws []migDraw, nodes, gpus int, podsFile string) ([]decision, []kube.Node) {
	tw, err := scheduler.TargetWorkload(podsFile, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := placement.New("fgd", tw)
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.New()
	var kwok []kube.Node
	for i := range nodes {
		name := fmt.Sprintf("m%02d", i)
		ni, err := c.AddNode(name, 96000, 1<<20, gpus, "A100-80GB")
		if err != nil {
			t.Fatal(err)
		}
		for g := range gpus {
			if err := c.Nodes[ni].EnableDynamicMIG(g); err != nil {
				t.Fatal(err)
			}
		}
		kwok = append(kwok, kube.Node{Name: name, CPUMilli: 96000, MemoryMiB: 1 << 20})
	}
	pl := placement.NewPlacer(placement.WithGPUAPI(pol, placement.DRA), placement.TieFirst, rand.New(rand.NewPCG(1, 0)))
	want := make([]decision, len(draws))
	for i, d := range draws {
		p := cluster.Pod{Name: fmt.Sprint(i), CPUMilli: d.cpu, MemoryMiB: 1024, NumGPU: d.gpus, GPUMilli: 1000}
		if d.gpus == 0 {
			p.NumGPU, p.MIGProfile, p.GPUMilli, p.Resource = 1, int8(d.k+1), cluster.MIGMilli(d.k), cluster.ResourceMIG
		}
		ni, set, ok := pl.Place(c, &p)
		if !ok {
			continue
		}
		n := &c.Nodes[ni]
		before := fmt.Sprint(n.DynamicMIGStarts(set.Indices()[0], d.k))
		if err := c.Allocate(ni, &p, set); err != nil {
			t.Fatal(err)
		}
		want[i] = decision{n.Name, gpuList(set)}
		if d.gpus == 0 {
			g := set.Indices()[0]
			want[i].gpus += ":" + newStart(before, n.DynamicMIGStarts(g, d.k))
		}
	}
	return want, kwok
}

// migDraw is one pod of the MIG agreement: cpu millicores and either
// gpus whole GPUs or, when gpus is 0, one MIG instance of profile k.
type migDraw struct {
	cpu  int64
	gpus int
	k    int
}

// newStart returns the start in after that before (fmt.Sprint of the
// previous starts) lacks.
func newStart(before string, after []int) string {
	for _, s := range after {
		if !strings.Contains(" "+strings.Trim(before, "[]")+" ", " "+strconv.Itoa(s)+" ") {
			return strconv.Itoa(s)
		}
	}
	return "?"
}

// migDecision reads allocated devices as GPU indices, a MIG device
// gpu-<minor>-mig-<profile>-<id>-<start> as "<minor>:<start>".
func migDecision(devices string) string {
	var out []string
	for _, d := range strings.Split(devices, ",") {
		if d == "" {
			continue
		}
		d = strings.TrimPrefix(d, "gpu-")
		if g, rest, ok := strings.Cut(d, "-mig-"); ok {
			d = g + ":" + rest[strings.LastIndexByte(rest, '-')+1:]
		}
		out = append(out, d)
	}
	return strings.Join(out, ",")
}

// migGPUs is a node of MIG-mode A100-80GB GPUs as discovery finds them.
func migGPUs(gpus int) device.Node {
	n := draGPUs(gpus, "A100-80GB", 81920)
	for i := range n.GPUs {
		n.GPUs[i].ProductName, n.GPUs[i].ComputeMajor, n.GPUs[i].MIGEnabled = "NVIDIA A100-SXM4-80GB", 8, true
	}
	return n
}

// createMIGTemplate creates the ResourceClaimTemplate "mig-<profile>": one
// device of class mig.nvidia.com of that profile, as docs/dra.md writes
// the selector.
func createMIGTemplate(t testing.TB, kc *kube.Cluster, profile string) {
	t.Helper()
	req := &resourcev1.ExactDeviceRequest{DeviceClassName: "mig.nvidia.com", Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
		Expression: fmt.Sprintf("device.attributes['gpu.nvidia.com'].profile == '%s'", profile)}}}}
	_, err := kc.Client.ResourceV1().ResourceClaimTemplates("default").Create(t.Context(), &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "mig-" + profile},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: req}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
