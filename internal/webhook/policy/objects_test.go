// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	p := load(t)
	got, n, err := p.Check([]string{"testdata/manifests"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Line numbers counted by hand in the two files.
	want := []string{
		"testdata/manifests/pods.yaml:23: Pod research/llama-worker-0: training-on-shared: container pytorch: training pods may not use time-sliced or fractional GPUs (nvidia.com/gpu.shared)",
		// training.yaml: the PyTorchJob's Worker template on shared GPUs,
		// the RayJob's worker group on milli-GPU (its head is no worker).
		"testdata/manifests/training.yaml:1: PyTorchJob research/llama/Worker: training-on-shared: container pytorch: training pods may not use time-sliced or fractional GPUs (nvidia.com/gpu.shared)",
		"testdata/manifests/training.yaml:25: RayJob serve/tune/gpu: training-on-shared: container worker: training pods may not use time-sliced or fractional GPUs (gpuplane.io/gpu-milli)",
		`testdata/manifests/workloads.yaml:4: Deployment default/vllm: team: namespace "default" belongs to no team`,
		"testdata/manifests/workloads.yaml:17: CronJob serve/embed: max-gpus-per-pod: the pod asks for 2 GPUs, team inference allows at most 1 per pod",
	}
	// 2 pods, 2 workloads, the PyTorchJob's 2 replica types and the
	// RayJob's worker group (its head group is not read).
	if n != 7 || len(got) != len(want) {
		t.Fatalf("%d objects, findings:\n%v\nwant 7 objects and %q", n, got, want)
	}
	for i, f := range got {
		if !strings.HasPrefix(f.String(), want[i]) {
			t.Errorf("finding %d:\n got %s\nwant %s", i, f, want[i])
		}
	}
}

// TestCheckEmpty: a path that holds no object (an empty file, one of
// comments and "---" only, empty stdin, an empty directory, a directory of
// empty manifests and other files) is an error naming it, alone or after a
// good path; a List without items (kubectl get pods -o yaml where there
// are none) and a ConfigMap are objects: 0 pods, no error.
func TestCheckEmpty(t *testing.T) {
	p := load(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	empty := write("empty.yaml", "")
	comments := write("comments.yaml", "# nothing here\n---\n---\n")
	emptyDir := filepath.Join(dir, "none")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("blank/a.yaml", "\n")
	write("blank/README.md", "kind: Pod\n")
	for _, c := range []struct {
		paths []string
		stdin string
		want  string
	}{
		{[]string{empty}, "", "no objects in " + empty},
		{[]string{comments}, "", "no objects in " + comments},
		{[]string{Stdin}, "", "no objects in <stdin>"},
		{[]string{Stdin}, "\n# kubectl failed\n", "no objects in <stdin>"},
		{[]string{emptyDir}, "", "no objects in " + emptyDir + ": no *.yaml, *.yml or *.json file in it"},
		{[]string{filepath.Join(dir, "blank")}, "", "no objects in " + filepath.Join(dir, "blank")},
		{[]string{"testdata/manifests/pods.yaml", empty}, "", "no objects in " + empty},
	} {
		got, n, err := p.Check(c.paths, strings.NewReader(c.stdin))
		if err == nil || err.Error() != c.want {
			t.Errorf("Check(%q, %q) = %d objects, %v, %v; want error %q", c.paths, c.stdin, n, got, err, c.want)
		}
	}
	list := "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
	cm := write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	if got, n, err := p.Check([]string{Stdin, cm}, strings.NewReader(list)); err != nil || n != 0 || len(got) != 0 {
		t.Errorf("empty List and a ConfigMap: %d objects, %v, %v; want 0, none, nil", n, got, err)
	}
}

// TestCheckStdin reads a manifest from stdin with "-f -", as kubectl does
// ("kubectl get pods -o yaml | gpuplane policy check -f -"); findings name
// it <stdin> and count with the files' ones.
func TestCheckStdin(t *testing.T) {
	p := load(t)
	pods, err := os.ReadFile("testdata/manifests/pods.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := p.Check([]string{Stdin}, strings.NewReader(string(pods)))
	if err != nil {
		t.Fatal(err)
	}
	// pods.yaml holds 2 pods; one violation at line 23 (TestCheck).
	if n != 2 || len(got) != 1 || !strings.HasPrefix(got[0].String(), "<stdin>:23: Pod research/llama-worker-0: training-on-shared:") {
		t.Fatalf("Check(-) = %d objects, %v; want 2 objects and one finding at <stdin>:23", n, got)
	}
}

func TestReadObjectsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kind: Pod\nspec:\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 1.5}}\n", `m.yaml:1: container c: nvidia.com/gpu: "1.5" is not a whole number`},
		{"kind: Pod\nspec:\n  containers: 3\n", "m.yaml:3: cannot unmarshal !!int `3` into []policy.container"},
		{"kind: Pod\n  bad: [\n", "m.yaml:2: mapping values are not allowed in this context"},
		// A bare YAML list of objects is not a manifest kubectl applies;
		// it used to be skipped without a word, hiding its pods.
		{"---\n- kind: Pod\n  metadata: {name: a}\n", "m.yaml:2: a document must be one Kubernetes object (a mapping with kind), not a sequence; a list of objects is a kind: List with items"},
		{"kind: Pod\n---\njust text\n", "m.yaml:3: a document must be one Kubernetes object (a mapping with kind), not a scalar; a list of objects is a kind: List with items"},
	} {
		_, _, err := ReadObjects("m.yaml", []byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("ReadObjects(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadObjects(f *testing.F) {
	for _, name := range []string{"pods.yaml", "workloads.yaml"} {
		data, err := os.ReadFile("testdata/manifests/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, _, err := ReadObjects("f.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, o := range objs {
			if o.Pod == nil || o.Namespace == "" || o.Line < 1 {
				t.Errorf("object %+v", o)
			}
		}
	})
}

// TestReadObjectsSidecar: an init container with restartPolicy Always is a
// native sidecar; its GPU adds to the containers': 1 + 8 = 9.
func TestReadObjectsSidecar(t *testing.T) {
	in := "kind: Pod\nspec:\n  initContainers:\n  - {name: s, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}\n" +
		"  containers:\n  - {name: c, resources: {limits: {nvidia.com/gpu: 8}}}\n"
	objs, _, err := ReadObjects("m.yaml", []byte(in))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%v, %v", objs, err)
	}
	if n := objs[0].Pod.GPUs(); n != 9 {
		t.Errorf("GPUs() = %d, want 9", n)
	}
}

// TestCheckExemptions audits testdata/audit/pods.yaml, `kubectl get pods -A
// -o yaml` of a cluster with gpuplane in gpu-system and NVIDIA's GPU
// Operator in gpu-operator (its comment says what each pod is). The node
// agent's pod (the chart's DaemonSet) and both device plugins tolerate the
// GPU taint without asking for a GPU, but a DaemonSet owns them: no
// finding, in any namespace. With the policy's exemptions alone
// (kube-system), three findings, lines counted by hand: the GPU
// Operator's plugin validator asks for a GPU in a namespace of no team
// (its item at line 127), the webhook's pod, of a ReplicaSet, tolerates every taint
// (152), and research's ETL pod tolerates the GPU taint (196). With
// gpu-system (the chart's release namespace) and gpu-operator excluded,
// as the chart's policy file lists them, only the ETL pod is left.
func TestCheckExemptions(t *testing.T) {
	const file = "testdata/audit/pods.yaml"
	for _, c := range []struct {
		exclude []string
		want    []string
	}{
		{nil, []string{
			file + `:127: Pod gpu-operator/nvidia-device-plugin-validator-8r2lz: team: namespace "gpu-operator" belongs to no team`,
			file + ":152: Pod gpu-system/gpuplane-webhook-6d8f9b7c5-q4w7e: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule",
			file + ":196: Pod research/etl-5c7d9f8b6-z8x2k: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule",
		}},
		{[]string{"gpu-system", "gpu-operator"}, []string{
			file + ":196: Pod research/etl-5c7d9f8b6-z8x2k: gpu-taint-toleration:",
		}},
	} {
		p := load(t)
		p.ExcludeNamespaces = c.exclude
		got, n, err := p.Check([]string{file}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != 7 || len(got) != len(c.want) {
			t.Errorf("excluding %v: %d pods, findings:\n%v\nwant 7 pods and %q", c.exclude, n, got, c.want)
			continue
		}
		for i, f := range got {
			if !strings.HasPrefix(f.String(), c.want[i]) {
				t.Errorf("excluding %v, finding %d:\n got %s\nwant %s", c.exclude, i, f, c.want[i])
			}
		}
	}
}

// TestExcludedNamespaces: kube-system first and always, then the file's
// excludeNamespaces, then more, each once; a bad name is refused with its
// line.
func TestExcludedNamespaces(t *testing.T) {
	p, err := Parse("p.yaml", []byte("apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nexcludeNamespaces: [gpu-operator, kube-system]\nteams:\n- {name: a, namespaces: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.ExcludedNamespaces("gpu-system", "gpu-operator"), []string{"kube-system", "gpu-operator", "gpu-system"}; !slices.Equal(got, want) {
		t.Errorf("ExcludedNamespaces = %v, want %v", got, want)
	}
	if !p.Excluded("kube-system") || !p.Excluded("gpu-operator") || p.Excluded("gpu-system") || p.Excluded("a") {
		t.Error("Excluded: want kube-system and gpu-operator only")
	}
	// A GPU pod of no team, and a squatter, in an excluded namespace: no
	// violation, no mutation.
	gpu := &Pod{Name: "x", Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 1}}}}
	if vs, ops := p.Validate(gpu, Namespace{Name: "gpu-operator"}), p.Mutate(gpu, Namespace{Name: "gpu-operator"}); vs != nil || ops != nil {
		t.Errorf("excluded namespace: %v, %v", vs, ops)
	}
	_, err = Parse("p.yaml", []byte("apiVersion: gpuplane.io/v1alpha1\nkind: GPUPolicy\nexcludeNamespaces:\n- GPU_Operator\nteams:\n- {name: a, namespaces: [a]}\n"))
	if want := `p.yaml:4: excludeNamespaces[0]: "GPU_Operator" is not a namespace name (RFC 1123 label)`; err == nil || err.Error() != want {
		t.Errorf("bad name: %v, want %s", err, want)
	}
}
