// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// draNodes are the nodes of testdata/teams-dra.yaml: two kwok nodes whose
// 2 A100-80GB each are published in ResourceSlices (publishGPUs), not as
// nvidia.com/gpu allocatable, and labelled with the product the flavor
// selects (the node agent's feature labels, which it writes under DRA
// too).
var draNodes = []kube.Node{
	{Name: "dra-0", CPUMilli: 64000, MemoryMiB: 256 << 10, Labels: map[string]string{"nvidia.com/gpu.product": "A100-80GB"}},
	{Name: "dra-1", CPUMilli: 64000, MemoryMiB: 256 << 10, Labels: map[string]string{"nvidia.com/gpu.product": "A100-80GB"}},
}

// publishGPUs publishes, for each node, a ResourceSlice of driver
// gpu.nvidia.com with the node's GPUs as the node agent names them
// (gpu-<minor>, attribute type gpu, docs/dra.md), so that the scheduler's
// DynamicResources plugin allocates claims of DeviceClass gpu.nvidia.com
// on kwok nodes.
func publishGPUs(ctx context.Context, t *testing.T, c *kube.Cluster, nodes []kube.Node, gpus int) {
	t.Helper()
	for _, n := range nodes {
		s := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-gpus"},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   apidra.DriverName,
				Pool:     resourcev1.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1},
				NodeName: ptr.To(n.Name),
			},
		}
		for i := range gpus {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"type":        {StringValue: ptr.To("gpu")},
					"productName": {StringValue: ptr.To("NVIDIA A100-SXM4-80GB")},
				}})
		}
		if _, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// claimTemplate creates ResourceClaimTemplate ns/name with one request of
// devices of class (count devices, a CEL selector when sel is set, a
// capacity request when capacity is set).
func claimTemplate(ctx context.Context, t *testing.T, c *kube.Cluster, ns, name, class string, count int64, sel string, capacity map[resourcev1.QualifiedName]resource.Quantity) {
	t.Helper()
	req := resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}}
	if sel != "" {
		req.Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: sel}}}
	}
	if capacity != nil {
		req.Exactly.Capacity = &resourcev1.CapacityRequirements{Requests: capacity}
	}
	rct := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{req}}}}}
	if _, err := c.Client.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, rct, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// draJob is kube.KueueJob for the upstream scheduler (default-scheduler,
// whose DynamicResources plugin allocates claims): one pod asking 1 cpu
// and 1 GiB, and either the devices of ResourceClaimTemplate template or,
// with template "", gpus nvidia.com/gpu (served through DRA by the
// DeviceClass's extendedResourceName).
func draJob(ns, name, template string, gpus int64) *batchv1.Job {
	j := kube.KueueJob(ns, name, ns, 1, gpus)
	spec := &j.Spec.Template.Spec
	spec.SchedulerName = ""
	if template != "" {
		ctr := &spec.Containers[0]
		delete(ctr.Resources.Requests, "nvidia.com/gpu")
		delete(ctr.Resources.Limits, "nvidia.com/gpu")
		ctr.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(template)}}
	}
	return j
}

// gpuUsage returns the nvidia.com/gpu of the admitted Workload of Job
// ns/job (status.admission.podSetAssignments[0].resourceUsage): what
// Kueue counted against the quota.
func gpuUsage(ctx context.Context, t *testing.T, c *kube.Cluster, ns, job string) string {
	t.Helper()
	return usageOf(ctx, t, c, ns, job, "nvidia.com/gpu")
}

// usageOf is gpuUsage for resource res.
func usageOf(ctx context.Context, t *testing.T, c *kube.Cluster, ns, job, res string) string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(kube.KueueGV.WithResource("workloads")).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range list.Items {
		for _, o := range u.GetOwnerReferences() {
			if o.Kind == "Job" && o.Name == job {
				psa, _, _ := unstructured.NestedSlice(u.Object, "status", "admission", "podSetAssignments")
				if len(psa) == 0 {
					return ""
				}
				m, _ := psa[0].(map[string]any)
				v, _, _ := unstructured.NestedString(m, "resourceUsage", res)
				return v
			}
		}
	}
	t.Fatalf("no workload of job %s/%s", ns, job)
	return ""
}

