// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestChartInstalls: `helm install` of the chart with every role on (node
// agent with node labelling and NFD's NodeFeature API, scheduler, webhook)
// into a real kube-apiserver v1.37.2: the API server accepts every object
// (schemas, RBAC escalation checks, webhook configurations), and helm
// reports the release deployed. Pods do not run (no kubelet): what is
// checked is what `helm install` on a real cluster checks.
func TestChartInstalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	helmBin(t)
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	dir := t.TempDir()
	values := strings.Replace(webhookValues, "  certManager:\n    enabled: true\n",
		"  tls:\n    caBundle: "+base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"))+"\n", 1)
	p := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	out := helm(t, "install", release, chart, "--kubeconfig", c.Kubeconfig, "--namespace", namespace, "--create-namespace",
		"-f", p, "--set", "scheduler.enabled=true,labelNode=true,nodeFeatureAPI=true,config.flags.migStrategy=mixed")
	if !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm install:\n%s", out)
	}
	ctx := t.Context()
	ds, err := c.Client.AppsV1().DaemonSets(namespace).Get(ctx, fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node agent DaemonSet: %v", err)
	}
	// migStrategy mixed: NVIDIA's chart's MIG monitor settings made it in.
	if env := ds.Spec.Template.Spec.Containers[0].Env; !slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == "NVIDIA_MIG_MONITOR_DEVICES" && e.Value == "all" }) {
		t.Errorf("DaemonSet env %v lacks NVIDIA_MIG_MONITOR_DEVICES=all", env)
	}
	for _, name := range []string{schedulerName, webhookName} {
		if _, err := c.Client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("Deployment %s: %v", name, err)
		}
	}
	// The GPU state policy and its binding, named in the notes.
	if _, err := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, gpuStatePolicy, metav1.GetOptions{}); err != nil {
		t.Errorf("ValidatingAdmissionPolicy: %v", err)
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, gpuStatePolicy, metav1.GetOptions{}); err != nil {
		t.Errorf("ValidatingAdmissionPolicyBinding: %v", err)
	}
	if !strings.Contains(out, "ValidatingAdmissionPolicy "+gpuStatePolicy+" (Deny)") {
		t.Errorf("helm install notes do not name the GPU state policy:\n%s", out)
	}
	// The node-name policy (scheduler.nodeNamePolicy), named in the notes.
	if _, err := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, nodeNamePolicy, metav1.GetOptions{}); err != nil {
		t.Errorf("ValidatingAdmissionPolicy %s: %v", nodeNamePolicy, err)
	}
	if !strings.Contains(out, "ValidatingAdmissionPolicy "+nodeNamePolicy+" (Deny)") {
		t.Errorf("helm install notes do not name the node-name policy:\n%s", out)
	}
	if strings.Contains(out, workloadAPIWarning) {
		t.Errorf("helm install notes say the Workload API is not served, where it is:\n%s", out)
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, webhookName, metav1.GetOptions{}); err != nil {
		t.Errorf("ValidatingWebhookConfiguration: %v", err)
	}
	if _, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, webhookName, metav1.GetOptions{}); err != nil {
		t.Errorf("MutatingWebhookConfiguration: %v", err)
	}
	// And it uninstalls cleanly. This control plane has no kubelet to run
	// the post-delete Job that prunes the agent's labels, so helm would
	// wait for it until its timeout: --no-hooks here; the real-node tests
	// (realnode_e2e_test.go) run the Job and check the labels are gone.
	helm(t, "uninstall", release, "--no-hooks", "--kubeconfig", c.Kubeconfig, "--namespace", namespace)
	if _, err := c.Client.AppsV1().DaemonSets(namespace).Get(ctx, fullname, metav1.GetOptions{}); err == nil {
		t.Error("DaemonSet left after helm uninstall")
	}
}
