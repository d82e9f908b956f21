// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

func loadDRA(t *testing.T) *Policy {
	t.Helper()
	data, err := os.ReadFile("testdata/dra/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("testdata/dra/policy.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckDRATaint: NVIDIA's DRA quickstart pod (testdata/dra/gpu-test1.yaml,
// the shape of k8s-dra-driver-gpu demo/specs/quickstart/v1/gpu-test1.yaml:
// a claim from a template of class gpu.nvidia.com and the toleration of
// nvidia.com/gpu:NoSchedule) is no taint squatter: policy check finds
// nothing in it (issue 34: it was refused as "asks for no GPU"). A pod
// with neither a GPU resource nor a claim that tolerates the taint is
// still refused, with the message of before.
func TestCheckDRATaint(t *testing.T) {
	p := loadDRA(t)
	got, n, err := p.Check([]string{"testdata/dra/gpu-test1.yaml"}, nil)
	if err != nil || n != 1 || len(got) != 0 {
		t.Errorf("gpu-test1.yaml: %d objects, %v, %v; want 1 object, no finding", n, got, err)
	}
	got, n, err = p.Check([]string{"testdata/dra/cpu-squatter.yaml"}, nil)
	want := "testdata/dra/cpu-squatter.yaml:3: Pod gpu-test1/squatter: gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"
	if err != nil || n != 1 || len(got) != 1 || got[0].String() != want {
		t.Errorf("cpu-squatter.yaml: %d objects, %v, %v; want 1 object and %q", n, got, err, want)
	}
}

// TestValidateDRATaint: the rule on the policy's Pod model; the claim
// alone makes the difference.
func TestValidateDRATaint(t *testing.T) {
	p := loadDRA(t)
	tol := []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}
	claimed := &Pod{Name: "pod1", Tolerations: tol, Claims: []Claim{{Name: "gpu", TemplateName: "single-gpu"}}, Containers: []Container{{Name: "ctr"}}}
	if vs := p.Validate(claimed, Namespace{Name: "gpu-test1"}); len(vs) != 0 {
		t.Errorf("pod with a claim: %v", vs)
	}
	bare := &Pod{Name: "pod1", Tolerations: tol, Containers: []Container{{Name: "ctr"}}}
	if vs := p.Validate(bare, Namespace{Name: "gpu-test1"}); len(vs) != 1 || !strings.HasPrefix(vs[0].String(), "gpu-taint-toleration: the pod asks for no GPU") {
		t.Errorf("pod without a claim: %v", vs)
	}
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCheckDRAMaxGPUs: issue 34's case through policy check. Team
// ml-train allows 8 GPUs a pod; testdata/dra/ml-train.yaml's train-16
// claims 16 through a template (count 16): refused, 16 counted; train-8
// claims 8: admitted. NVIDIA's gpu-test1 pod, in a team's namespace now
// that its one GPU counts, is admitted, and so is gpu-test4's Deployment.
func TestCheckDRAMaxGPUs(t *testing.T) {
	p := loadDRA(t)
	got, n, err := p.Check([]string{"testdata/dra/ml-train.yaml", "testdata/dra/gpu-test1.yaml", "testdata/dra/gpu-test4.yaml"}, nil)
	want := "testdata/dra/ml-train.yaml:33: Pod ml-train/train-16: max-gpus-per-pod: the pod asks for 16 GPUs, team ml-train allows at most 8 per pod; ask for fewer or split the work"
	if err != nil || n != 4 || len(got) != 1 || got[0].String() != want {
		t.Errorf("%d objects, %v, %v; want 4 objects and %q", n, got, err, want)
	}
	// gpu-test4's Deployment (NVIDIA's v1/gpu-test4.yaml shape): its pod
	// template claims 4 MIG devices.
	objs, _, err := ReadObjects("testdata/dra/gpu-test4.yaml", mustRead(t, "testdata/dra/gpu-test4.yaml"))
	if err != nil || len(objs) != 1 || objs[0].Kind != "Deployment" || objs[0].Pod.GPUs() != 4 {
		t.Errorf("gpu-test4.yaml: %+v, %v; want a Deployment of 4 GPUs", objs, err)
	}
}

// TestCheckDRANotes: what policy check cannot know is a note, not a
// violation: gpu-test1's pod without its template (no device counted),
// and allocationMode All (counted as 1, and named in the refusal it
// causes).
func TestCheckDRANotes(t *testing.T) {
	p := loadDRA(t)
	data, err := os.ReadFile("testdata/dra/gpu-test1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pod := string(data[strings.Index(string(data), "apiVersion: v1\nkind: Pod"):])
	dir := t.TempDir()
	write := func(name, body string) string {
		f := dir + "/" + name
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := write("pod.yaml", pod)
	got, _, err := p.Check([]string{f}, nil)
	want := f + ":1: Pod gpu-test1/pod1: note: claim gpu: ResourceClaimTemplate single-gpu not found: its devices are not counted"
	if err != nil || len(got) != 1 || got[0].String() != want || got[0].Note == "" {
		t.Errorf("pod without its template: %v, %v; want the note %q", got, err, want)
	}
	all := write("all.yaml", `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {namespace: ml-train, name: every-gpu}
spec:
  devices:
    requests:
    - name: all
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}
    - name: more
      exactly: {deviceClassName: gpu.nvidia.com, count: 8}
---
apiVersion: v1
kind: Pod
metadata: {namespace: ml-train, name: greedy}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims: [{name: every, resourceClaimName: every-gpu}]
`)
	got, _, err = p.Check([]string{all}, nil)
	note := "claim every: request all: allocationMode All counted as 1 device"
	wantAll := []string{
		all + ":12: Pod ml-train/greedy: max-gpus-per-pod: the pod asks for 9 GPUs (" + note + "), team ml-train allows at most 8 per pod; ask for fewer or split the work",
		all + ":12: Pod ml-train/greedy: note: " + note,
	}
	if err != nil || len(got) != 2 || got[0].String() != wantAll[0] || got[1].String() != wantAll[1] {
		t.Errorf("All: %v, %v; want %q", got, err, wantAll)
	}
}

// TestValidateDRA: every rule reads the claims' devices (research: whole
// GPUs, any MIG profile and time-sliced GPUs, model H100, 8 a pod;
// inference: milli-GPU and time-sliced, 1 a pod). The claims are
// gpu-test4's MIG requests (NVIDIA's quickstart v1/gpu-test4.yaml), a
// productName selector and a milliGPU share; the expected counts and
// names are worked out by hand.
func TestValidateDRA(t *testing.T) {
	p := load(t)
	spec := func(js string) *dra.ClaimSpec {
		var s dra.ClaimSpec
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	mig := func(name, profile string) string {
		return `{"name":"` + name + `","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '` + profile + `'"}}]}}`
	}
	gpu4 := spec(`{"devices":{"requests":[` + mig("mig-1g-5gb-0", "1g.5gb") + `,` + mig("mig-1g-5gb-1", "1g.5gb") + `,` + mig("mig-2g-10gb", "2g.10gb") + `,` + mig("mig-3g-20gb", "3g.20gb") + `]}}`)
	h100 := spec(`{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,"selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}]}}]}}`)
	a100 := spec(`{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"}}]}}]}}`)
	half := spec(`{"devices":{"requests":[{"name":"half","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"milliGPU":"500"}}}}]}}`)
	pod := func(claims ...*dra.ClaimSpec) *Pod {
		q := &Pod{Name: "p", Containers: []Container{{Name: "ctr"}}}
		for i, c := range claims {
			q.Claims = append(q.Claims, Claim{Name: fmt.Sprintf("c%d", i), TemplateName: "t", Spec: c})
		}
		return q
	}
	withModel := func(q *Pod) *Pod {
		q.NodeSelector = map[string]string{resource.LabelGPUProduct: "NVIDIA-H100-80GB-HBM3"}
		return q
	}
	training := withModel(pod(half))
	training.Owners = []string{"PyTorchJob"}
	for _, c := range []struct {
		name string
		pod  *Pod
		ns   Namespace
		want []string
	}{
		// 4 MIG devices: within 8; nvidia.com/mig-* allows each.
		{"gpu-test4 MIG", withModel(pod(gpu4)), research, nil},
		{"gpu-test4 MIG twice", withModel(pod(gpu4, gpu4, h100)), research, []string{"max-gpus-per-pod: the pod asks for 10 GPUs, team research allows at most 8"}},
		{"model by productName", pod(h100), research, nil},
		{"no model", pod(spec(`{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}`)), research,
			[]string{"allowed-models: team research may use only GPU models NVIDIA-H100-80GB-HBM3"}},
		{"A100 by productName", pod(a100), research, []string{`allowed-models: GPU model "NVIDIA-A100-SXM4-80GB" is not allowed for team research`}},
		{"no team", pod(h100), nobody, []string{`team: namespace "default" belongs to no team`}},
		{"MIG for inference", pod(gpu4), inference, []string{
			"max-gpus-per-pod: the pod asks for 4 GPUs, team inference allows at most 1",
			"allowed-resources: claim c0 request mig-1g-5gb-0: resource nvidia.com/mig-1g.5gb is not allowed for team inference",
			"allowed-resources: claim c0 request mig-1g-5gb-1: resource nvidia.com/mig-1g.5gb is not allowed",
			"allowed-resources: claim c0 request mig-2g-10gb: resource nvidia.com/mig-2g.10gb is not allowed",
			"allowed-resources: claim c0 request mig-3g-20gb: resource nvidia.com/mig-3g.20gb is not allowed",
		}},
		{"share for inference", pod(half), inference, nil},
		{"share for research", withModel(pod(half)), research, []string{"allowed-resources: claim c0 request half: resource gpuplane.io/gpu-milli is not allowed for team research"}},
		{"training on a share", training, research, []string{
			"allowed-resources: claim c0 request half: resource gpuplane.io/gpu-milli is not allowed",
			"training-on-shared: claim c0 request half: training pods may not use time-sliced or fractional GPUs (gpuplane.io/gpu-milli)",
		}},
	} {
		vs := p.Validate(c.pod, c.ns)
		if len(vs) != len(c.want) {
			t.Errorf("%s: %v, want %q", c.name, vs, c.want)
			continue
		}
		for i, v := range vs {
			if !strings.HasPrefix(v.String(), c.want[i]) {
				t.Errorf("%s: %q, want prefix %q", c.name, v, c.want[i])
			}
		}
	}
}

// TestGPUsClaimsOncePerPod: a claim counts once per pod, however many
// containers name it, as NVIDIA's quickstart examples show
// (k8s-dra-driver-gpu demo/specs/quickstart): v1/gpu-test2.yaml, two
// containers sharing one claim of single-gpu, 1 GPU; gpu-test7.yaml, two
// claims of single-gpu, one per container, 2 GPUs; gpu-test8.yaml, one
// claim of count 2, 2 GPUs. Containers' GPUs add to the claims'.
func TestGPUsClaimsOncePerPod(t *testing.T) {
	var single, double dra.ClaimSpec
	if err := json.Unmarshal([]byte(`{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}`), &single); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"devices":{"requests":[{"name":"gpu","deviceClassName":"gpu.nvidia.com","count":2}]}}`), &double); err != nil {
		t.Fatal(err)
	}
	two := []Container{{Name: "ctr0"}, {Name: "ctr1"}}
	for _, c := range []struct {
		name string
		pod  *Pod
		want int64
	}{
		{"gpu-test2", &Pod{Containers: two, Claims: []Claim{{Name: "shared-gpu", TemplateName: "single-gpu", Spec: &single}}}, 1},
		{"gpu-test7", &Pod{Containers: two, Claims: []Claim{{Name: "gpu0", TemplateName: "single-gpu", Spec: &single}, {Name: "gpu1", TemplateName: "single-gpu", Spec: &single}}}, 2},
		{"gpu-test8", &Pod{Containers: two[:1], Claims: []Claim{{Name: "twogpus", TemplateName: "double-gpu", Spec: &double}}}, 2},
		{"claim and nvidia.com/gpu", &Pod{Containers: []Container{{Name: "c", Resources: map[string]int64{"nvidia.com/gpu": 3}}}, Claims: []Claim{{Name: "twogpus", TemplateName: "double-gpu", Spec: &double}}}, 5},
		{"template not read", &Pod{Containers: two, Claims: []Claim{{Name: "gpu", TemplateName: "single-gpu"}}}, 0},
	} {
		if got := c.pod.GPUs(); got != c.want {
			t.Errorf("%s: %d GPUs, want %d", c.name, got, c.want)
		}
	}
}
