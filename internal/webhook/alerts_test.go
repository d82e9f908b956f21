// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"os"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

const alertsFile = "../../deploy/prometheus/gpuplane-alerts.yaml"

// TestAlertRules: the gpuplane-webhook group of the alert rules uses only
// series the webhook serves, Prometheus's up of its job, and the API
// server's fail-open count; each rule has a severity and a summary.
func TestAlertRules(t *testing.T) {
	h := newHandler(t)
	for _, f := range []string{"pod-good.json", "pod-pytorch-shared.json"} {
		review(t, h, "/validate", f)
	}
	mfs, err := h.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{
		"up": true,
		// k8s.io/apiserver pkg/admission/metrics (kube-apiserver v1.37).
		"apiserver_admission_webhook_fail_open_count": true,
	}
	for _, mf := range mfs {
		served[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				served[mf.GetName()+s] = true
			}
		}
	}
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var alerts []string
	for _, g := range rf.Groups {
		if g.Name != "gpuplane-webhook" {
			continue
		}
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			e, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("%s: alert %s: %v", alertsFile, r.Alert, err)
				continue
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && !served[vs.Name] {
					t.Errorf("%s: alert %s uses %s, which the webhook does not serve", alertsFile, r.Alert, vs.Name)
				}
				return nil
			})
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: alert %s needs labels.severity, annotations.summary and description", alertsFile, r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: alert %s: for: %v", alertsFile, r.Alert, err)
				}
			}
		}
	}
	for _, want := range []string{"GPUWebhookDown", "GPUWebhookErrors", "GPUWebhookFailOpen"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("%s: group gpuplane-webhook has no alert %s", alertsFile, want)
		}
	}
}

// TestAlertRulesWithPromtool evaluates the webhook's alerts with
// Prometheus's rule engine (promtool test rules) on the series of
// testdata/alerts_test.yaml: GPUWebhookDown fires 2 minutes after the last
// replica stops answering and not where no webhook was ever scraped;
// GPUWebhookReplicaDown names the replica; GPUWebhookErrors fires for one
// webhook over 5 % errors, not the other's 1.7 %; GPUWebhookFailOpen fires
// on the API server's fail-opens of gpuplane's webhooks only, the first
// one since the API server started too (its series starts absent) and
// after an API server restart, not on an old count a Prometheus just
// started finds.
func TestAlertRulesWithPromtool(t *testing.T) {
	testenv.PromtoolTestRules(t, "testdata", "alerts_test.yaml")
}
