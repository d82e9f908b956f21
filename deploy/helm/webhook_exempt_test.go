// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// devicePluginDaemonSet is NVIDIA's device plugin as its static manifest
// installs it (nvidia-device-plugin.yml of NVIDIA/k8s-device-plugin), here
// in namespace gpu-operator, where NVIDIA's GPU Operator runs its own.
const devicePluginDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: gpu-operator
spec:
  selector:
    matchLabels:
      name: nvidia-device-plugin-ds
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        name: nvidia-device-plugin-ds
    spec:
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      priorityClassName: "system-node-critical"
      containers:
      - image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        name: nvidia-device-plugin-ctr
        env:
        - name: FAIL_ON_INIT_ERROR
          value: "false"
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
        volumeMounts:
        - name: device-plugin
          mountPath: /var/lib/kubelet/device-plugins
      volumes:
      - name: device-plugin
        hostPath:
          path: /var/lib/kubelet/device-plugins
`

// TestExemptionsOneList: with webhook.policy.excludeNamespaces
// [gpu-operator], every object the chart renders that exempts namespaces
// (both webhook configurations' namespaceSelector, both admission
// policies' bindings) leaves out the same list, [kube-system, gpu-system
// (the release namespace), gpu-operator], and it is the policy file's
// ExcludedNamespaces: the file the chart gives the webhook lists the
// release namespace, so gpuplane policy vap and policy check on that file
// exempt what the cluster exempts. Then the chart's own objects as helm
// template renders them (its node agent DaemonSet tolerates the GPU
// taint), with NVIDIA's device-plugin DaemonSet, pass gpuplane policy
// check with that file; a Deployment in research tolerating the GPU taint
// without a GPU does not.
func TestExemptionsOneList(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(webhookValues+"    excludeNamespaces: [gpu-operator]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-f", values}, mapAPI...)
	r := render(t, args...)
	want := []string{"kube-system", namespace, "gpu-operator"}

	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", webhookName, &cm)
	pol, err := policy.Parse("policy.yaml", []byte(cm.Data["policy.yaml"]))
	if err != nil {
		t.Fatalf("%v\n%s", err, cm.Data["policy.yaml"])
	}
	if got := pol.ExcludedNamespaces(); !slices.Equal(got, want) {
		t.Errorf("the ConfigMap's policy excludes %v, want %v:\n%s", got, want, cm.Data["policy.yaml"])
	}

	var m admissionregistrationv1.MutatingWebhookConfiguration
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	var vb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	var mb admissionregistrationv1.MutatingAdmissionPolicyBinding
	r.get(t, "MutatingWebhookConfiguration", webhookName, &m)
	r.get(t, "ValidatingWebhookConfiguration", webhookName, &v)
	r.get(t, "ValidatingAdmissionPolicyBinding", webhookName, &vb)
	r.get(t, "MutatingAdmissionPolicyBinding", webhookName, &mb)
	for name, sel := range map[string]any{
		"MutatingWebhookConfiguration":     m.Webhooks[0].NamespaceSelector,
		"ValidatingWebhookConfiguration":   v.Webhooks[0].NamespaceSelector,
		"ValidatingAdmissionPolicyBinding": vb.Spec.MatchResources.NamespaceSelector,
		"MutatingAdmissionPolicyBinding":   mb.Spec.MatchResources.NamespaceSelector,
	} {
		e := sel.(interface{ String() string }).String()
		if !strings.Contains(e, "Key:kubernetes.io/metadata.name,Operator:NotIn,Values:[kube-system gpu-system gpu-operator],") {
			t.Errorf("%s: namespaceSelector %s, want NotIn %v", name, e, want)
		}
	}
	// gpuplane policy vap on the ConfigMap's file writes the same bindings.
	out, err := pol.AdmissionPolicies(policy.AdmissionPolicyOptions{Name: webhookName, Mutating: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "values: [kube-system, gpu-system, gpu-operator]"); n != 3 {
		t.Errorf("policy vap: %d bindings exclude %v, want 3 (pods, mutation, claims):\n%s", n, want, out)
	}

	// The audit: helm template's output as it is (the node agent's
	// DaemonSet, the webhook's Deployment, ...) and NVIDIA's device
	// plugin, with the chart's policy file.
	dir := t.TempDir()
	manifests := helm(t, templateArgs(args...)...) + "---\n" + devicePluginDaemonSet
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if !strings.Contains(manifests, "kind: DaemonSet\nmetadata:\n  name: "+fullname+"\n") || !strings.Contains(manifests, "- effect: NoSchedule\n          key: nvidia.com/gpu\n          operator: Exists") {
		t.Fatal("the chart renders no node agent DaemonSet tolerating the GPU taint")
	}
	findings, n, err := pol.Check([]string{write("chart.yaml", manifests)}, nil)
	if err != nil || len(findings) != 0 || n != 3 {
		t.Errorf("the chart and the device plugin: %d pod templates, %v, %v; want 3 (the node agent, the webhook, the device plugin), none refused", n, findings, err)
	}
	// Each exemption is needed for one of them: without the DaemonSet
	// rule the node agent and the device plugin would be refused; that
	// one is checked in internal/webhook/policy (TestCheckExemptions).
	squatter := write("etl.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: etl, namespace: research}
spec:
  selector: {matchLabels: {app: etl}}
  template:
    metadata: {labels: {app: etl}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: spark, image: apache/spark:3.5.5}]
`)
	findings, _, err = pol.Check([]string{squatter}, nil)
	if err != nil || len(findings) != 1 || findings[0].Violation.Rule != policy.RuleTaintSquatter {
		t.Errorf("the Deployment: %v, %v; want one gpu-taint-toleration", findings, err)
	}
}
