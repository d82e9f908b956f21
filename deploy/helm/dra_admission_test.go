// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/webhook"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const draTestdata = "../../internal/webhook/policy/testdata/dra/"

const nvidiaTestdata = "../../internal/node/agent/testdata/nvidia-dra/"

// draObjects reads the pods (a Deployment's pod template as a pod of its
// name), ResourceClaimTemplates and ResourceClaims of manifest file.
func draObjects(t *testing.T, file string) (pods []*corev1.Pod, tpls []*resourcev1.ResourceClaimTemplate, rcs []*resourcev1.ResourceClaim) {
	t.Helper()
	data, err := os.ReadFile(file)
	must(t, err)
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head metav1.TypeMeta
		must(t, yaml.Unmarshal([]byte(doc), &head))
		switch head.Kind {
		case "Pod":
			var p corev1.Pod
			must(t, yaml.Unmarshal([]byte(doc), &p))
			pods = append(pods, &p)
		case "ResourceClaimTemplate":
			var rt resourcev1.ResourceClaimTemplate
			must(t, yaml.Unmarshal([]byte(doc), &rt))
			tpls = append(tpls, &rt)
		case "ResourceClaim":
			var rc resourcev1.ResourceClaim
			must(t, yaml.Unmarshal([]byte(doc), &rc))
			rcs = append(rcs, &rc)
		case "Deployment":
			var d appsv1.Deployment
			must(t, yaml.Unmarshal([]byte(doc), &d))
			pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name, Labels: d.Spec.Template.Labels}, Spec: d.Spec.Template.Spec})
		}
	}
	return pods, tpls, rcs
}

// claimPolicyPrefix is the API server's refusal by the chart's claim
// policy of kind NS/NAME, before the rule's message.
func claimPolicyPrefix(kind, ns, name string) string {
	return "ValidatingAdmissionPolicy '" + webhookName + "-claims' with binding '" + webhookName + "-claims' denied request: gpuplane GPU policy refuses " + kind + " " + ns + "/" + name + ": "
}

// TestAdmissionPolicyDRAOnCluster: on a real kube-apiserver with the
// chart's ValidatingAdmissionPolicies (failurePolicy Fail: the pod policy
// and the claim policy) rendered from testdata/dra/policy.yaml (team
// ml-train, namespaces ml-train and gpu-test1, 8 GPUs a pod) and no
// webhook, the ResourceClaimTemplates and pods of the DRA fixtures are
// created, and the webhook's rules, reading the same templates from the
// same API server (ReadClaims), are applied to the pods. NVIDIA's
// quickstart pod (gpu-test1.yaml, the shape of k8s-dra-driver-gpu
// demo/specs/quickstart/v1/gpu-test1.yaml) is admitted by both; the CPU
// pod tolerating the GPU taint is refused by both with one message;
// train-8 and its 8-GPU template are admitted by both. The 16-GPU template
// (exactly.count 16, class gpu.nvidia.com: 16 GPUs by hand against 8) is
// refused at creation by the claim policy with the webhook's
// max-gpus-per-pod message ("the claim" for "the pod"), so pod train-16
// names a template that does not exist; the webhook's rules are applied to
// it with the template's spec from the file (as had it been created before
// the policy), and refuse it.
func TestAdmissionPolicyDRAOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	file := draTestdata + "policy.yaml"
	pol := readPolicy(t, file)
	var pods []*corev1.Pod
	var tpls []*resourcev1.ResourceClaimTemplate
	for _, f := range []string{"gpu-test1.yaml", "cpu-squatter.yaml", "ml-train.yaml"} {
		ps, ts, _ := draObjects(t, draTestdata+f)
		pods, tpls = append(pods, ps...), append(tpls, ts...)
	}
	admin, alice := draCluster(t, file, []string{"gpu-test1", "ml-train"}, pods[1])
	ctx := t.Context()

	const tooMany = "max-gpus-per-pod: the pod asks for 16 GPUs, team ml-train allows at most 8 per pod; ask for fewer or split the work"
	fromFile := map[string]*resourcev1.ResourceClaimTemplate{}
	for _, tpl := range tpls {
		fromFile[tpl.Name] = tpl
		_, err := admin.ResourceV1().ResourceClaimTemplates(tpl.Namespace).Create(ctx, tpl, metav1.CreateOptions{})
		if tpl.Name != "sixteen-gpus" {
			must(t, err)
			continue
		}
		msg := claimPolicyPrefix("ResourceClaimTemplate", tpl.Namespace, tpl.Name) + strings.Replace(tooMany, "the pod asks", "the claim asks", 1)
		if err == nil || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("template %s: %v\nwant %q", tpl.Name, err, msg)
		}
	}

	const squatter = "gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"
	// want: what the webhook says, and what the pod policy says
	// ("" admitted), after "gpuplane GPU policy refuses pod NS/NAME: ".
	want := map[string][2]string{
		"pod1":     {"", ""},
		"squatter": {squatter, squatter},
		"train-8":  {"", ""},
		"train-16": {tooMany, ""},
	}
	read := webhook.ReadClaims(admin)
	claims := func(ctx context.Context, ns string, c policy.Claim) (*dra.ClaimSpec, error) {
		spec, err := read(ctx, ns, c)
		if spec == nil && err == nil && fromFile[c.TemplateName] != nil {
			return claimSpec(t, fromFile[c.TemplateName].Spec.Spec), nil
		}
		return spec, err
	}
	for _, p := range pods {
		w, ok := want[p.Name]
		if !ok {
			t.Fatalf("pod %s: no expectation", p.Name)
		}
		if got := webhookSays(t, pol, claims, p); got != w[0] {
			t.Errorf("%s/%s: the webhook says %q, want %q", p.Namespace, p.Name, got, w[0])
		}
		checkPodPolicy(t, alice, p, w[1])
	}
}

