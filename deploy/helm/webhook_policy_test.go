// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/webhook"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const policyFile = "../../internal/webhook/policy/testdata/policy.yaml"

// TestAdmissionPolicyLogicCopy checks the chart's CEL is the generator's:
// after a change in internal/webhook/policy, run it with UPDATE=1.
func TestAdmissionPolicyLogicCopy(t *testing.T) {
	want, err := policy.AdmissionPolicyLogic()
	if err != nil {
		t.Fatal(err)
	}
	const file = "gpuplane/files/gpu-policy-cel.yaml"
	if os.Getenv("UPDATE") != "" {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/helm/gpuplane/files/gpu-policy-cel.yaml is not policy.AdmissionPolicyLogic(); regenerate it: UPDATE=1 go test ./deploy/helm/ -run TestAdmissionPolicyLogicCopy")
	}
}

// policyValues writes chart values with webhook.enabled whose
// webhook.policy is the policy file less apiVersion and kind.
func policyValues(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pol map[string]any
	if err := yaml.Unmarshal(data, &pol); err != nil {
		t.Fatal(err)
	}
	delete(pol, "apiVersion")
	delete(pol, "kind")
	v, err := yaml.Marshal(map[string]any{"webhook": map[string]any{"enabled": true, "certManager": map[string]any{"enabled": true}, "policy": pol}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, v, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// admissionPolicyObjects renders the chart's admission policy and binding
// from the policy file.
func admissionPolicyObjects(t *testing.T, file string, args ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	r := render(t, append([]string{"-f", policyValues(t, file)}, args...)...)
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", webhookName, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", webhookName, &vapb)
	return &vap, &vapb
}

// mapAPI makes helm template render the MutatingAdmissionPolicy, as for a
// cluster that serves it.
var mapAPI = []string{"--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy"}

// mutatingObjects renders the chart's MutatingAdmissionPolicy and binding.
func mutatingObjects(t *testing.T, file string) (*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	t.Helper()
	r := render(t, append([]string{"-f", policyValues(t, file)}, mapAPI...)...)
	var m admissionregistrationv1.MutatingAdmissionPolicy
	var mb admissionregistrationv1.MutatingAdmissionPolicyBinding
	r.get(t, "MutatingAdmissionPolicy", webhookName, &m)
	r.get(t, "MutatingAdmissionPolicyBinding", webhookName, &mb)
	return &m, &mb
}

// generatedDocs returns `gpuplane policy vap --mutating`'s documents for
// the policy file, named and scoped as the chart's.
func generatedDocs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pol.AdmissionPolicies(policy.AdmissionPolicyOptions{Name: webhookName, ExcludeNamespaces: []string{namespace}, Mutating: true})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 6 {
		t.Fatalf("%d documents, want 6:\n%s", len(docs), out)
	}
	return docs
}

// generated returns `gpuplane policy vap`'s objects for the policy file,
// named as the chart names them.
func generated(t *testing.T, file string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pol.AdmissionPolicies(policy.AdmissionPolicyOptions{Name: webhookName, ExcludeNamespaces: []string{namespace}})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents, want 4:\n%s", len(docs), out)
	}
	if mdocs := generatedDocs(t, file); mdocs[0] != docs[0] || mdocs[1] != docs[1] || mdocs[4] != docs[2] || mdocs[5] != docs[3] {
		t.Errorf("with Mutating, the validating policies differ")
	}
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &vap); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &vapb); err != nil {
		t.Fatal(err)
	}
	return &vap, &vapb
}

