// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const webhookName = fullname + "-webhook"

const webhookValues = `webhook:
  enabled: true
  certManager:
    enabled: true
  policy:
    gpuTaint: {key: nvidia.com/gpu, effect: NoSchedule}
    teams:
      - name: research
        namespaces: [research]
        allowedResources: [nvidia.com/gpu, nvidia.com/mig-*]
        maxGPUsPerPod: 8
        schedulerName: gpuplane
      - name: inference
        namespaceSelector:
          matchLabels: {gpuplane.io/team: inference}
        allowedResources: [gpuplane.io/gpu-milli]
`

func renderWebhook(t *testing.T) rendered {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(webhookValues), 0o644); err != nil {
		t.Fatal(err)
	}
	return render(t, "-f", p)
}

// TestWebhookTemplate: webhook.enabled adds gpuplane-webhook's Deployment,
// Service, policy, RBAC, certificate and both webhook configurations.
func TestWebhookTemplate(t *testing.T) {
	if keys := render(t).keys(); slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "webhook") }) {
		t.Errorf("webhook objects without webhook.enabled: %v", keys)
	}
	r := renderWebhook(t)
	for _, k := range []string{"ConfigMap", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service", "Deployment", "Issuer", "Certificate", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if _, ok := r[k+"/"+webhookName]; !ok {
			t.Errorf("no %s %s; have %v", k, webhookName, r.keys())
		}
	}

	// The policy the chart writes is one gpuplane-webhook reads.
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", webhookName, &cm)
	pol, err := policy.Parse("policy.yaml", []byte(cm.Data["policy.yaml"]))
	if err != nil {
		t.Fatalf("%v\n%s", err, cm.Data["policy.yaml"])
	}
	if len(pol.Teams) != 2 || pol.Teams[0].SchedulerName != "gpuplane" || pol.Teams[1].NamespaceSelector.MatchLabels["gpuplane.io/team"] != "inference" {
		t.Errorf("policy teams %+v", pol.Teams)
	}

	var d appsv1.Deployment
	r.get(t, "Deployment", webhookName, &d)
	c := d.Spec.Template.Spec.Containers[0]
	if want := []string{"--policy=/etc/gpuplane/policy/policy.yaml", "--tls-cert-file=/etc/gpuplane/webhook/tls.crt", "--tls-key-file=/etc/gpuplane/webhook/tls.key", "--listen=:9443",
		"--metrics-addr=:9401", "--gangs=true", "--read-header-timeout=10s", "--read-timeout=10s", "--write-timeout=30s", "--idle-timeout=90s", "--max-connections=512", "--max-request-bytes=7340032",
	}; !slices.Equal(c.Command, []string{"gpuplane-webhook"}) || !slices.Equal(c.Args, want) {
		t.Errorf("command %v args %v, want gpuplane-webhook %v", c.Command, c.Args, want)
	}
	vols := d.Spec.Template.Spec.Volumes
	if len(vols) != 2 || vols[1].Secret == nil || vols[1].Secret.SecretName != webhookName+"-tls" || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != webhookName {
		t.Errorf("volumes %+v, want the policy ConfigMap and Secret %s-tls", vols, webhookName)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("liveness probe %+v", c.LivenessProbe)
	}

	if len(c.Ports) != 2 || c.Ports[1].Name != "metrics" || c.Ports[1].ContainerPort != 9401 {
		t.Errorf("ports %+v, want https and metrics 9401", c.Ports)
	}
	// The metrics Service, annotated for Prometheus as the node agent's;
	// no ServiceMonitor without serviceMonitor.enabled.
	var ms corev1.Service
	r.get(t, "Service", webhookName+"-metrics", &ms)
	if a := ms.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9401" || a["prometheus.io/path"] != "/metrics" ||
		len(ms.Spec.Ports) != 1 || ms.Spec.Ports[0].Name != "metrics" || ms.Spec.Ports[0].Port != 9401 || !matches(ms.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("metrics Service %+v", ms)
	}
	if _, ok := r["ServiceMonitor/"+webhookName]; ok {
		t.Error("a webhook ServiceMonitor without serviceMonitor.enabled")
	}

	// Both configurations: the Service, failurePolicy Ignore, kube-system
	// and the release namespace left alone, cert-manager's CA injection.
	notIn := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", namespace}}}}
	check := func(kind, name string, cc admissionregistrationv1.WebhookClientConfig, fp *admissionregistrationv1.FailurePolicyType, sel *metav1.LabelSelector, rules []admissionregistrationv1.RuleWithOperations, annotations map[string]string, path string, nrules int) {
		t.Helper()
		if name != path+".gpuplane.io" || cc.Service == nil || cc.Service.Name != webhookName || cc.Service.Namespace != namespace || cc.Service.Path == nil || *cc.Service.Path != "/"+path {
			t.Errorf("%s: name %s, clientConfig %+v", kind, name, cc)
		}
		if fp == nil || *fp != admissionregistrationv1.Ignore {
			t.Errorf("%s: failurePolicy %v, want Ignore", kind, fp)
		}
		if !equalJSON(t, sel, notIn) {
			t.Errorf("%s: namespaceSelector %+v, want %+v", kind, sel, notIn)
		}
		if len(rules) != nrules {
			t.Errorf("%s: rules %+v", kind, rules)
		}
		if annotations["cert-manager.io/inject-ca-from"] != namespace+"/"+webhookName {
			t.Errorf("%s: annotations %v", kind, annotations)
		}
	}
	var m admissionregistrationv1.MutatingWebhookConfiguration
	r.get(t, "MutatingWebhookConfiguration", webhookName, &m)
	w := m.Webhooks[0]
	check("MutatingWebhookConfiguration", w.Name, w.ClientConfig, w.FailurePolicy, w.NamespaceSelector, w.Rules, m.Annotations, "mutate", 1)
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	r.get(t, "ValidatingWebhookConfiguration", webhookName, &v)
	vw := v.Webhooks[0]
	check("ValidatingWebhookConfiguration", vw.Name, vw.ClientConfig, vw.FailurePolicy, vw.NamespaceSelector, vw.Rules, v.Annotations, "validate", 3)
}

