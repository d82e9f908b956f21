// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// kueueVersion is the Kueue release whose CRDs the generated objects are
// checked against.
const kueueVersion = "v0.17.0"

// kueueCRDs returns the paths of Kueue's CRDs (config/components/crd/bases
// of the sigs.k8s.io/kueue module) for the kinds Plan writes. The module is
// fetched with `go mod download` (from the module cache when warm); it is
// not a dependency of gpuplane.
func kueueCRDs(t *testing.T) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", "sigs.k8s.io/kueue@"+kueueVersion).Output()
	var mod struct{ Dir string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err == nil && mod.Dir == "" {
		err = errors.New("no Dir")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go mod download sigs.k8s.io/kueue@%s: %v", kueueVersion, err)
		}
		t.Skipf("go mod download sigs.k8s.io/kueue@%s: %v", kueueVersion, err)
	}
	var paths []string
	for _, r := range []string{"cohorts", "resourceflavors", "workloadpriorityclasses", "clusterqueues", "localqueues"} {
		paths = append(paths, filepath.Join(mod.Dir, "config", "components", "crd", "bases", "kueue.x-k8s.io_"+r+".yaml"))
	}
	return paths
}

// decodeAll reads a multi-document YAML stream into objects.
func decodeAll(t *testing.T, r io.Reader) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// resources maps the kinds Plan writes to their API resources.
var resources = map[string]string{
	"Cohort": "cohorts", "ResourceFlavor": "resourceflavors", "WorkloadPriorityClass": "workloadpriorityclasses",
	"ClusterQueue": "clusterqueues", "LocalQueue": "localqueues", "ResourceQuota": "resourcequotas",
	"CustomResourceDefinition": "customresourcedefinitions",
}

func gvr(o *unstructured.Unstructured) schema.GroupVersionResource {
	return o.GroupVersionKind().GroupVersion().WithResource(resources[o.GetKind()])
}

// TestKueueServerDryRun installs Kueue v0.17.0's CRDs in a real
// kube-apiserver and creates every object gpuplane quota writes for
// testdata/teams.yaml with server-side dry-run and strict field validation
// (an unknown or misspelled field is refused, not dropped): the API server
// accepts all 18. A ClusterQueue with a borrowingLimit and no cohortName,
// which Kueue's CRD forbids, is refused, so validation is in force.
func TestKueueServerDryRun(t *testing.T) {
	crds := kueueCRDs(t)
	c := kube.StartT(t, kube.Options{})
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, p := range crds {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range decodeAll(t, f) {
			if _, err := dyn.Resource(gvr(o)).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		f.Close()
	}
	// Wait until each CRD is Established (served).
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, r := range []string{"cohorts", "resourceflavors", "workloadpriorityclasses", "clusterqueues", "localqueues"} {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx2 context.Context) (bool, error) {
			crd, err := dyn.Resource(crdGVR).Get(ctx2, r+".kueue.x-k8s.io", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cd := range conds {
				m, _ := cd.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", r, err)
		}
	}

	ts, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range ts.Teams {
		for _, ns := range tm.Namespaces {
			if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	objs, err := Plan("teams.yaml", ts, map[string]int{"V100M32": 204, "T4": 842, "A10": 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, objs); err != nil {
		t.Fatal(err)
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	create := func(o *unstructured.Unstructured) error {
		// The CRDs' discovery can lag Established by a moment: retry a
		// not-found resource for up to a minute.
		var err error
		for deadline := time.Now().Add(time.Minute); ; {
			if ns := o.GetNamespace(); ns != "" {
				_, err = dyn.Resource(gvr(o)).Namespace(ns).Create(ctx, o, dryRun)
			} else {
				_, err = dyn.Resource(gvr(o)).Create(ctx, o, dryRun)
			}
			if err == nil || !strings.Contains(err.Error(), "the server could not find the requested resource") || time.Now().After(deadline) {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	got := decodeAll(t, &buf)
	if len(got) != 18 {
		t.Errorf("%d objects, want 18", len(got))
	}
	for _, o := range got {
		if err := create(o); err != nil {
			t.Errorf("%s %s/%s refused: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}

	nodesFromKubectl(t, c)

	bad := decodeAll(t, strings.NewReader(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: alone}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: t4
      resources: [{name: nvidia.com/gpu, nominalQuota: 1, borrowingLimit: 1}]
`))[0]
	if err := create(bad); err == nil || !strings.Contains(err.Error(), "borrowingLimit must be nil when cohort is empty") {
		t.Errorf("ClusterQueue without cohortName but with borrowingLimit: error %v", err)
	}
}

// nodesJSONPath is the kubectl -o jsonpath of docs/quota.md that writes
// the rows of an openb node list from a cluster's GPU nodes: name, 0 CPU
// and memory (unused by gpuplane quota), allocatable nvidia.com/gpu and
// the nvidia.com/gpu.product label as the model.
const nodesJSONPath = `{range .items[*]}{.metadata.name},0,0,{.status.allocatable.nvidia\.com/gpu},{.metadata.labels.nvidia\.com/gpu\.product}{"\n"}{end}`

// nodesFromKubectl checks the node list command of docs/quota.md: two
// nodes of 8 NVIDIA-A100-SXM4-80GB and a CPU node give 16 GPUs of that
// model.
func nodesFromKubectl(t *testing.T, c *kube.Cluster) {
	t.Helper()
	a100 := map[string]string{resource.LabelGPUProduct: "NVIDIA-A100-SXM4-80GB"}
	nodes := []kube.Node{
		{Name: "a100-0", CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 8, Model: "A100-80GB", Labels: a100},
		{Name: "a100-1", CPUMilli: 96000, MemoryMiB: 1 << 20, GPUs: 8, Model: "A100-80GB", Labels: a100},
		{Name: "cpu-0", CPUMilli: 64000, MemoryMiB: 1 << 18},
	}
	if err := c.CreateNodes(t.Context(), nodes); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), kube.Binary(t, "kubectl"), "--kubeconfig", c.Kubeconfig,
		"get", "nodes", "-l", resource.LabelGPUProduct, "-o", "jsonpath="+nodesJSONPath).Output()
	if err != nil {
		t.Fatalf("kubectl: %v", err)
	}
	csv := "sn,cpu_milli,memory_mib,gpu,model\n" + string(out)
	list, err := trace.ReadNodes("nodes.csv", strings.NewReader(csv))
	if err != nil {
		t.Fatalf("%v in\n%s", err, csv)
	}
	if got := Capacity(list); len(got) != 1 || got["NVIDIA-A100-SXM4-80GB"] != 16 {
		t.Errorf("capacity %v from\n%s; want 16 NVIDIA-A100-SXM4-80GB", got, csv)
	}
}
