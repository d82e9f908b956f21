// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// hostNetworkValues turns every role on, in the node's network, with the
// API server's address given and the ports moved.
const hostNetworkValues = webhookValues + `  tls: {caBundle: Y2E=, secretName: tls}
  certManager: {enabled: false}
cost:
  enabled: true
  prometheus: http://127.0.0.1:9090
  port: 30402
scheduler:
  enabled: true
  port: 30259
hostNetwork: true
kubernetesServiceHost: 127.0.0.1
kubernetesServicePort: 6443
nodeAgent:
  cdiDir: /var/run/cdi
`

// TestTemplateHostNetwork: hostNetwork puts the pods of the agent, the
// scheduler, the webhook and cost in the node's network with
// ClusterFirstWithHostNet DNS; kubernetesServiceHost/Port become
// KUBERNETES_SERVICE_HOST=127.0.0.1 and KUBERNETES_SERVICE_PORT=6443 in
// the three roles that use the API server (cost does not); scheduler.port
// 30259 is kube-scheduler's --secure-port and its probes' container port;
// nodeAgent.cdiDir on the device plugin is --cdi-dir, mounted from the
// host at the same path. The defaults have none of it, and the scheduler
// keeps kube-scheduler's 10259.
func TestTemplateHostNetwork(t *testing.T) {
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(hostNetworkValues), 0o644); err != nil {
		t.Fatal(err)
	}
	r := render(t, "-f", p)
	ds, c := agent(t, r)
	pods := map[string]corev1.PodSpec{"agent": ds.Spec.Template.Spec}
	for role, name := range map[string]string{"scheduler": schedulerName, "webhook": webhookName, "cost": costName} {
		var d appsv1.Deployment
		r.get(t, "Deployment", name, &d)
		pods[role] = d.Spec.Template.Spec
	}
	for role, s := range pods {
		if !s.HostNetwork || s.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
			t.Errorf("%s: hostNetwork %v, dnsPolicy %q", role, s.HostNetwork, s.DNSPolicy)
		}
		host, port := envValue(s.Containers[0], "KUBERNETES_SERVICE_HOST"), envValue(s.Containers[0], "KUBERNETES_SERVICE_PORT")
		if want := role != "cost"; (host == "127.0.0.1" && port == "6443") != want || (!want && host+port != "") {
			t.Errorf("%s: KUBERNETES_SERVICE_HOST=%q KUBERNETES_SERVICE_PORT=%q", role, host, port)
		}
	}
	sc := pods["scheduler"].Containers[0]
	if !slices.Contains(sc.Args, "--secure-port=30259") || sc.Ports[0].ContainerPort != 30259 {
		t.Errorf("scheduler: args %v, ports %+v", sc.Args, sc.Ports)
	}
	if !slices.Contains(c.Args, "--cdi-dir=/var/run/cdi") {
		t.Errorf("agent: args %v", c.Args)
	}
	if v := volume(t, ds, "/var/run/cdi"); v.HostPath == nil || v.HostPath.Path != "/var/run/cdi" {
		t.Errorf("agent: CDI volume %+v", v)
	}

	r = render(t, "--set", "scheduler.enabled=true")
	ds, c = agent(t, r)
	var d appsv1.Deployment
	r.get(t, "Deployment", schedulerName, &d)
	for role, s := range map[string]corev1.PodSpec{"agent": ds.Spec.Template.Spec, "scheduler": d.Spec.Template.Spec} {
		if s.HostNetwork || s.DNSPolicy != "" || envValue(s.Containers[0], "KUBERNETES_SERVICE_HOST") != "" {
			t.Errorf("default %s: hostNetwork %v, dnsPolicy %q, env %v", role, s.HostNetwork, s.DNSPolicy, s.Containers[0].Env)
		}
	}
	if sc := d.Spec.Template.Spec.Containers[0]; !slices.Contains(sc.Args, "--secure-port=10259") || sc.Ports[0].ContainerPort != 10259 {
		t.Errorf("default scheduler: args %v, ports %+v", sc.Args, sc.Ports)
	}
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--cdi-dir") }) {
		t.Errorf("default agent: args %v", c.Args)
	}
}