// TestAdmissionPolicyTemplate: the chart's policy from webhook.policy is
// the one `gpuplane policy vap` generates from the same policy file, for
// the policy of internal/webhook/policy's tests and for one with every
// field; it comes with the webhook and can be turned off.
func TestAdmissionPolicyTemplate(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full.yaml")
	if err := os.WriteFile(full, []byte(`apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
gpuTaint: {key: example.com/gpu, value: "yes", effect: NoExecute}
teamLabel: example.com/team
trainingLabel: example.com/training
teams:
- name: a
  namespaces: [a1, a2]
  namespaceSelector: {matchLabels: {tier: a, zone: z}}
  allowedModels: [M1, M2]
  allowTrainingOnShared: true
- name: b
  namespaceSelector: {matchLabels: {tier: b}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{policyFile, full} {
		vap, vapb := admissionPolicyObjects(t, file)
		gvap, gvapb := generated(t, file)
		if !reflect.DeepEqual(vap.Spec, gvap.Spec) {
			a, _ := yaml.Marshal(vap.Spec)
			b, _ := yaml.Marshal(gvap.Spec)
			t.Errorf("%s: the chart's policy differs from gpuplane policy vap's:\nchart:\n%s\ngenerated:\n%s", file, a, b)
		}
		if !reflect.DeepEqual(vapb.Spec, gvapb.Spec) {
			t.Errorf("%s: binding %+v, generated %+v", file, vapb.Spec, gvapb.Spec)
		}
		// The claim policy (ResourceClaimTemplates, ResourceClaims).
		r := render(t, "-f", policyValues(t, file))
		var cvap, gcvap admissionregistrationv1.ValidatingAdmissionPolicy
		var cvapb, gcvapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
		r.get(t, "ValidatingAdmissionPolicy", webhookName+"-claims", &cvap)
		r.get(t, "ValidatingAdmissionPolicyBinding", webhookName+"-claims", &cvapb)
		docs := generatedDocs(t, file)
		must(t, yaml.UnmarshalStrict([]byte(docs[4]), &gcvap))
		must(t, yaml.UnmarshalStrict([]byte(docs[5]), &gcvapb))
		if !reflect.DeepEqual(cvap.Spec, gcvap.Spec) || !reflect.DeepEqual(cvapb.Spec, gcvapb.Spec) {
			a, _ := yaml.Marshal(cvap.Spec)
			b, _ := yaml.Marshal(gcvap.Spec)
			t.Errorf("%s: the chart's claim policy differs from gpuplane policy vap's:\nchart:\n%s\ngenerated:\n%s", file, a, b)
		}
		m, mb := mutatingObjects(t, file)
		var gm admissionregistrationv1.MutatingAdmissionPolicy
		var gmb admissionregistrationv1.MutatingAdmissionPolicyBinding
		must(t, yaml.UnmarshalStrict([]byte(docs[2]), &gm))
		must(t, yaml.UnmarshalStrict([]byte(docs[3]), &gmb))
		if !reflect.DeepEqual(m.Spec, gm.Spec) {
			a, _ := yaml.Marshal(m.Spec)
			b, _ := yaml.Marshal(gm.Spec)
			t.Errorf("%s: the chart's mutating policy differs from gpuplane policy vap --mutating's:\nchart:\n%s\ngenerated:\n%s", file, a, b)
		}
		if !reflect.DeepEqual(mb.Spec, gmb.Spec) {
			t.Errorf("%s: mutating binding %+v, generated %+v", file, mb.Spec, gmb.Spec)
		}
	}
	// The mutating policy only where the cluster serves it, and not when
	// turned off.
	for _, args := range [][]string{nil, append(slices.Clone(mapAPI), "--set", "webhook.admissionPolicy.mutating=false")} {
		if keys := render(t, append([]string{"-f", policyValues(t, policyFile)}, args...)...).keys(); strings.Contains(strings.Join(keys, " "), "MutatingAdmissionPolicy") {
			t.Errorf("%v: %v", args, keys)
		}
	}
	if keys := render(t, "-f", policyValues(t, policyFile), "--set", "webhook.admissionPolicy.enabled=false").keys(); strings.Contains(strings.Join(keys, " "), "ValidatingAdmissionPolicy") {
		t.Errorf("admission policy with webhook.admissionPolicy.enabled=false: %v", keys)
	}
	_, vapb := admissionPolicyObjects(t, policyFile, "--set", "webhook.admissionPolicy.validationActions={Warn,Audit}")
	if got := vapb.Spec.ValidationActions; !reflect.DeepEqual(got, []admissionregistrationv1.ValidationAction{"Warn", "Audit"}) {
		t.Errorf("validationActions %v", got)
	}
}

// TestAdmissionPolicyOnCluster applies the chart's admission policy,
// rendered from internal/webhook/policy/testdata/policy.yaml, to a real
// kube-apiserver with no webhook at all, and creates pods as an ordinary
// user: each CEL rule refuses its pod with the webhook's message, and good
// pods are admitted. The messages are worked out by hand from the policy
// file, and are also the webhook's (Policy.Validate) for the same pods.
func TestAdmissionPolicyOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	vap, vapb := admissionPolicyObjects(t, policyFile)
	data, err := os.ReadFile(policyFile)
	must(t, err)
	pol, err := policy.Parse(policyFile, data)
	must(t, err)

	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	nsLabels := map[string]map[string]string{"research": nil, "serve": {"gpuplane.io/team": "inference"}, "mixed": nil, "other": nil, namespace: nil}
	for ns, l := range nsLabels {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: l}}, metav1.CreateOptions{})
		must(t, err)
	}
	alice := podCreator(t, c, "alice")
	must(t, create(ctx, admin, vap))
	must(t, create(ctx, admin, vapb))

	h100 := map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
	type opt func(*corev1.Pod)
	gpu := func(r string, n int64) opt {
		return func(p *corev1.Pod) {
			c := &p.Spec.Containers[len(p.Spec.Containers)-1]
			if c.Resources.Limits == nil {
				c.Resources.Limits = corev1.ResourceList{}
			}
			c.Resources.Limits[corev1.ResourceName(r)] = *k8sresource.NewQuantity(n, k8sresource.DecimalSI)
		}
	}
	container := func(name string) opt {
		return func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Image: "busybox"})
		}
	}
	// initc moves the last container to the init containers, as init<i>.
	initc := func(sidecar bool) opt {
		return func(p *corev1.Pod) {
			c := p.Spec.Containers[len(p.Spec.Containers)-1]
			c.Name = fmt.Sprintf("init%d", len(p.Spec.InitContainers))
			if sidecar {
				always := corev1.ContainerRestartPolicyAlways
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
			p.Spec.Containers = p.Spec.Containers[:len(p.Spec.Containers)-1]
		}
	}
	selector := func(m map[string]string) opt { return func(p *corev1.Pod) { p.Spec.NodeSelector = m } }
	label := func(k, v string) opt {
		return func(p *corev1.Pod) {
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels[k] = v
		}
	}
	tolerate := func(key, effect string) opt {
		return func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(effect)})
		}
	}
	owner := func(kind string) opt {
		return func(p *corev1.Pod) {
			p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "kubeflow.org/v1", Kind: kind, Name: "job", UID: "0b6e3c1e-0000-4000-8000-000000000001"})
		}
	}
	daemonSet := func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "nvidia-device-plugin-daemonset", UID: "0b6e3c1e-0000-4000-8000-000000000002"})
	}
	affinity := func(models ...string) opt {
		return func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
					{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: models},
				}}}}}}
		}
	}
	mk := func(ns, name string, opts ...opt) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		for _, o := range append([]opt{container("main")}, opts...) {
			o(p)
		}
		return p
	}
	const research = "nvidia.com/gpu, nvidia.com/mig-*, nvidia.com/gpu.shared"
	const noShared = "training pods may not use time-sliced or fractional GPUs (%s): no memory or fault isolation; ask for nvidia.com/gpu or a MIG profile"
	cases := []struct {
		pod *corev1.Pod
		// want is the refusal after "gpuplane GPU policy refuses pod
		// NS/NAME: ", or "" for an admitted pod.
		want string
	}{
		{mk("research", "eight", gpu("nvidia.com/gpu", 8), selector(h100)), ""},
		{mk("research", "mig-by-affinity", gpu("nvidia.com/mig-1g.10gb", 2), affinity("NVIDIA-H100-80GB-HBM3")), ""},
		{mk("research", "own-label", gpu("nvidia.com/gpu", 1), selector(h100), label("gpuplane.io/team", "research")), ""},
		{mk("research", "training-whole", gpu("nvidia.com/gpu", 4), selector(h100), owner("PyTorchJob")), ""},
		{mk("serve", "half", gpu("gpuplane.io/gpu-milli", 500)), ""},
		{mk("serve", "init-then-main", gpu("nvidia.com/gpu.shared", 1), initc(false), container("main"), gpu("nvidia.com/gpu.shared", 1)), ""},
		{mk("serve", "ray-head", gpu("gpuplane.io/gpu-milli", 300), label("ray.io/node-type", "head")), ""},
		{mk("other", "cpu"), ""},
		{mk("other", "tolerates-noexecute", tolerate("nvidia.com/gpu", "NoExecute")), ""},
		// A DaemonSet's pod (a device plugin, an exporter) may tolerate
		// the GPU taint without asking for a GPU.
		{mk("other", "device-plugin", tolerate("nvidia.com/gpu", "NoSchedule"), daemonSet), ""},
		{mk(namespace, "excluded", gpu("nvidia.com/gpu", 64), tolerate("", "")), ""},

		{mk("other", "no-team", gpu("nvidia.com/gpu", 1)),
			`team: namespace "other" belongs to no team of the GPU policy; run GPU pods in a team's namespace or add the namespace to a team`},
		{mk("research", "nine", gpu("nvidia.com/gpu", 9), selector(h100)),
			"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8 per pod; ask for fewer or split the work"},
		// A sidecar runs beside the containers: 1 + 8; the init container
		// after it 1 + 2.
		{mk("research", "sidecar", gpu("nvidia.com/gpu", 1), initc(true), container("main"), gpu("nvidia.com/gpu", 2), initc(false), container("main"), gpu("nvidia.com/gpu", 8), selector(h100)),
			"max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8 per pod; ask for fewer or split the work"},
		{mk("serve", "milli-1500", gpu("gpuplane.io/gpu-milli", 1500)),
			"max-gpus-per-pod: the pod asks for 2 GPUs, team inference allows at most 1 per pod; ask for fewer or split the work"},
		{mk("research", "milli", gpu("gpuplane.io/gpu-milli", 500), selector(h100)),
			"allowed-resources: container main: resource gpuplane.io/gpu-milli is not allowed for team research; use one of " + research},
		{mk("serve", "whole", gpu("nvidia.com/gpu", 1)),
			"allowed-resources: container main: resource nvidia.com/gpu is not allowed for team inference; use one of gpuplane.io/gpu-milli, nvidia.com/gpu.shared"},
		{mk("research", "no-model", gpu("nvidia.com/gpu", 1)),
			"allowed-models: team research may use only GPU models NVIDIA-H100-80GB-HBM3; add nodeSelector nvidia.com/gpu.product: <one of them>"},
		{mk("research", "a100", gpu("nvidia.com/gpu", 1), selector(map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})),
			`allowed-models: GPU model "NVIDIA-A100-SXM4-80GB" is not allowed for team research; select one of NVIDIA-H100-80GB-HBM3 with nvidia.com/gpu.product`},
		{mk("research", "pytorch-shared", gpu("nvidia.com/gpu.shared", 1), selector(h100), owner("PyTorchJob")),
			"training-on-shared: container main: " + strings.ReplaceAll(noShared, "%s", "nvidia.com/gpu.shared")},
		{mk("serve", "ray-worker", gpu("gpuplane.io/gpu-milli", 300), label("ray.io/node-type", "worker")),
			"training-on-shared: container main: " + strings.ReplaceAll(noShared, "%s", "gpuplane.io/gpu-milli")},
		{mk("serve", "labelled-training", gpu("nvidia.com/gpu.shared", 1), label("gpuplane.io/training", "true")),
			"training-on-shared: container main: " + strings.ReplaceAll(noShared, "%s", "nvidia.com/gpu.shared")},
		{mk("other", "squatter", tolerate("nvidia.com/gpu", "")),
			"gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"},
		{mk("research", "tolerate-all", tolerate("", "")),
			"gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"},
		// 41 containers (main and 40 with a MIG device each): far more
		// than real pods, and within CEL's per-call cost limit.
		{mk("research", "forty", append(slices.Repeat([]opt{container("c"), gpu("nvidia.com/mig-1g.10gb", 1), gpu("cpu", 1), gpu("memory", 1<<30)}, 40), selector(h100), func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].Name = fmt.Sprintf("c%d", i)
			}
		})...),
			"max-gpus-per-pod: the pod asks for 40 GPUs, team research allows at most 8 per pod; ask for fewer or split the work"},
		// AMD's and Intel's resources are GPUs (team mixed: at most 4,
		// nvidia.com/gpu and amd.com/gpu, models MI300X and H100): 4 + 2
		// is 6; AMD's labeller's AMD_Instinct_MI300X is the MI300X.
		{mk("mixed", "amd-four", gpu("amd.com/gpu", 4), selector(map[string]string{"amd.com/gpu.product-name": "AMD_Instinct_MI300X"})), ""},
		{mk("mixed", "amd-and-nvidia", gpu("amd.com/gpu", 4), container("cuda"), gpu("nvidia.com/gpu", 2), selector(map[string]string{"amd.com/gpu.product-name": "AMD_Instinct_MI300X"})),
			"max-gpus-per-pod: the pod asks for 6 GPUs, team mixed allows at most 4 per pod; ask for fewer or split the work"},
		{mk("mixed", "gaudi", gpu("habana.ai/gaudi", 1), selector(map[string]string{"gpuplane.io/gpu.model": "MI300X"})),
			"allowed-resources: container main: resource habana.ai/gaudi is not allowed for team mixed; use one of nvidia.com/gpu, amd.com/gpu"},
		{mk("mixed", "mi325x", gpu("amd.com/gpu", 1), selector(map[string]string{"amd.com/gpu.product-name": "AMD_Instinct_MI325X"})),
			`allowed-models: GPU model "AMD_Instinct_MI325X" is not allowed for team mixed; select one of MI300X, NVIDIA-H100-80GB-HBM3 with nvidia.com/gpu.product`},
		// Only the admission policy: the webhook sets the label instead.
		{mk("research", "other-team", gpu("nvidia.com/gpu", 1), selector(h100), label("gpuplane.io/team", "inference")),
			"team-label: the pod is labelled gpuplane.io/team=inference, but namespace research belongs to team research; set it to research or leave it out (gpuplane-webhook sets it)"},
	}

	// The API server loads policies in the background: wait until the
	// first refused pod is refused.
	var first *corev1.Pod
	for _, c := range cases {
		if c.want != "" {
			first = c.pod
			break
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := alice.CoreV1().Pods(first.Namespace).Create(ctx, first, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The API server type-checked every expression.
	got, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, vap.Name, metav1.GetOptions{})
	must(t, err)
	if tc := got.Status.TypeChecking; tc != nil && len(tc.ExpressionWarnings) > 0 {
		t.Errorf("type checking: %+v", tc.ExpressionWarnings)
	}

	for _, c := range cases {
		p := c.pod
		// The webhook refuses the same pods with the same messages, but
		// for team-label, which it mutates away.
		wp := webhook.FromPodSpec(p.Labels, &p.Spec)
		for _, o := range p.OwnerReferences {
			wp.Owners = append(wp.Owners, o.Kind)
		}
		ns := policy.Namespace{Name: p.Namespace, Labels: map[string]string{"kubernetes.io/metadata.name": p.Namespace}}
		for k, v := range nsLabels[p.Namespace] {
			ns.Labels[k] = v
		}
		var msgs []string
		if p.Namespace != namespace {
			for _, v := range pol.Validate(wp, ns) {
				msgs = append(msgs, v.String())
			}
		}
		if got := strings.Join(msgs, "; "); got != c.want && !strings.HasPrefix(c.want, policy.RuleTeamLabel+":") {
			t.Errorf("%s/%s: the webhook says %q, want %q", p.Namespace, p.Name, got, c.want)
		}

		_, err := alice.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s/%s: %v, want admitted", p.Namespace, p.Name, err)
		case c.want == "":
		case err == nil:
			t.Errorf("%s/%s: admitted, want %q", p.Namespace, p.Name, c.want)
		default:
			want := "ValidatingAdmissionPolicy '" + webhookName + "' with binding '" + webhookName + "' denied request: gpuplane GPU policy refuses pod " + p.Namespace + "/" + p.Name + ": " + c.want
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s/%s: %v\nwant %q", p.Namespace, p.Name, err, want)
			}
		}
	}

	// The mutating policy too, on the same cluster: the webhook's
	// mutation, with no webhook. The pod labelled with another team is
	// now admitted, relabelled before the validating policy sees it.
	mp, mpb := mutatingObjects(t, policyFile)
	_, err = admin.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, mp, metav1.CreateOptions{})
	must(t, err)
	_, err = admin.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, mpb, metav1.CreateOptions{})
	must(t, err)
	tol := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	mcases := []struct {
		pod         *corev1.Pod
		tolerations []corev1.Toleration
		scheduler   string
		labels      map[string]string
	}{
		{mk("research", "m-bare", gpu("nvidia.com/gpu", 1), selector(h100)), []corev1.Toleration{tol}, "gpuplane-scheduler", map[string]string{"gpuplane.io/team": "research"}},
		{mk("research", "m-set", gpu("nvidia.com/gpu", 1), selector(h100), tolerate("x", ""), label("app", "a"), label("gpuplane.io/team", "inference"), func(p *corev1.Pod) { p.Spec.SchedulerName = "default-scheduler" }),
			[]corev1.Toleration{{Key: "x", Operator: corev1.TolerationOpExists}, tol}, "gpuplane-scheduler", map[string]string{"app": "a", "gpuplane.io/team": "research"}},
		{mk("research", "m-tolerates", gpu("nvidia.com/gpu", 1), selector(h100), tolerate("nvidia.com/gpu", "")),
			[]corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}, "gpuplane-scheduler", map[string]string{"gpuplane.io/team": "research"}},
		{mk("serve", "m-milli", gpu("gpuplane.io/gpu-milli", 500), label("app", "b")), []corev1.Toleration{tol}, "default-scheduler", map[string]string{"app": "b", "gpuplane.io/team": "inference"}},
		{mk("other", "m-cpu"), nil, "default-scheduler", nil},
		{mk(namespace, "m-excluded", gpu("nvidia.com/gpu", 1)), nil, "default-scheduler", nil},
	}
	deadline = time.Now().Add(time.Minute)
	for {
		got, err := alice.CoreV1().Pods("research").Create(ctx, mcases[0].pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		must(t, err)
		if got.Labels["gpuplane.io/team"] == "research" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mutating policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The validating cases again, as dry runs: the same answers with the
	// mutation, but team-label, which it fixes.
	for _, c := range cases {
		p := c.pod.DeepCopy()
		p.Name += "-again" // the admitted ones exist
		_, err := alice.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if want := c.want != "" && !strings.HasPrefix(c.want, policy.RuleTeamLabel+":"); (err != nil) != want {
			t.Errorf("with mutation: %s/%s: %v, want refused %v", p.Namespace, p.Name, err, want)
		}
	}
	for _, c := range mcases {
		got, err := alice.CoreV1().Pods(c.pod.Namespace).Create(ctx, c.pod, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("%s/%s: %v", c.pod.Namespace, c.pod.Name, err)
			continue
		}
		// DefaultTolerationSeconds adds the node.kubernetes.io ones.
		var tols []corev1.Toleration
		for _, tl := range got.Spec.Tolerations {
			if !strings.HasPrefix(tl.Key, "node.kubernetes.io/") {
				tols = append(tols, tl)
			}
		}
		if !reflect.DeepEqual(tols, c.tolerations) || got.Spec.SchedulerName != c.scheduler || !reflect.DeepEqual(got.Labels, c.labels) {
			t.Errorf("%s/%s: tolerations %+v, schedulerName %s, labels %v\nwant %+v, %s, %v", got.Namespace, got.Name, tols, got.Spec.SchedulerName, got.Labels, c.tolerations, c.scheduler, c.labels)
		}
		// The webhook finds nothing left to do.
		ns := policy.Namespace{Name: got.Namespace, Labels: map[string]string{"kubernetes.io/metadata.name": got.Namespace}}
		for k, v := range nsLabels[got.Namespace] {
			ns.Labels[k] = v
		}
		if ops := pol.Mutate(webhook.FromPodSpec(got.Labels, &got.Spec), ns); len(ops) > 0 && got.Namespace != namespace {
			t.Errorf("%s/%s: the webhook would still patch %+v", got.Namespace, got.Name, ops)
		}
	}
}