// TestAdmissionPolicyNVIDIAExamplesOnCluster: NVIDIA's DRA examples (the
// 12 fixtures of internal/node/agent/testdata/nvidia-dra, in the shapes of
// k8s-dra-driver-gpu demo/specs/quickstart; each at most 8 GPUs a pod)
// under their policy (one team, 8 GPUs a pod; here also allowedResources
// nvidia.com/*, which admits every GPU resource and makes the claim policy
// read every selector: a CEL error would refuse, failurePolicy Fail), on a
// real kube-apiserver
// with the chart's pod and claim policies and no webhook: every
// ResourceClaimTemplate and ResourceClaim is admitted, and so is a
// ResourceClaim of each template's spec (as the resourceclaim controller
// creates it for a pod); every pod (a Deployment's as a pod) is admitted by
// the pod policy and by the webhook's rules reading the same claims.
func TestAdmissionPolicyNVIDIAExamplesOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	data, err := os.ReadFile(nvidiaTestdata + "policy.yaml")
	must(t, err)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	must(t, os.WriteFile(file, append(data, "  allowedResources: [\"nvidia.com/*\"]\n"...), 0o644))
	pol := readPolicy(t, file)
	if got := pol.Teams[0].AllowedResources; len(got) != 1 || got[0] != "nvidia.com/*" {
		t.Fatalf("allowedResources %v", got)
	}
	fixtures, err := filepath.Glob(nvidiaTestdata + "gpu-*.yaml")
	must(t, err)
	if len(fixtures) != 12 {
		t.Fatalf("%d fixtures, want 12", len(fixtures))
	}
	var pods []*corev1.Pod
	var tpls []*resourcev1.ResourceClaimTemplate
	var rcs []*resourcev1.ResourceClaim
	var nss []string
	for _, f := range fixtures {
		ps, ts, cs := draObjects(t, f)
		pods, tpls, rcs = append(pods, ps...), append(tpls, ts...), append(rcs, cs...)
		nss = append(nss, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	if len(tpls) != 12 || len(rcs) != 1 || len(pods) != 15 {
		t.Fatalf("%d templates, %d claims, %d pods; want 12, 1, 15", len(tpls), len(rcs), len(pods))
	}
	// A pod that the pod policy refuses, to know it is in force: a CPU
	// pod tolerating the GPU taint.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: nss[0], Name: "probe"}, Spec: corev1.PodSpec{
		Containers:  []corev1.Container{{Name: "c", Image: "busybox"}},
		Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}}
	admin, alice := draCluster(t, file, nss, probe)
	ctx := t.Context()
	for _, tpl := range tpls {
		if _, err := admin.ResourceV1().ResourceClaimTemplates(tpl.Namespace).Create(ctx, tpl, metav1.CreateOptions{}); err != nil {
			t.Errorf("template %s/%s: %v", tpl.Namespace, tpl.Name, err)
		}
		rc := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: tpl.Namespace, Name: tpl.Name + "-from-template"}, Spec: tpl.Spec.Spec}
		if _, err := admin.ResourceV1().ResourceClaims(rc.Namespace).Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Errorf("claim of template %s/%s: %v", tpl.Namespace, tpl.Name, err)
		}
	}
	for _, rc := range rcs {
		if _, err := admin.ResourceV1().ResourceClaims(rc.Namespace).Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Errorf("claim %s/%s: %v", rc.Namespace, rc.Name, err)
		}
	}
	claims := webhook.ReadClaims(admin)
	for _, p := range pods {
		if got := webhookSays(t, pol, claims, p); got != "" {
			t.Errorf("%s/%s: the webhook says %q, want admitted", p.Namespace, p.Name, got)
		}
		checkPodPolicy(t, alice, p, "")
	}
}

