// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func node(name string, labels map[string]string, alloc v1.ResourceList) *v1.Node {
	return &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc}}
}

func pod(ns, name string, phase v1.PodPhase, nodeName string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: containers}, Status: v1.PodStatus{Phase: phase}}
}

func ctr(req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

// snapshotObjects builds nodes and pods with the Kubernetes API types, as
// the API server would list them.
func snapshotObjects() ([]*v1.Node, []*v1.Pod) {
	a100 := map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8"}
	nodes := []*v1.Node{
		node("a100-0", a100, rl("cpu", "95500m", "memory", "1007Gi", "nvidia.com/gpu", "8", "pods", "110")),
		node("t4-0", map[string]string{"nvidia.com/gpu.product": "Tesla-T4"}, rl("cpu", "64", "memory", "250G", "nvidia.com/gpu", "2")),
		node("mig-0", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/mig.config": "all-1g.10gb"},
			rl("cpu", "128", "memory", "2Ti", "nvidia.com/mig-1g.10gb", "56")),
		node("ts-0", map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.replicas": "4"}, rl("cpu", "32", "memory", "128Gi", "nvidia.com/gpu", "8")),
		node("cpu-0", nil, rl("cpu", "1e2", "memory", "384Gi")),
	}
	nodes[4].Spec.Unschedulable = true

	// Running on a100-0: two containers, GPUs given as limits only.
	running := pod("team-a", "train", v1.PodRunning, "a100-0",
		ctr(rl("cpu", "500m", "memory", "1Gi"), rl("nvidia.com/gpu", "1")),
		ctr(rl("cpu", "1.5", "memory", "512Mi"), rl("nvidia.com/gpu", "1")))
	running.Annotations = map[string]string{"gpuplane.io/gpus": "0,3"}
	// Pending: an init container larger than the containers, a sidecar,
	// and pod overhead.
	always := v1.ContainerRestartPolicyAlways
	initPod := pod("team-b", "etl", v1.PodPending, "", ctr(rl("cpu", "1", "memory", "1e9"), nil))
	initPod.Spec.InitContainers = []v1.Container{
		{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: rl("cpu", "250m", "memory", "64Mi")}},
		{Name: "init", Resources: v1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "100Mi")}},
	}
	initPod.Spec.Overhead = rl("cpu", "100m", "memory", "10Mi")
	// Pending: half a T4 by nodeSelector.
	share := pod("team-b", "infer", v1.PodPending, "", ctr(rl("cpu", "2", "memory", "8Gi", "gpuplane.io/gpu-milli", "500"), nil))
	share.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "Tesla-T4"}
	// Pending: 4 GPUs of A100 or H100 by required node affinity.
	aff := pod("team-c", "big", v1.PodPending, "", ctr(rl("cpu", "32", "memory", "256Gi", "nvidia.com/gpu", "4"), nil))
	aff.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "kubernetes.io/arch", Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}},
			{Key: "nvidia.com/gpu.product", Operator: v1.NodeSelectorOpIn, Values: []string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}},
		}}}}}}
	// Ended: holds nothing.
	done := pod("team-a", "old", v1.PodSucceeded, "t4-0", ctr(rl("cpu", "8", "memory", "8Gi", "nvidia.com/gpu", "2"), nil))
	return nodes, []*v1.Pod{running, initPod, share, aff, done}
}

