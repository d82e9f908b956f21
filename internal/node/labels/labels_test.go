// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

func node(t *testing.T, profile string) device.Node {
	t.Helper()
	n, err := mock.Discover(profile)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOptionsFrom(t *testing.T) {
	c, err := configv1.ParseConfig("c.yaml", []byte(`version: v1
flags: {migStrategy: mixed}
sharing: {timeSlicing: {renameByDefault: true, resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}, {name: nvidia.com/gpu, replicas: 4}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := OptionsFrom(c), (Options{MIGStrategy: "mixed", Replicas: 4, Strategy: "time-slicing", Renamed: true}); got != want {
		t.Errorf("OptionsFrom = %+v, want %+v", got, want)
	}
	if got, want := OptionsFrom(configv1.DefaultConfig()), (Options{MIGStrategy: "none", Replicas: 1, Strategy: "none"}); got != want {
		t.Errorf("OptionsFrom(default) = %+v, want %+v", got, want)
	}
}

// TestMPSLabels: NVIDIA's sharing.mps gives gpu-feature-discovery's
// sharing-strategy mps, the replicas, and the -SHARED product unless
// renamed, as time-slicing does.
func TestMPSLabels(t *testing.T) {
	c, err := configv1.ParseConfig("c.yaml", []byte("version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := Compute(node(t, "dgx1-v100"), OptionsFrom(c))
	for k, want := range map[string]string{
		"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB-SHARED", "nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.replicas": "4",
	} {
		if l[k] != want {
			t.Errorf("%s = %q, want %q", k, l[k], want)
		}
	}
}

func TestComputeH100(t *testing.T) {
	got := Compute(node(t, "dgx-h100"), Options{MIGStrategy: "none", Replicas: 1})
	// nvidia.com/gpu.present as NVIDIA's GPU operator writes it
	// (gpu-operator controllers/state_manager.go, commonGPULabelKey):
	// the chart's default affinity selects it, and docs/cluster.md and the
	// chart's README say the agent writes it (it did not).
	want := map[string]string{
		"nvidia.com/gpu.present":                  "true",
		"nvidia.com/gpu.product":                  "NVIDIA-H100-80GB-HBM3",
		"nvidia.com/gpu.count":                    "8",
		"nvidia.com/gpu.memory":                   "81559",
		"nvidia.com/gpu.family":                   "hopper",
		"nvidia.com/gpu.compute.major":            "9",
		"nvidia.com/gpu.compute.minor":            "0",
		"nvidia.com/cuda.driver-version.major":    "550",
		"nvidia.com/cuda.driver-version.minor":    "54",
		"nvidia.com/cuda.driver-version.revision": "15",
		"nvidia.com/cuda.driver-version.full":     "550.54.15",
		"nvidia.com/cuda.runtime-version.major":   "12",
		"nvidia.com/cuda.runtime-version.minor":   "4",
		"nvidia.com/cuda.runtime-version.full":    "12.4",
		"nvidia.com/mig.capable":                  "true",
		"nvidia.com/mig.strategy":                 "none",
		"nvidia.com/gpu.sharing-strategy":         "none",
		"nvidia.com/gpu.replicas":                 "1",
		"gpuplane.io/gpu.model":                   "H100-80GB",
		"gpuplane.io/gpu.nvlink-clique-size":      "8",
		"gpuplane.io/gpu.numa-nodes":              "2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels:\n got %v\nwant %v", Sorted(got), Sorted(want))
	}
}

// TestComputeLostFirstGPU: GPU 0 lost at discovery (listed by UUID only,
// as the nvml backend lists it) does not blank the product labels: they
// come from the first GPU that answers.
func TestComputeLostFirstGPU(t *testing.T) {
	n := node(t, "dgx-h100")
	n.GPUs[0] = device.GPU{Index: 0, UUID: n.GPUs[0].UUID}
	got := Compute(n, Options{MIGStrategy: "none", Replicas: 1})
	if got["nvidia.com/gpu.product"] != "NVIDIA-H100-80GB-HBM3" || got["nvidia.com/gpu.memory"] != "81559" || got["nvidia.com/gpu.count"] != "8" {
		t.Errorf("product %q memory %q count %q; want NVIDIA-H100-80GB-HBM3, 81559, 8",
			got["nvidia.com/gpu.product"], got["nvidia.com/gpu.memory"], got["nvidia.com/gpu.count"])
	}
}

func TestComputeMIGAndSharing(t *testing.T) {
	a := node(t, "dgx-a100-80gb-mig")
	l := Compute(a, Options{MIGStrategy: "mixed", Replicas: 1})
	// 4x7 + 2x2 1g.10gb; 2 each of 2g.20gb and 3g.40gb (A100-80GB MIG table).
	for k, v := range map[string]string{
		"nvidia.com/mig-1g.10gb.count": "32", "nvidia.com/mig-1g.10gb.memory": "9856", "nvidia.com/mig-1g.10gb.multiprocessors": "14",
		"nvidia.com/mig-2g.20gb.count": "2", "nvidia.com/mig-2g.20gb.memory": "19968", "nvidia.com/mig-2g.20gb.multiprocessors": "28",
		"nvidia.com/mig-3g.40gb.count": "2", "nvidia.com/mig-3g.40gb.memory": "40192", "nvidia.com/mig-3g.40gb.multiprocessors": "42",
		"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
	} {
		if l[k] != v {
			t.Errorf("%s = %q, want %q", k, l[k], v)
		}
	}
	v := Compute(node(t, "dgx1-v100"), Options{Replicas: 4})
	for k, want := range map[string]string{
		"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB-SHARED", "nvidia.com/gpu.sharing-strategy": "time-slicing",
		"nvidia.com/gpu.replicas": "4", "nvidia.com/mig.capable": "false", "nvidia.com/gpu.family": "volta",
		"gpuplane.io/gpu.nvlink-clique-size": "4", "nvidia.com/mig.strategy": "none",
	} {
		if v[k] != want {
			t.Errorf("V100 %s = %q, want %q", k, v[k], want)
		}
	}
	if Compute(node(t, "dgx1-v100"), Options{Replicas: 4, Renamed: true})["nvidia.com/gpu.product"] != "Tesla-V100-SXM2-16GB" {
		t.Error("renamed shared resource still suffixed")
	}
	if got := Compute(node(t, "l40s-pcie-4"), Options{})["gpuplane.io/gpu.nvlink-clique-size"]; got != "1" {
		t.Errorf("L40S clique = %s, want 1", got)
	}
	if got := Compute(device.Node{}, Options{}); !reflect.DeepEqual(got, map[string]string{"nvidia.com/gpu.count": "0"}) {
		t.Errorf("no GPUs: %v", got)
	}
}

func TestComputeSingle(t *testing.T) {
	p, err := mock.ParseProfile("p.yaml", []byte("name: s\ngpus: [{count: 2, productName: NVIDIA A100-SXM4-40GB, mig: [2g.10gb, 2g.10gb, 2g.10gb]}]"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := p.Node()
	l := Compute(n, Options{MIGStrategy: "single"})
	if l["nvidia.com/gpu.product"] != "NVIDIA-A100-SXM4-40GB-MIG-2g.10gb" || l["nvidia.com/gpu.count"] != "6" || l["nvidia.com/gpu.memory"] != "9856" {
		t.Errorf("single: %v", Sorted(l))
	}
}

// rtxPro is NVML's name of the RTX PRO 6000 Blackwell Max-Q, 55
// characters once sanitised: "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-" is
// 36, "Workstation-" 12 more, "Edition" 7.
const rtxPro = "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"

// TestProduct: gpu-feature-discovery's product value (k8s-device-plugin
// internal/lm/resource.go getProductName and sanitise: characters outside
// [A-Za-z0-9-_. ] dropped, spaces to "-", parts joined by "-", "SHARED"
// last), cut to 63 characters in the model only. Worked out by hand:
// "-MIG-1g.24gb" is 12 characters, leaving 51 of the model
// (36 + 12 + "Edi"); with "-SHARED" (19 in all) 44 (36 + "Workstat").
func TestProduct(t *testing.T) {
	for _, tc := range []struct {
		model    string
		suffixes []string
		want     string
	}{
		{rtxPro, nil, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition"},
		{rtxPro, []string{"SHARED"}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition-SHARED"},
		{rtxPro, []string{"MIG", "1g.24gb"}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edi-MIG-1g.24gb"},
		{rtxPro, []string{"MIG", "1g.24gb", "SHARED"}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstat-MIG-1g.24gb-SHARED"},
		{rtxPro, []string{"MIG", "INVALID"}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edi-MIG-INVALID"},
		// sanitise drops characters rather than replacing them.
		{"NVIDIA  GeForce RTX 4090 (D)", nil, "NVIDIA-GeForce-RTX-4090-D"},
		{"NVIDIA A100-SXM4-80GB", []string{"MIG", "1g.10gb.me"}, "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb.me"},
		// A cut that ends on "-" loses it: 63 - 7 = 56 characters of 55 a's, "-" and b's end on "-".
		{strings.Repeat("a", 55) + " bbbb", []string{"SHARED"}, strings.Repeat("a", 55) + "-SHARED"},
	} {
		got := Product(tc.model, tc.suffixes...)
		if got != tc.want || len(got) > 63 {
			t.Errorf("Product(%q, %q) = %q (%d), want %q", tc.model, tc.suffixes, got, len(got), tc.want)
		}
	}
}

// TestComputeSingleLong: the RTX PRO's product under single, with and
// without time-slicing, keeps "-MIG-1g.24gb" and "-SHARED" (TestProduct).
func TestComputeSingleLong(t *testing.T) {
	n := device.Node{GPUs: []device.GPU{{ProductName: rtxPro, MemoryMiB: 97887, MIGEnabled: true, MIG: []device.MIGDevice{{UUID: "MIG-1", Profile: "1g.24gb", MemoryMiB: 24064}}}}}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{MIGStrategy: "single"}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edi-MIG-1g.24gb"},
		{Options{MIGStrategy: "single", Replicas: 4}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstat-MIG-1g.24gb-SHARED"},
		{Options{MIGStrategy: "single", Replicas: 4, Renamed: true}, "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edi-MIG-1g.24gb"},
	} {
		l := Compute(n, tc.o)
		if errs := validation.IsValidLabelValue(l["nvidia.com/gpu.product"]); len(errs) != 0 {
			t.Errorf("%+v: %v", tc.o, errs)
		}
		if got := l["nvidia.com/gpu.product"]; got != tc.want || l["nvidia.com/gpu.memory"] != "24064" || l["nvidia.com/gpu.count"] != "1" {
			t.Errorf("%+v: product %q, want %q; %v", tc.o, got, tc.want, Sorted(l))
		}
	}
}

// TestComputeSingleInvalid: what gpu-feature-discovery writes when single
// does not fit the node (k8s-device-plugin internal/lm/mig-strategy.go
// newInvalidMigStrategyLabeler): product <model>-MIG-INVALID, count 0,
// replicas 0, sharing-strategy "", memory 0, even when time-sliced.
func TestComputeSingleInvalid(t *testing.T) {
	for _, profile := range []string{
		// MIG enabled without MIG devices.
		"gpus: [{productName: NVIDIA A100-SXM4-80GB, migEnabled: true}]",
		// Two profiles.
		"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [3g.40gb, 1g.10gb]}]",
		// MIG enabled and disabled.
		"gpus: [{productName: NVIDIA A100-SXM4-80GB, mig: [3g.40gb]}, {productName: NVIDIA A100-SXM4-80GB}]",
	} {
		p, err := mock.ParseProfile("p.yaml", []byte(profile))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := p.Node()
		l := Compute(n, Options{MIGStrategy: "single", Replicas: 2})
		for k, want := range map[string]string{
			"nvidia.com/gpu.product":          "NVIDIA-A100-SXM4-80GB-MIG-INVALID",
			"nvidia.com/gpu.count":            "0",
			"nvidia.com/gpu.replicas":         "0",
			"nvidia.com/gpu.sharing-strategy": "",
			"nvidia.com/gpu.memory":           "0",
			"nvidia.com/mig.strategy":         "single",
			"nvidia.com/gpu.family":           "ampere",
		} {
			if got, ok := l[k]; !ok || got != want {
				t.Errorf("%s: %s = %q, want %q", profile, k, got, want)
			}
		}
	}
}

// TestComputeMixedNames: label keys under mixed use the resource's name
// ("+me" as ".me", k8s-device-plugin internal/resource/nvml-mig-device.go
// GetName); devices that get no resource (1c.7g.40gb) get no labels.
func TestComputeMixedNames(t *testing.T) {
	p, err := mock.ParseProfile("p.yaml", []byte(`
gpus:
- productName: NVIDIA A100-SXM4-80GB
  mig: [1g.10gb+me, 3g.40gb]
- productName: NVIDIA A100-SXM4-40GB
  mig: [{profile: 7g.40gb, computeInstances: [1, 1, 1, 1, 1, 1, 1]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := p.Node()
	var got []string
	for _, kv := range Sorted(Compute(n, Options{MIGStrategy: "mixed"})) {
		if strings.HasPrefix(kv, "nvidia.com/mig-") {
			got = append(got, kv)
		}
	}
	want := []string{
		"nvidia.com/mig-1g.10gb.me.count=1", "nvidia.com/mig-1g.10gb.me.memory=9856", "nvidia.com/mig-1g.10gb.me.multiprocessors=14",
		"nvidia.com/mig-3g.40gb.count=1", "nvidia.com/mig-3g.40gb.memory=40192", "nvidia.com/mig-3g.40gb.multiprocessors=42",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MIG labels\n got %v\nwant %v", got, want)
	}
	// Kubernetes' rules for label keys and values (apimachinery
	// validation, as the API server applies them).
	for k, v := range Compute(n, Options{MIGStrategy: "mixed"}) {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) != 0 {
			t.Errorf("label %s=%s: %v", k, v, errs)
		}
	}
}

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "NVIDIA-H100-80GB-HBM3",
		" odd (name) ":          "odd-name",
		strings.Repeat("a", 70): strings.Repeat("a", 63),
	} {
		if got := Value(in); got != want {
			t.Errorf("Value(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteFeatureFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gpuplane")
	if err := WriteFeatureFile(p, map[string]string{"nvidia.com/gpu.count": "8", "gpuplane.io/gpu.model": "H100-80GB"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	want := "# GPU feature labels written by gpuplane-node-agent\ngpuplane.io/gpu.model=H100-80GB\nnvidia.com/gpu.count=8\n"
	if string(data) != want {
		t.Errorf("file:\n%s\nwant:\n%s", data, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := WriteFeatureFile(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestAnnotations(t *testing.T) {
	n := device.Node{GPUs: []device.GPU{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "GPU-c"}}}
	if got := Annotations(n); !reflect.DeepEqual(got, map[string]string{"gpuplane.io/gpu-uuids": "GPU-a,GPU-b,GPU-c"}) {
		t.Errorf("Annotations = %v", got)
	}
	if got := Annotations(device.Node{}); got != nil {
		t.Errorf("Annotations of a node without GPUs = %v", got)
	}
}

func TestApplyToNode(t *testing.T) {
	c := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{"example.com/note": "y"}, Labels: map[string]string{
		"kubernetes.io/hostname":      "gpu-1",
		"nvidia.com/gpu.count":        "4",
		"nvidia.com/mig-1g.5gb.count": "7", // a profile that is gone
		"gpuplane.io/gpu.model":       "A100-40GB",
		"example.com/unrelated":       "x",
	}}})
	ctx := context.Background()
	want := map[string]string{"nvidia.com/gpu.count": "8", "gpuplane.io/gpu.model": "H100-80GB", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
	ann := map[string]string{"gpuplane.io/gpu-uuids": "GPU-a,GPU-b"}
	if err := ApplyToNode(ctx, c, "gpu-1", want, ann); err != nil {
		t.Fatal(err)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-1", metav1.GetOptions{})
	exp := map[string]string{
		"kubernetes.io/hostname": "gpu-1", "example.com/unrelated": "x",
		"nvidia.com/gpu.count": "8", "gpuplane.io/gpu.model": "H100-80GB", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
	}
	if !reflect.DeepEqual(n.Labels, exp) {
		t.Errorf("labels = %v, want %v", n.Labels, exp)
	}
	if expAnn := map[string]string{"example.com/note": "y", "gpuplane.io/gpu-uuids": "GPU-a,GPU-b"}; !reflect.DeepEqual(n.Annotations, expAnn) {
		t.Errorf("annotations = %v, want %v", n.Annotations, expAnn)
	}
	// Unchanged labels and annotations: no patch at all.
	before := len(c.Actions())
	if err := ApplyToNode(ctx, c, "gpu-1", want, ann); err != nil {
		t.Fatal(err)
	}
	if acts := c.Actions()[before:]; len(acts) != 1 || acts[0].GetVerb() != "get" {
		t.Errorf("second apply did %v", acts)
	}
	if err := ApplyToNode(ctx, c, "gpu-2", want, ann); err == nil || !strings.Contains(err.Error(), "labelling node gpu-2") {
		t.Errorf("missing node: %v", err)
	}
}

// TestApplyKeepsForeignLabels: labels under the agent's prefixes that the
// GPU operator and its MIG manager own (a layout asked for, its state, an
// operand switched off, the workload type) survive an apply that does not
// compute them; a stale label the agent owns beside them is removed.
func TestApplyKeepsForeignLabels(t *testing.T) {
	foreign := map[string]string{
		"nvidia.com/mig.config":               "all-1g.10gb",
		"nvidia.com/mig.config.state":         "pending",
		"nvidia.com/gpu.deploy.device-plugin": "false",
		"nvidia.com/gpu.workload.config":      "container",
	}
	labels := map[string]string{"nvidia.com/mig.strategy": "mixed"} // stale: the agent's own
	for k, v := range foreign {
		labels[k] = v
	}
	c := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: labels}})
	ctx := context.Background()
	if err := ApplyToNode(ctx, c, "gpu-1", map[string]string{"nvidia.com/gpu.count": "8"}, nil); err != nil {
		t.Fatal(err)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-1", metav1.GetOptions{})
	foreign["nvidia.com/gpu.count"] = "8"
	if !reflect.DeepEqual(n.Labels, foreign) {
		t.Errorf("labels = %v, want %v", n.Labels, foreign)
	}
	for key, want := range map[string]bool{
		"nvidia.com/gpu.product": true, "nvidia.com/mig-1g.10gb.count": true, "nvidia.com/mig.strategy": true,
		"nvidia.com/cuda.driver.major": true, "gpuplane.io/gpu.model": true,
		"nvidia.com/mig.config": false, "nvidia.com/mig.config.state": false, "nvidia.com/gpu.deploy.dcgm-exporter": false,
		"nvidia.com/gpu.workload.config": false, "kubernetes.io/hostname": false, "nvidia.com/device-plugin.config": false,
		"gpuplane.io/kubelet-api": false, // set by hand under nodeAgent.perNode (values.yaml)
	} {
		if Owned(key) != want {
			t.Errorf("Owned(%q) = %v, want %v", key, !want, want)
		}
	}
}

func TestApplyUntilDone(t *testing.T) {
	c := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1"}})
	// The API server fails the first two reads of the Node.
	failures := 2
	c.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	want := map[string]string{"nvidia.com/gpu.count": "8"}
	if err := ApplyUntilDone(context.Background(), c, "gpu-1", want, nil, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	n, _ := c.CoreV1().Nodes().Get(context.Background(), "gpu-1", metav1.GetOptions{})
	if !reflect.DeepEqual(n.Labels, want) || failures != 0 {
		t.Errorf("labels %v after %d failures left, want %v", n.Labels, failures, want)
	}

	// A node that never exists: it keeps trying until the context ends.
	ctx, cancel := context.WithCancel(context.Background())
	c.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		cancel() // the agent stops while it waits to retry
		return false, nil, nil
	})
	if err := ApplyUntilDone(ctx, c, "gpu-2", want, nil, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("ApplyUntilDone after cancel = %v, want context.Canceled", err)
	}
}