// readPolicy parses the GPU policy file.
func readPolicy(t *testing.T, file string) *policy.Policy {
	t.Helper()
	data, err := os.ReadFile(file)
	must(t, err)
	pol, err := policy.Parse(file, data)
	must(t, err)
	return pol
}

// claimSpec is spec as api/dra reads it (the API's JSON).
func claimSpec(t *testing.T, spec resourcev1.ResourceClaimSpec) *dra.ClaimSpec {
	t.Helper()
	b, err := json.Marshal(spec)
	must(t, err)
	var out dra.ClaimSpec
	must(t, json.Unmarshal(b, &out))
	return &out
}

// webhookSays applies the webhook's rules to pod p, its claims read by
// claims: the violations joined by "; ", "" when admitted. Every claim
// must be read.
func webhookSays(t *testing.T, pol *policy.Policy, claims webhook.ClaimSpecs, p *corev1.Pod) string {
	t.Helper()
	wp := webhook.FromPodSpec(p.Labels, &p.Spec)
	wp.Name, wp.Namespace = p.Name, p.Namespace
	for i := range wp.Claims {
		var err error
		wp.Claims[i].Spec, err = claims(t.Context(), p.Namespace, wp.Claims[i])
		must(t, err)
		if wp.Claims[i].Spec == nil {
			t.Errorf("%s/%s: claim %s not read", p.Namespace, p.Name, wp.Claims[i].Name)
		}
	}
	var msgs []string
	for _, v := range pol.Validate(wp, policy.Namespace{Name: p.Namespace, Labels: map[string]string{"kubernetes.io/metadata.name": p.Namespace}}) {
		msgs = append(msgs, v.String())
	}
	return strings.Join(msgs, "; ")
}

// checkPodPolicy creates pod p as client c and checks the pod policy
// admits it (want "") or refuses it with want.
func checkPodPolicy(t *testing.T, c kubernetes.Interface, p *corev1.Pod, want string) {
	t.Helper()
	_, err := c.CoreV1().Pods(p.Namespace).Create(t.Context(), p, metav1.CreateOptions{})
	switch {
	case want == "" && err != nil:
		t.Errorf("%s/%s: %v, want admitted", p.Namespace, p.Name, err)
	case want == "":
	case err == nil:
		t.Errorf("%s/%s: admitted, want %q", p.Namespace, p.Name, want)
	default:
		msg := "ValidatingAdmissionPolicy '" + webhookName + "' with binding '" + webhookName + "' denied request: gpuplane GPU policy refuses pod " + p.Namespace + "/" + p.Name + ": " + want
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s/%s: %v\nwant %q", p.Namespace, p.Name, err, msg)
		}
	}
}