// allocated waits until the pod of Job ns/job is bound and returns its
// node and the devices (pool/device, sorted) allocated to its claims.
func allocated(ctx context.Context, t *testing.T, c *kube.Cluster, ns, job string) (string, []string) {
	t.Helper()
	nodes, err := c.WaitJobPods(ctx, ns, job, 1)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := c.Client.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, cl := range claims.Items {
			for _, o := range cl.OwnerReferences {
				if o.UID == p.UID && cl.Status.Allocation != nil {
					for _, r := range cl.Status.Allocation.Devices.Results {
						devs = append(devs, r.Pool+"/"+r.Device)
					}
				}
			}
		}
	}
	sort.Strings(devs)
	return nodes[0], devs
}

// startDRAKueue starts a control plane with draNodes and their GPUs
// published, Kueue v0.17.0 configured with conf (its resources and
// featureGates keys as gpuplane quota --kueue-config writes them, over
// the test cluster's own configuration), gpuplane-scheduler with
// upstream's default profile, the chart's DeviceClasses, and the objects
// of gpuplane quota --gpu-api dra for testdata/teams-dra.yaml.
func startDRAKueue(t *testing.T, conf KueueConfiguration) *kube.Cluster {
	t.Helper()
	c := kube.StartT(t, kube.Options{})
	keys, err := conf.Keys()
	if err != nil {
		t.Fatal(err)
	}
	kube.StartKueueT(t, c, kube.KueueOptions{Config: keys})
	kube.StartGPUplaneSchedulerT(t, c, kube.DefaultProfileOnly)
	ctx := t.Context()
	if err := kube.InstallDeviceClasses(ctx, c.Client, filepath.Join("..", "..", kube.DeviceClassTemplate)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNodes(ctx, draNodes); err != nil {
		t.Fatal(err)
	}
	publishGPUs(ctx, t, c, draNodes, 2)
	applyPlanFor(t, c, "testdata/teams-dra.yaml", map[string]int{"A100-80GB": 4}, DRA)
	return c
}

// TestQuotaOnKueueDRA runs what gpuplane quota --gpu-api dra writes for
// testdata/teams-dra.yaml (team vision, nominal 3 A100-80GB) on a running
// Kueue v0.17.0 configured with KueueConfigFor(DRA), with two kwok nodes
// of 2 GPUs published in ResourceSlices, and Jobs of one pod each,
// created one after another (by hand, in GPUs of vision's quota):
//
//  1. claim-2 claims 2 gpu.nvidia.com through a ResourceClaimTemplate:
//     admitted on flavor a100-80gb, counted as nvidia.com/gpu 2 (0 + 2 <=
//     3); its pod's claim is allocated both GPUs of one node.
//  2. ext-1 asks nvidia.com/gpu: 1, which the DeviceClass serves
//     (extendedResourceName): counted as 1 of the same quota (2 + 1 = 3);
//     its pod gets a GPU of the other node, the only one with free GPUs.
//  3. claim-1 claims 1 GPU: 3 + 1 > 3, it waits, Kueue saying
//     "insufficient unused quota for nvidia.com/gpu in flavor a100-80gb,
//     1 more needed" (its message of pkg/scheduler/flavorassigner).
//  4. claim-2 deleted: 1 + 1 <= 3, claim-1 is admitted and runs on the
//     node claim-2 left.
//  5. share claims 250 milliGPU and 10Gi of one GPU (consumable
//     capacity): Kueue v0.17.0 counts devices, not capacity (pkg/dra
//     claims.go countDevicesPerClass), so it takes a whole nvidia.com/gpu
//     (2 + 1 = 3).
//  6. mig claims one mig.nvidia.com device with profile 1g.10gb (a CEL
//     selector, as docs/dra.md writes MIG claims): Kueue refuses it,
//     "CEL selectors are not supported".
//  7. named uses a ResourceClaim by name (resourceClaimName), not a
//     template: Kueue refuses it, "DynamicResourceAllocation feature does
//     not support use of resource claims".
func TestQuotaOnKueueDRA(t *testing.T) {
	conf, err := KueueConfigFor(DRA)
	if err != nil {
		t.Fatal(err)
	}
	c := startDRAKueue(t, conf)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	nodesFromSlices(ctx, t, c)
	const ns = "vision"
	claimTemplate(ctx, t, c, ns, "one-gpu", apidra.GPUDeviceClass, 1, "", nil)
	claimTemplate(ctx, t, c, ns, "two-gpus", apidra.GPUDeviceClass, 2, "", nil)
	claimTemplate(ctx, t, c, ns, "share", apidra.GPUDeviceClass, 1, "",
		map[resourcev1.QualifiedName]resource.Quantity{"milliGPU": resource.MustParse("250"), "memory": resource.MustParse("10Gi")})
	claimTemplate(ctx, t, c, ns, "mig-1g", "mig.nvidia.com", 1, "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", nil)
	create := func(name, template string, gpus int64) {
		t.Helper()
		if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, draJob(ns, name, template, gpus), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	admitted := func(name, usage string) {
		t.Helper()
		w, err := c.WaitWorkload(ctx, ns, name, "Admitted", func(w kube.WorkloadState) bool { return w.Is("Admitted") })
		if err != nil {
			t.Fatal(err)
		}
		if w.Flavor != "a100-80gb" {
			t.Errorf("%s admitted on flavor %q, want a100-80gb", name, w.Flavor)
		}
		if got := gpuUsage(ctx, t, c, ns, name); got != usage {
			t.Errorf("%s counted as nvidia.com/gpu %q, want %q", name, got, usage)
		}
	}
	refused := func(name, want string) {
		t.Helper()
		w, err := c.WaitWorkload(ctx, ns, name, "refused: "+want, func(w kube.WorkloadState) bool {
			q, ok := w.Conditions["QuotaReserved"]
			return ok && q.Status == "False" && strings.Contains(q.Message, want)
		})
		if err != nil {
			t.Fatal(err)
		}
		if w.Is("Admitted") {
			t.Errorf("%s admitted: %+v", name, w.Conditions)
		}
	}

	create("claim-2", "two-gpus", 0)
	admitted("claim-2", "2")
	node2, devs := allocated(ctx, t, c, ns, "claim-2")
	if want := []string{node2 + "/gpu-0", node2 + "/gpu-1"}; strings.Join(devs, ",") != strings.Join(want, ",") {
		t.Errorf("claim-2 allocated %v, want %v", devs, want)
	}
	other := "dra-0"
	if node2 == "dra-0" {
		other = "dra-1"
	}

	create("ext-1", "", 1)
	admitted("ext-1", "1")
	if node, devs := allocated(ctx, t, c, ns, "ext-1"); node != other || len(devs) != 1 || !strings.HasPrefix(devs[0], other+"/gpu-") {
		t.Errorf("ext-1 on %s with %v, want one GPU of %s", node, devs, other)
	}

	create("claim-1", "one-gpu", 0)
	refused("claim-1", "insufficient unused quota for nvidia.com/gpu in flavor a100-80gb, 1 more needed")

	if err := c.Client.BatchV1().Jobs(ns).Delete(ctx, "claim-2", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	admitted("claim-1", "1")
	if node, devs := allocated(ctx, t, c, ns, "claim-1"); node != node2 || len(devs) != 1 {
		t.Errorf("claim-1 on %s with %v, want one GPU of %s", node, devs, node2)
	}

	create("share", "share", 0)
	admitted("share", "1")

	create("mig", "mig-1g", 0)
	refused("mig", "CEL selectors are not supported")

	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "named", Namespace: ns},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: apidra.GPUDeviceClass, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}}}}}
	if _, err := c.Client.ResourceV1().ResourceClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j := draJob(ns, "named", "unused", 0)
	j.Spec.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("named")}}
	if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("named", "DynamicResourceAllocation feature does not support use of resource claims")
}