// kubectlJSON marshals objects into the v1 List that
// `kubectl get nodes,pods -A -o json` prints.
func kubectlJSON(t *testing.T, nodes []*v1.Node, pods []*v1.Pod) []byte {
	t.Helper()
	list := v1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, n := range nodes {
		list.Items = append(list.Items, runtime.RawExtension{Object: n})
	}
	for _, p := range pods {
		list.Items = append(list.Items, runtime.RawExtension{Object: p})
	}
	data, err := json.MarshalIndent(&list, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSnapshotMatchesKubernetes reads a List made with the API types and
// checks each value against Kubernetes' own arithmetic: a node's
// allocatable Quantity.MilliValue (CPU) and Value (memory, then MiB
// rounded down); a pod's component-helpers PodRequests (kube-scheduler's
// sum of containers, init containers, sidecars and overhead), CPU by
// MilliValue, memory in MiB rounded up, GPUs by Value. GPU counts, models
// and phases are worked out by hand.
func TestSnapshotMatchesKubernetes(t *testing.T) {
	nodes, pods := snapshotObjects()
	data := kubectlJSON(t, nodes, pods)
	s, err := Read("snap.json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range s.Nodes {
		if want := itemLine(string(data), i); n.Line != want {
			t.Errorf("node %s: line %d, want %d", n.Name, n.Line, want)
		}
	}
	for i, p := range s.Pods {
		if want := itemLine(string(data), len(nodes)+i); int(p.Line) != want {
			t.Errorf("pod %s: line %d, want %d", p.Name, p.Line, want)
		}
	}
	if len(s.Nodes) != len(nodes) || len(s.Pods) != len(pods) {
		t.Fatalf("%d nodes, %d pods; want %d, %d", len(s.Nodes), len(s.Pods), len(nodes), len(pods))
	}
	wantGPUs := []int{8, 2, 8, 2, 0} // mig-0: its gpu.count; ts-0: 8 replicas / 4
	wantModel := []string{"A100-80GB", "T4", "A100-80GB", "L4", ""}
	for i, n := range nodes {
		got := s.Nodes[i]
		cpu, mem := n.Status.Allocatable.Cpu().MilliValue(), n.Status.Allocatable.Memory().Value()>>20
		if got.Name != n.Name || got.CPUMilli != cpu || got.MemoryMiB != mem || got.GPUs != wantGPUs[i] || got.Model != wantModel[i] {
			t.Errorf("node %s: %+v; want cpu %d, memory %d MiB, %d GPUs of %q", n.Name, got.NodeSpec, cpu, mem, wantGPUs[i], wantModel[i])
		}
	}
	if m := s.Nodes[2]; m.MIG["nvidia.com/mig-1g.10gb"] != 56 || m.MIGConfig != "all-1g.10gb" {
		t.Errorf("mig-0: MIG %v, config %q", m.MIG, m.MIGConfig)
	}
	if !s.Nodes[4].Unschedulable || s.Nodes[3].Replicas != 4 {
		t.Errorf("cpu-0 unschedulable %v, ts-0 replicas %d", s.Nodes[4].Unschedulable, s.Nodes[3].Replicas)
	}
	type want struct {
		gpus    int8
		milli   int16
		spec    string
		pending bool
		bound   bool
	}
	wants := []want{{2, 1000, "", false, true}, {0, 0, "", true, false}, {1, 500, "T4", true, false}, {4, 1000, "A100-80GB|H100-80GB", true, false}, {2, 1000, "", false, false}}
	for i, p := range pods {
		got := s.Pods[i]
		// The API server defaults a missing request to its limit
		// (k8s.io/kubernetes/pkg/apis/core/v1, SetDefaults_Pod) before
		// kube-scheduler sums them; the JSON was written without.
		d := p.DeepCopy()
		for _, cs := range [][]v1.Container{d.Spec.Containers, d.Spec.InitContainers} {
			for j := range cs {
				r := &cs[j].Resources
				for k, v := range r.Limits {
					if _, ok := r.Requests[k]; !ok {
						if r.Requests == nil {
							r.Requests = v1.ResourceList{}
						}
						r.Requests[k] = v
					}
				}
			}
		}
		req := resourcehelper.PodRequests(d, resourcehelper.PodResourcesOptions{})
		cpu, mem := req.Cpu().MilliValue(), (req.Memory().Value()+(1<<20-1))>>20
		w := wants[i]
		if got.Name != p.Namespace+"/"+p.Name || got.CPUMilli != cpu || got.MemoryMiB != mem || got.NumGPU != w.gpus || got.GPUMilli != w.milli ||
			got.GPUSpec != w.spec || got.Pending() != w.pending || got.Bound() != w.bound || got.Phase != string(p.Status.Phase) || got.NodeName != p.Spec.NodeName {
			t.Errorf("pod %s: %+v node %q; want cpu %d, memory %d MiB, %+v", p.Name, got.PodSpec, got.NodeName, cpu, mem, w)
		}
		if g := req[v1.ResourceName("nvidia.com/gpu")]; w.milli == 1000 && g.Value() != int64(w.gpus) {
			t.Errorf("pod %s: PodRequests has %d GPUs, the test wants %d", p.Name, g.Value(), w.gpus)
		}
	}
	// By hand: etl is max(1 + 0.25 sidecar, 4 + 0.25) + 0.1 = 4.35 CPUs.
	if s.Pods[1].CPUMilli != 4350 {
		t.Errorf("etl: %d millicores, want 4350", s.Pods[1].CPUMilli)
	}
	if g := s.Pods[0].GPUs; len(g) != 2 || g[0] != 0 || g[1] != 3 {
		t.Errorf("train: GPUs %v, want [0 3]", g)
	}
}

// itemLine returns the line (from 1) on which item k of the List, indented
// as kubectlJSON writes it, opens.
func itemLine(data string, k int) int {
	for i, l := range strings.Split(data, "\n") {
		if l == "        {" {
			if k == 0 {
				return i + 1
			}
			k--
		}
	}
	return -1
}

// TestSnapshotErrors: each error names the file and the JSON path.
func TestSnapshotErrors(t *testing.T) {
	nodes, pods := snapshotObjects()
	good := string(kubectlJSON(t, nodes, pods))
	l1, l5 := fmt.Sprintf("snap.json:%d: ", itemLine(good, 1)), fmt.Sprintf("snap.json:%d: ", itemLine(good, 5))
	for _, tc := range []struct {
		name string
		edit func() string
		want string
	}{
		{"quantity", func() string {
			return strings.Replace(good, `"containers": [`, `"containers": [{"name": "x", "resources": {"requests": {"cpu": "lots"}}},`, 1)
		}, l5 + `items[5].spec.containers[0].resources.requests.cpu: quantity "lots": unknown suffix`},
		{"gpu quantity", func() string {
			return strings.Replace(good, `"nvidia.com/gpu": "2"`, `"nvidia.com/gpu": "-2"`, 2) // t4-0's capacity and allocatable
		}, l1 + `items[1].status.allocatable["nvidia.com/gpu"]: negative quantity "-2"`},
		{"syntax", func() string { return good[:len(good)/2] + "}" }, "snap.json:"},
		{"type", func() string { return strings.Replace(good, `"nodeName": "a100-0"`, `"nodeName": 7`, 1) }, l5 + "items[5].spec.nodeName: a JSON number where a string belongs"},
		{"kind", func() string { return strings.Replace(good, `"kind": "List"`, `"kind": "Deployment"`, 1) }, `snap.json: kind "Deployment"`},
		{"item kind", func() string { return strings.Replace(good, `"kind": "Pod"`, `"kind": "Service"`, 1) }, l5 + `items[5].kind: "Service", want Node, Pod, ResourceSlice, ResourceClaim, ResourceClaimTemplate or DeviceClass`},
		{"unknown node", func() string { return strings.Replace(good, `"nodeName": "a100-0"`, `"nodeName": "gone"`, 1) }, l5 + `items[5].spec.nodeName: pod "team-a/train" is bound to node "gone"`},
		{"both GPU kinds", func() string {
			return strings.Replace(good, `"gpuplane.io/gpu-milli": "500"`, `"gpuplane.io/gpu-milli": "500", "nvidia.com/gpu": "1"`, 1)
		}, "items[7].spec.containers: both nvidia.com/gpu and gpuplane.io/gpu-milli"},
		// Kubernetes validates extended resources as integers; a node's
		// time-slicing replicas divide its advertised GPUs (ts-0: 8 of 4).
		{"fractional GPUs", func() string { return strings.Replace(good, `"nvidia.com/gpu": "4"`, `"nvidia.com/gpu": "1.5"`, 1) },
			`items[8].spec.containers[0].resources.requests["nvidia.com/gpu"]: "1.5" is not a whole number`},
		{"gpu-milli 0", func() string {
			return strings.Replace(good, `"gpuplane.io/gpu-milli": "500"`, `"gpuplane.io/gpu-milli": "0"`, 1)
		}, "items[7].spec.containers: gpuplane.io/gpu-milli 0 out of range 1..1000"},
		{"no containers", func() string { return strings.Replace(good, `"containers": [`, `"containers": null, "x": [`, 1) },
			"items[5].spec.containers: none; a pod has at least one container"},
		{"phase", func() string { return strings.Replace(good, `"phase": "Succeeded"`, `"phase": "Weird"`, 1) },
			`items[9].status.phase: "Weird" is no pod phase`},
		{"replicas", func() string {
			return strings.Replace(good, `"nvidia.com/gpu.replicas": "4"`, `"nvidia.com/gpu.replicas": "3"`, 1)
		}, `items[3].status.allocatable["nvidia.com/gpu"]: 8 is not a multiple of the node's nvidia.com/gpu.replicas 3`},
		{"truncated", func() string { return strings.Join(strings.Split(good, "\n")[:20], "\n") }, "snap.json:20: the JSON ends early"},
		{"empty", func() string { return " \n" }, "snap.json:1: empty file"},
		{"trailing", func() string { return good + "\n\n{}" }, fmt.Sprintf("snap.json:%d: data after the List", strings.Count(good, "\n")+3)},
		{"gpus annotation", func() string {
			return strings.Replace(good, `"gpuplane.io/gpus": "0,3"`, `"gpuplane.io/gpus": "0,x"`, 1)
		}, `items[5].metadata.annotations["gpuplane.io/gpus"]`},
	} {
		_, err := Read("snap.json", strings.NewReader(tc.edit()))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSnapshotBOM: a UTF-8 byte order mark before the List is read past.
func TestSnapshotBOM(t *testing.T) {
	nodes, pods := snapshotObjects()
	s, err := Read("snap.json", bytes.NewReader(append([]byte("\xEF\xBB\xBF"), kubectlJSON(t, nodes, pods)...)))
	if err != nil || len(s.Nodes) != len(nodes) || len(s.Pods) != len(pods) {
		t.Fatalf("%v; want %d nodes and %d pods", err, len(nodes), len(pods))
	}
}

// FuzzReadSnapshot: the reader never panics, and what it accepts is within
// the simulator's bounds.
func FuzzReadSnapshot(f *testing.F) {
	nodes, pods := snapshotObjects()
	list := v1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, n := range nodes {
		list.Items = append(list.Items, runtime.RawExtension{Object: n})
	}
	for _, p := range pods {
		list.Items = append(list.Items, runtime.RawExtension{Object: p})
	}
	data, _ := json.Marshal(&list)
	f.Add(data)
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1e3","nvidia.com/mig-3g.40gb":"1"}}}]}}]}`))
	f.Add([]byte(filterSnapshot))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read("f.json", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, n := range s.Nodes {
			if n.GPUs < 0 || n.GPUs > 64 || n.CPUMilli < 0 || n.MemoryMiB < 0 || (n.GPUs > 0 && n.Model == "") {
				t.Fatalf("node out of bounds: %+v", n)
			}
			// A node's devices are replicas (Shared) only when its
			// replicas say so or it serves nvidia.com/gpu.shared, and
			// MIG instances (SingleMIG) only when they are not replicas
			// read as whole GPUs.
			if n.Replicas < 1 || n.Shared && !n.Renamed && n.Replicas < 2 || n.SingleMIG != "" && (n.Shared || n.GPUs < 1) {
				t.Fatalf("node's device plugin setup out of bounds: %+v", n)
			}
		}
		for _, p := range s.Pods {
			c := cluster.Pod{NumGPU: int(p.NumGPU), GPUMilli: int64(p.GPUMilli), Resource: p.Resource}
			if err := c.Validate(); err != nil || p.NumGPU < 0 || p.NumGPU > 64 || p.GPUMilli < 0 || p.GPUMilli > 1000 || p.CPUMilli < 0 || p.MemoryMiB < 0 || (p.NumGPU > 0) != (p.GPUMilli > 0) || p.Filter == nil {
				t.Fatalf("pod out of bounds (%v): %+v", err, p)
			}
		}
	})
}

// TestSnapshotYAML: the List of snapshotObjects as `kubectl -o yaml`
// writes it (sigs.k8s.io/yaml, kubectl's printer) reads as the JSON does,
// but for the lines, which are each item's "- " line in the YAML; a
// hand-written unquoted quantity (cpu: 8) reads as the string "8", and a
// YAML error names its line.
func TestSnapshotYAML(t *testing.T) {
	nodes, pods := snapshotObjects()
	data := kubectlJSON(t, nodes, pods)
	y, err := sigsyaml.JSONToYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read("s.json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read("s.yaml", bytes.NewReader(y))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != len(want.Nodes) || len(got.Pods) != len(want.Pods) || len(got.Warnings) != len(want.Warnings) {
		t.Fatalf("YAML: %d nodes, %d pods, %d warnings; JSON %d, %d, %d", len(got.Nodes), len(got.Pods), len(got.Warnings), len(want.Nodes), len(want.Pods), len(want.Warnings))
	}
	lines := strings.Split(string(y), "\n")
	for i := range got.Nodes {
		g, w := got.Nodes[i], want.Nodes[i]
		if !strings.HasPrefix(strings.TrimSpace(lines[g.Line-1]), "- ") {
			t.Errorf("node %s: line %d is %q, not an item's first", g.Name, g.Line, lines[g.Line-1])
		}
		g.Line, w.Line = 0, 0
		if !reflect.DeepEqual(g, w) {
			t.Errorf("node %d: YAML %+v, JSON %+v", i, g, w)
		}
	}
	for i := range got.Pods {
		g, w := got.Pods[i], want.Pods[i]
		g.Line, w.Line = 0, 0
		g.Creation, g.Deletion, g.Scheduled, w.Creation, w.Deletion, w.Scheduled = 0, 0, 0, 0, 0, 0 // NaN
		if !reflect.DeepEqual(g, w) {
			t.Errorf("pod %d: YAML %+v, JSON %+v", i, g, w)
		}
	}
	hand := "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n  spec: {unschedulable: true}\n  status:\n    allocatable: {cpu: 8, memory: 16Gi, nvidia.com/gpu: 2}\n"
	s, err := Read("h.yaml", strings.NewReader(hand))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Nodes[0]; n.CPUMilli != 8000 || n.MemoryMiB != 16384 || n.GPUs != 2 || !n.Unschedulable || n.Line != 4 {
		t.Errorf("hand-written YAML: %+v", n)
	}
	if _, err := Read("b.yaml", strings.NewReader("kind: List\nitems:\n- kind: [\n")); err == nil || !strings.HasPrefix(err.Error(), "b.yaml:") {
		t.Errorf("bad YAML: %v", err)
	}
	// A billion laughs: 9 levels of 9 aliases would be 9^9 strings.
	laughs := "a0: &a0 [lol]\n"
	for i := 1; i < 10; i++ {
		laughs += fmt.Sprintf("a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	laughs += "kind: List\nitems:\n- *a9\n"
	if _, err := Read("l.yaml", strings.NewReader(laughs)); err == nil || !strings.Contains(err.Error(), "aliases expand it past") {
		t.Errorf("billion laughs: %v", err)
	}
}