// draCluster starts kube-apiserver with namespaces nss and the chart's
// pod and claim policies rendered from policy file, and waits until both
// are in force (the API server loads policies in the background): pod
// probe, which the pod policy must refuse, is refused, and a dry-run
// template of 1000 GPUs in nss[0] is refused. It returns the admin's
// client and that of alice, who may create pods.
func draCluster(t *testing.T, file string, nss []string, probe *corev1.Pod) (admin, alice kubernetes.Interface) {
	vap, vapb := admissionPolicyObjects(t, file)
	r := render(t, "-f", policyValues(t, file))
	var cvap admissionregistrationv1.ValidatingAdmissionPolicy
	var cvapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", webhookName+"-claims", &cvap)
	r.get(t, "ValidatingAdmissionPolicyBinding", webhookName+"-claims", &cvapb)

	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin = c.Client
	for _, ns := range nss {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	alice = podCreator(t, c, "alice")
	for _, o := range []any{vap, vapb, &cvap, &cvapb} {
		must(t, create(ctx, admin, o))
	}
	n := int64(1000)
	big := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: nss[0], Name: "probe"}}
	big.Spec.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", Count: n, AllocationMode: resourcev1.DeviceAllocationModeExactCount}}}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(time.Minute)
	for {
		_, perr := alice.CoreV1().Pods(probe.Namespace).Create(ctx, probe, dry)
		_, terr := admin.ResourceV1().ResourceClaimTemplates(nss[0]).Create(ctx, big, dry)
		if perr != nil && terr != nil {
			return admin, alice
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policies were not in force after a minute: pod %v, template %v", perr, terr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClaimPolicyModelsResourcesOnCluster: the claim policy's
// allowed-models and allowed-resources on a real kube-apiserver, against
// the webhook's rules on a pod naming the same template. Team limited
// (namespace limited) may use model NVIDIA-A100-SXM4-40GB and resource
// nvidia.com/mig-1g.5gb. By hand, as docs/webhook.md "DRA claims" counts
// claims: a 1g.5gb MIG device of an A100 is admitted; a whole A100
// (resource nvidia.com/gpu) is refused by allowed-resources; a 2g.10gb
// MIG device of an H100 by allowed-models (NVIDIA-H100-80GB-HBM3, the
// productName with hyphens) and allowed-resources; the same through
// firstAvailable's first alternative. The policy's message is the
// webhook's first for the pod, less the claim's name in the pod (the API
// server names only the first validation that fails).
func TestClaimPolicyModelsResourcesOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	file := filepath.Join(t.TempDir(), "policy.yaml")
	must(t, os.WriteFile(file, []byte(`apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
teams:
- name: limited
  namespaces: [limited]
  allowedModels: [NVIDIA-A100-SXM4-40GB]
  allowedResources: [nvidia.com/mig-1g.5gb]
  maxGPUsPerPod: 8
`), 0o644))
	pol := readPolicy(t, file)
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: "probe"}, Spec: corev1.PodSpec{
		Containers:  []corev1.Container{{Name: "c", Image: "busybox"}},
		Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}}
	admin, _ := draCluster(t, file, []string{"limited"}, probe)
	ctx := t.Context()
	sel := func(e string) []resourcev1.DeviceSelector {
		return []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: e}}}
	}
	const a100, h100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'", "device.attributes['gpu.nvidia.com'].productName == \"NVIDIA H100 80GB HBM3\""
	const p1g, p2g = " && device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", " && device.attributes['gpu.nvidia.com'].profile == '2g.10gb'"
	exact := func(class, s string) resourcev1.DeviceRequest {
		return resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, Selectors: sel(s), AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1}}
	}
	first := resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
		{Name: "h100", DeviceClassName: "mig.nvidia.com", Selectors: sel(h100 + p2g), AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		{Name: "a100", DeviceClassName: "mig.nvidia.com", Selectors: sel(a100 + p1g), AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
	}}
	cases := []struct {
		name string
		req  resourcev1.DeviceRequest
		// rules the webhook refuses the pod by (and the policy the
		// template), in the webhook's order.
		rules []string
	}{
		{"mig-1g-a100", exact("mig.nvidia.com", a100+p1g), nil},
		{"whole-a100", exact("gpu.nvidia.com", a100), []string{policy.RuleResource}},
		{"mig-2g-h100", exact("mig.nvidia.com", h100+p2g), []string{policy.RuleModel, policy.RuleResource}},
		{"first-h100", first, []string{policy.RuleModel, policy.RuleResource}},
	}
	for _, c := range cases {
		tpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: c.name}}
		tpl.Spec.Spec.Devices.Requests = []resourcev1.DeviceRequest{c.req}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: c.name}, Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpus"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &tpl.Name}},
		}}
		// The webhook's rules, the template's spec as the webhook reads it.
		wp := webhook.FromPodSpec(nil, &pod.Spec)
		wp.Name, wp.Namespace = pod.Name, pod.Namespace
		wp.Claims[0].Spec = claimSpec(t, tpl.Spec.Spec)
		var rules, msgs []string
		for _, v := range pol.Validate(wp, policy.Namespace{Name: "limited", Labels: map[string]string{"kubernetes.io/metadata.name": "limited"}}) {
			rules = append(rules, v.Rule)
			msgs = append(msgs, strings.Replace(v.String(), "claim gpus request", "request", 1))
		}
		if strings.Join(rules, ",") != strings.Join(c.rules, ",") {
			t.Errorf("%s: the webhook refuses by %v, want %v: %v", c.name, rules, c.rules, msgs)
		}
		_, err := admin.ResourceV1().ResourceClaimTemplates("limited").Create(ctx, tpl, metav1.CreateOptions{})
		switch {
		case len(c.rules) == 0 && err != nil:
			t.Errorf("%s: %v, want admitted", c.name, err)
		case len(c.rules) == 0:
		case err == nil:
			t.Errorf("%s: admitted, want %v", c.name, msgs)
		default:
			// The API server names the first validation that fails, in
			// the webhook's order of rules.
			if want := claimPolicyPrefix("ResourceClaimTemplate", "limited", c.name) + msgs[0]; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nwant %q", c.name, err, want)
			}
		}
	}
}