// draNodesTemplate and draNodesAWK are the node list command of
// docs/quota.md for DRA nodes, which have no nvidia.com/gpu allocatable:
// kubectl writes node and productName of every whole GPU (type gpu) of
// driver gpu.nvidia.com in the ResourceSlices, and sort | uniq -c | awk
// counts them per node and model into openb rows, the product name with
// '-' for ' ' as gpu-feature-discovery writes it in nvidia.com/gpu.product.
const (
	draNodesTemplate = `{{range .items}}{{if eq .spec.driver "gpu.nvidia.com"}}{{$n := .spec.nodeName}}{{range .spec.devices}}{{if eq (index .attributes "type").string "gpu"}}{{$n}},{{(index .attributes "productName").string}}{{"\n"}}{{end}}{{end}}{{end}}{{end}}`
	draNodesAWK      = `{c=$1; sub(/^ *[0-9]+ /, ""); split($0, f, ","); gsub(/ /, "-", f[2]); print f[1] ",0,0," c "," f[2]}`
)

// nodesFromSlices checks the DRA node list command of docs/quota.md on
// publishGPUs's slices: 2 nodes of 2 GPUs of product name "NVIDIA
// A100-SXM4-80GB" are 4 NVIDIA-A100-SXM4-80GB.
func nodesFromSlices(ctx context.Context, t *testing.T, c *kube.Cluster) {
	t.Helper()
	script := `echo sn,cpu_milli,memory_mib,gpu,model; "$0" --kubeconfig "$1" get resourceslices -o go-template="$2" | sort | uniq -c | awk "$3"`
	out, err := exec.CommandContext(ctx, "sh", "-c", script, kube.Binary(t, "kubectl"), c.Kubeconfig, draNodesTemplate, draNodesAWK).Output()
	if err != nil {
		t.Fatalf("node list from slices: %v", err)
	}
	list, err := trace.ReadNodes("nodes.csv", strings.NewReader(string(out)))
	if err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if got := Capacity(list); len(got) != 1 || got["NVIDIA-A100-SXM4-80GB"] != 4 || len(list) != 2 {
		t.Errorf("capacity %v of %d nodes from\n%s; want 4 NVIDIA-A100-SXM4-80GB on 2", got, len(list), out)
	}
}

