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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpuplane/gpuplane/internal/quota"
)

const costName = fullname + "-cost"

const costValues = `cost:
  enabled: true
  prometheus: http://prometheus-operated.monitoring:9090
  teams:
    cohort: gpus
    teams:
      - name: research
        namespaces: [ml]
        quotas: [{model: H100-80GB, nominal: 8}]
`

func renderCost(t *testing.T) rendered {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(costValues), 0o644); err != nil {
		t.Fatal(err)
	}
	return render(t, "-f", p)
}

// TestCostTemplate: cost.enabled adds gpuplane-cost --serve's Deployment,
// Service, teams ConfigMap and a ServiceMonitor with honorLabels: true
// (docs/cost.md: the rates' own namespace label is kept).
func TestCostTemplate(t *testing.T) {
	if keys := render(t).keys(); slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "-cost") }) {
		t.Errorf("cost objects without cost.enabled: %v", keys)
	}
	r := renderCost(t)
	for _, k := range []string{"ConfigMap", "Service", "Deployment", "ServiceMonitor"} {
		if _, ok := r[k+"/"+costName]; !ok {
			t.Errorf("no %s %s; have %v", k, costName, r.keys())
		}
	}
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", costName, &cm)
	teams := filepath.Join(t.TempDir(), "teams.yaml")
	if err := os.WriteFile(teams, []byte(cm.Data["teams.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if tm, err := quota.LoadTeams(teams); err != nil || len(tm.Teams) != 1 || tm.Teams[0].Name != "research" {
		t.Errorf("teams file %v, %+v:\n%s", err, tm, cm.Data["teams.yaml"])
	}

	var d appsv1.Deployment
	r.get(t, "Deployment", costName, &d)
	c := d.Spec.Template.Spec.Containers[0]
	want := []string{"--serve=:9402", "--prometheus=http://prometheus-operated.monitoring:9090", "--serve-window=1h", "--serve-refresh=1m", "--step=30s", "--teams=/etc/gpuplane/cost/teams.yaml"}
	if !slices.Equal(c.Command, []string{"gpuplane-cost"}) || !slices.Equal(c.Args, want) {
		t.Errorf("command %v args %v, want gpuplane-cost %v", c.Command, c.Args, want)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9402 || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/gpuplane/cost" {
		t.Errorf("ports %+v, mounts %+v", c.Ports, c.VolumeMounts)
	}
	var svc corev1.Service
	r.get(t, "Service", costName, &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9402 || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" ||
		svc.Spec.Selector["app.kubernetes.io/name"] != d.Spec.Template.Labels["app.kubernetes.io/name"] || svc.Spec.Selector["app.kubernetes.io/name"] != "gpuplane-cost" {
		t.Errorf("service %+v, pod labels %v", svc.Spec, d.Spec.Template.Labels)
	}
	var sm struct {
		APIVersion, Kind string
		Metadata         map[string]any
		Spec             struct {
			Selector          struct{ MatchLabels map[string]string }
			NamespaceSelector struct{ MatchNames []string }
			Endpoints         []struct {
				Port, Path, Interval string
				HonorLabels          bool
			}
		}
	}
	r.get(t, "ServiceMonitor", costName, &sm)
	if e := sm.Spec.Endpoints; len(e) != 1 || e[0].Port != "metrics" || e[0].Path != "/metrics" || !e[0].HonorLabels || sm.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "gpuplane-cost" {
		t.Errorf("service monitor %+v", sm.Spec)
	}

	// Without teams: no ConfigMap, no --teams.
	r = render(t, "--set", "cost.enabled=true", "--set", "cost.prometheus=http://p:9090", "--set", "cost.serviceMonitor.enabled=false")
	r.get(t, "Deployment", costName, &d)
	if _, ok := r["ConfigMap/"+costName]; ok || slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--teams") }) {
		t.Errorf("teams without cost.teams: %v", d.Spec.Template.Spec.Containers[0].Args)
	}
	if _, ok := r["ServiceMonitor/"+costName]; ok {
		t.Error("a ServiceMonitor with cost.serviceMonitor.enabled=false")
	}

	out, err := exec.Command(helmBin(t), templateArgs("--set", "cost.enabled=true")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cost.prometheus (the Prometheus URL") {
		t.Errorf("without cost.prometheus: %v %s", err, out)
	}
}

// TestCostFlagsAccepted: every flag the chart passes is one gpuplane-cost
// accepts.
func TestCostFlagsAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gpuplane-cost binary")
	}
	var d appsv1.Deployment
	renderCost(t).get(t, "Deployment", costName, &d)
	bin := filepath.Join(t.TempDir(), "gpuplane-cost")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpuplane/gpuplane/cmd/gpuplane-cost").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("gpuplane-cost --help: %v\n%s", err, out)
	}
	accepted := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[\w-]+)`).FindAllStringSubmatch(string(out), -1) {
		accepted[m[1]] = true
	}
	if !accepted["--serve"] {
		t.Fatalf("could not read the flags from gpuplane-cost --help:\n%s", out)
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if name, _, _ := strings.Cut(a, "="); !accepted[name] {
			t.Errorf("the chart passes %s, which gpuplane-cost does not accept", name)
		}
	}
}