// TestWebhookValues: the limits, the metrics port and failurePolicy are
// values; the ServiceMonitor scrapes the metrics Service as job
// gpuplane-webhook, the job of the alerts, and the node agent's
// ServiceMonitor does not select the webhook's Services.
func TestWebhookValues(t *testing.T) {
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(webhookValues), 0o644); err != nil {
		t.Fatal(err)
	}
	r := render(t, "-f", p, "--set", "serviceMonitor.enabled=true", "--set", "webhook.failurePolicy=Fail", "--set", "webhook.metricsPort=9500",
		"--set", "webhook.server.readTimeout=3s", "--set", "webhook.server.maxConnections=64", "--set", "webhook.server.maxRequestBytes=10485760")
	var d appsv1.Deployment
	r.get(t, "Deployment", webhookName, &d)
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--metrics-addr=:9500", "--read-timeout=3s", "--max-connections=64", "--max-request-bytes=10485760"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	r.get(t, "ValidatingWebhookConfiguration", webhookName, &v)
	if fp := v.Webhooks[0].FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", fp)
	}
	var sm struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port        string `json:"port"`
				Path        string `json:"path"`
				Relabelings []struct {
					TargetLabel string `json:"targetLabel"`
					Replacement string `json:"replacement"`
				} `json:"relabelings"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(r["ServiceMonitor/"+webhookName], &sm); err != nil {
		t.Fatal(err)
	}
	var ms corev1.Service
	r.get(t, "Service", webhookName+"-metrics", &ms)
	if e := sm.Spec.Endpoints; len(e) != 1 || e[0].Port != "metrics" || e[0].Path != "/metrics" || len(e[0].Relabelings) != 1 ||
		e[0].Relabelings[0].TargetLabel != "job" || e[0].Relabelings[0].Replacement != "gpuplane-webhook" {
		t.Errorf("webhook ServiceMonitor endpoints %+v, want port metrics relabelled to job gpuplane-webhook", e)
	}
	if !matches(sm.Spec.Selector.MatchLabels, ms.Labels) || ms.Spec.Ports[0].Port != 9500 {
		t.Errorf("webhook ServiceMonitor selector %v, metrics Service %+v", sm.Spec.Selector.MatchLabels, ms)
	}
	var agent struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(r["ServiceMonitor/"+fullname], &agent); err != nil {
		t.Fatal(err)
	}
	var svc corev1.Service
	r.get(t, "Service", webhookName, &svc)
	if matches(agent.Spec.Selector.MatchLabels, ms.Labels) || matches(agent.Spec.Selector.MatchLabels, svc.Labels) {
		t.Errorf("the node agent's ServiceMonitor %v selects the webhook's Services", agent.Spec.Selector.MatchLabels)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := yamlJSON(a)
	jb, err2 := yamlJSON(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return ja == jb
}

func TestWebhookTemplateErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "webhook.enabled=true"}, "webhook.policy.teams is required with webhook.enabled"},
		{[]string{"--set", "webhook.enabled=true", "--set", "webhook.policy.teams[0].name=a"}, "webhook.enabled needs webhook.certManager.enabled or webhook.tls.caBundle"},
	} {
		out, err := exec.Command(helmBin(t), templateArgs(c.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v %s, want %q", c.args, err, out, c.want)
		}
	}
}

// TestWebhookFlagsAccepted: every flag the chart passes is one
// gpuplane-webhook accepts.
func TestWebhookFlagsAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gpuplane-webhook binary")
	}
	var d appsv1.Deployment
	renderWebhook(t).get(t, "Deployment", webhookName, &d)
	bin := filepath.Join(t.TempDir(), "gpuplane-webhook")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpuplane/gpuplane/cmd/gpuplane-webhook").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("gpuplane-webhook --help: %v\n%s", err, out)
	}
	accepted := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[\w-]+)`).FindAllStringSubmatch(string(out), -1) {
		accepted[m[1]] = true
	}
	if !accepted["--policy"] {
		t.Fatalf("could not read the flags from gpuplane-webhook --help:\n%s", out)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, a := range args {
		if name, _, _ := strings.Cut(a, "="); !accepted[name] {
			t.Errorf("the chart passes %s, which gpuplane-webhook does not accept", name)
		}
	}
	// And their values: with them all, the first thing to fail is reading
	// the policy file, which is not there.
	out, err = exec.Command(bin, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "open /etc/gpuplane/policy/policy.yaml: no such file") {
		t.Errorf("gpuplane-webhook with the chart's arguments: %v\n%s", err, out)
	}
}

func yamlJSON(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return string(b), err
}