// TestQuotaOnKueueDRANeedsGates shows why KueueConfigFor(DRA) turns on
// Kueue's DRA gates: with the device-plugin Configuration (no gates, no
// mapping) Kueue v0.17.0 ignores resource claims, so two Jobs claiming 2
// GPUs each, 4 past vision's nominal 3, are admitted counting no
// nvidia.com/gpu at all, and get all 4 GPUs. A pod asking nvidia.com/gpu,
// though DRA serves it, is counted as that extended resource with no
// gate: ext-3 (3 GPUs) is admitted counted 3, then ext-1 waits, 1 more
// needed.
func TestQuotaOnKueueDRANeedsGates(t *testing.T) {
	c := startDRAKueue(t, KueueConfig())
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	claimTemplate(ctx, t, c, "vision", "two-gpus", apidra.GPUDeviceClass, 2, "", nil)
	for _, name := range []string{"a", "b"} {
		if _, err := c.Client.BatchV1().Jobs("vision").Create(ctx, draJob("vision", name, "two-gpus", 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitWorkload(ctx, "vision", name, "Admitted", func(w kube.WorkloadState) bool { return w.Is("Admitted") }); err != nil {
			t.Fatal(err)
		}
		if got := gpuUsage(ctx, t, c, "vision", name); got != "" {
			t.Errorf("%s counted as nvidia.com/gpu %q, want none", name, got)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, devs := allocated(ctx, t, c, "vision", name); len(devs) != 2 {
			t.Errorf("%s allocated %v, want 2 GPUs", name, devs)
		}
	}
	for _, j := range []*batchv1.Job{draJob("vision", "ext-3", "", 3), draJob("vision", "ext-1", "", 1)} {
		if _, err := c.Client.BatchV1().Jobs("vision").Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if j.Name == "ext-3" {
			if _, err := c.WaitWorkload(ctx, "vision", "ext-3", "Admitted", func(w kube.WorkloadState) bool { return w.Is("Admitted") }); err != nil {
				t.Fatal(err)
			}
			if got := gpuUsage(ctx, t, c, "vision", "ext-3"); got != "3" {
				t.Errorf("ext-3 counted as nvidia.com/gpu %q, want 3", got)
			}
		}
	}
	const msg = "insufficient unused quota for nvidia.com/gpu in flavor a100-80gb, 1 more needed"
	if _, err := c.WaitWorkload(ctx, "vision", "ext-1", "refused: "+msg, func(w kube.WorkloadState) bool {
		q, ok := w.Conditions["QuotaReserved"]
		return ok && q.Status == "False" && strings.Contains(q.Message, msg)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestDRANodeListDocumented: docs/quota.md shows the DRA node list
// command that nodesFromSlices runs, template and awk program alike.
func TestDRANodeListDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "quota.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-o go-template='" + draNodesTemplate + "'", "awk '" + draNodesAWK + "'"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/quota.md lacks %s", want)
		}
	}
}

// TestKueueDRAMIGProfileClass tries the way docs/quota.md gives around
// Kueue v0.17.0 refusing MIG claims (a CEL selector in the claim): the
// selector in a DeviceClass of one profile, mig-1g.10gb.nvidia.com,
// mapped to nvidia.com/mig-1g.10gb beside quota's gpu.nvidia.com mapping,
// and vision's ClusterQueue covering it with a nominal of 2 on flavor
// a100-80gb (by hand; gpuplane quota writes no MIG quotas). Claims of one
// device of that class: mig-a and mig-b are admitted, counted 1 each; mig-c
// waits, 2 + 1 > 2, "1 more needed". Admission only: the slices publish no
// MIG devices.
func TestKueueDRAMIGProfileClass(t *testing.T) {
	const (
		class = "mig-1g.10gb.nvidia.com"
		res   = "nvidia.com/mig-1g.10gb"
	)
	conf, err := KueueConfigFor(DRA)
	if err != nil {
		t.Fatal(err)
	}
	conf.Resources.DeviceClassMappings = append(conf.Resources.DeviceClassMappings, DeviceClassMapping{Name: res, DeviceClassNames: []string{class}})
	c := startDRAKueue(t, conf)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Spec: resourcev1.DeviceClassSpec{
		Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: "device.driver == 'gpu.nvidia.com' && " +
			"device.attributes['gpu.nvidia.com'].type == 'mig' && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}}}}
	if _, err := c.Client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	patch := `[{"op": "add", "path": "/spec/resourceGroups/0/coveredResources/-", "value": "` + res + `"},
		{"op": "add", "path": "/spec/resourceGroups/0/flavors/0/resources/-", "value": {"name": "` + res + `", "nominalQuota": 2}}]`
	if _, err := dyn.Resource(kube.KueueGV.WithResource("clusterqueues")).Patch(ctx, "vision", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	claimTemplate(ctx, t, c, "vision", "mig-1g", class, 1, "", nil)
	for _, name := range []string{"mig-a", "mig-b", "mig-c"} {
		if _, err := c.Client.BatchV1().Jobs("vision").Create(ctx, draJob("vision", name, "mig-1g", 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if name == "mig-c" {
			break
		}
		if _, err := c.WaitWorkload(ctx, "vision", name, "Admitted", func(w kube.WorkloadState) bool { return w.Is("Admitted") }); err != nil {
			t.Fatal(err)
		}
		if got := usageOf(ctx, t, c, "vision", name, res); got != "1" {
			t.Errorf("%s counted as %s %q, want 1", name, res, got)
		}
	}
	msg := "insufficient unused quota for " + res + " in flavor a100-80gb, 1 more needed"
	if _, err := c.WaitWorkload(ctx, "vision", "mig-c", "refused: "+msg, func(w kube.WorkloadState) bool {
		q, ok := w.Conditions["QuotaReserved"]
		return ok && q.Status == "False" && strings.Contains(q.Message, msg)
	}); err != nil {
		t.Fatal(err)
	}
}
