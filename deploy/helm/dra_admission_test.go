// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
	"github.com/gpuplane/gpuplane/internal/webhook"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const draTestdata = "../../internal/webhook/policy/testdata/dra/"

// draObjects reads the pods and ResourceClaimTemplates of a manifest of
// draTestdata.
func draObjects(t *testing.T, file string) (pods []*corev1.Pod, tpls []*resourcev1.ResourceClaimTemplate) {
	t.Helper()
	data, err := os.ReadFile(draTestdata + file)
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
		}
	}
	return pods, tpls
}

// TestAdmissionPolicyDRAOnCluster: on a real kube-apiserver with the
// chart's ValidatingAdmissionPolicy (failurePolicy Fail) rendered from
// testdata/dra/policy.yaml (team ml-train, namespaces ml-train and
// gpu-test1, 8 GPUs a pod) and no webhook, the pods of the DRA fixtures
// are created as an ordinary user, and the webhook's rules, reading the
// same ResourceClaimTemplates from the same API server (ReadClaims), are
// applied to them. NVIDIA's quickstart pod (gpu-test1.yaml, the shape of
// k8s-dra-driver-gpu demo/specs/quickstart/v1/gpu-test1.yaml) is admitted
// by both (issue 34: both refused it); the CPU pod tolerating the GPU taint
// is refused by both with one message; train-8 is admitted by both;
// train-16 (16 GPUs claimed) is refused by the webhook, and admitted by the
// policy, which cannot read claims (docs/webhook.md, "DRA claims").
func TestAdmissionPolicyDRAOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	file := draTestdata + "policy.yaml"
	vap, vapb := admissionPolicyObjects(t, file)
	data, err := os.ReadFile(file)
	must(t, err)
	pol, err := policy.Parse(file, data)
	must(t, err)

	admin, alice, pods := draCluster(t, vap, vapb)
	ctx := t.Context()
	const squatter = "gpu-taint-toleration: the pod asks for no GPU but tolerates the GPU nodes' taint nvidia.com/gpu:NoSchedule and would take room on a GPU node; remove that toleration or ask for a GPU"
	// want: what the webhook says, and what the admission policy says
	// ("" admitted), after "gpuplane GPU policy refuses pod NS/NAME: ".
	want := map[string][2]string{
		"pod1":     {"", ""},
		"squatter": {squatter, squatter},
		"train-8":  {"", ""},
		"train-16": {"max-gpus-per-pod: the pod asks for 16 GPUs, team ml-train allows at most 8 per pod; ask for fewer or split the work", ""},
	}

	// The API server loads policies in the background: wait until the
	// squatter is refused.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := alice.CoreV1().Pods("gpu-test1").Create(ctx, pods[1], metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	claims := webhook.ReadClaims(admin)
	for _, p := range pods {
		w, ok := want[p.Name]
		if !ok {
			t.Fatalf("pod %s: no expectation", p.Name)
		}
		wp := webhook.FromPodSpec(p.Labels, &p.Spec)
		wp.Name, wp.Namespace = p.Name, p.Namespace
		for i := range wp.Claims {
			wp.Claims[i].Spec, err = claims(ctx, p.Namespace, wp.Claims[i])
			must(t, err)
			if wp.Claims[i].Spec == nil {
				t.Errorf("%s/%s: claim %s not read", p.Namespace, p.Name, wp.Claims[i].Name)
			}
		}
		var msgs []string
		for _, v := range pol.Validate(wp, policy.Namespace{Name: p.Namespace, Labels: map[string]string{"kubernetes.io/metadata.name": p.Namespace}}) {
			msgs = append(msgs, v.String())
		}
		if got := strings.Join(msgs, "; "); got != w[0] {
			t.Errorf("%s/%s: the webhook says %q, want %q", p.Namespace, p.Name, got, w[0])
		}

		_, err := alice.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		switch {
		case w[1] == "" && err != nil:
			t.Errorf("%s/%s: %v, want admitted", p.Namespace, p.Name, err)
		case w[1] == "":
		case err == nil:
			t.Errorf("%s/%s: admitted, want %q", p.Namespace, p.Name, w[1])
		default:
			msg := "ValidatingAdmissionPolicy '" + webhookName + "' with binding '" + webhookName + "' denied request: gpuplane GPU policy refuses pod " + p.Namespace + "/" + p.Name + ": " + w[1]
			if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
				t.Errorf("%s/%s: %v\nwant %q", p.Namespace, p.Name, err, msg)
			}
		}
	}
}

// draCluster starts kube-apiserver with namespaces gpu-test1 and
// ml-train, the admission policy vap and its binding, and the
// ResourceClaimTemplates of the DRA fixtures; it returns the admin's
// client, that of alice (who may create pods) and the fixtures' pods.
func draCluster(t *testing.T, vap *admissionregistrationv1.ValidatingAdmissionPolicy, vapb *admissionregistrationv1.ValidatingAdmissionPolicyBinding) (admin, alice kubernetes.Interface, pods []*corev1.Pod) {
	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin = c.Client
	for _, ns := range []string{"gpu-test1", "ml-train"} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	alice = podCreator(t, c, "alice")
	must(t, create(ctx, admin, vap))
	must(t, create(ctx, admin, vapb))

	for _, f := range []string{"gpu-test1.yaml", "cpu-squatter.yaml", "ml-train.yaml"} {
		ps, tpls := draObjects(t, f)
		pods = append(pods, ps...)
		for _, tpl := range tpls {
			_, err := admin.ResourceV1().ResourceClaimTemplates(tpl.Namespace).Create(ctx, tpl, metav1.CreateOptions{})
			must(t, err)
		}
	}
	return admin, alice, pods
}
