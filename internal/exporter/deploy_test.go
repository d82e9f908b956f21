package exporter

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/device"
)

const (
	alertsFile    = "../../deploy/prometheus/gpuplane-alerts.yaml"
	dashboardFile = "../../deploy/grafana/gpuplane-gpus.json"
)

// servedNames returns every metric name a scrape of an exporter serving all
// fields of a GPU, a MIG device and pods can carry, series names of
// histograms included.
func servedNames(t *testing.T) map[string]bool {
	t.Helper()
	full := device.Sample{UUID: "GPU-0000"}
	for _, p := range []**float64{
		&full.GPUUtil, &full.MemCopyUtil, &full.FBUsedMiB, &full.FBFreeMiB, &full.GPUTemp, &full.MemoryTemp,
		&full.PowerW, &full.TotalEnergyMJ, &full.SMClockMHz, &full.MemClockMHz, &full.LastXID, &full.PCIeReplay,
		&full.ECCSBEVolatile, &full.ECCDBEVolatile, &full.ECCSBEAggregate, &full.ECCDBEAggregate,
		&full.RowRemapCorrectable, &full.RowRemapUncorrectable, &full.RowRemapPending, &full.RowRemapFailure,
		&full.ProfGrEngineActive, &full.ProfSMActive, &full.ProfTensorActive, &full.ProfDRAMActive,
	} {
		*p = ptr(1)
	}
	e, err := New(Options{Backend: newFakeBackend(testNode, nil), Pods: &fakePods{mapping: testMapping}})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(testNode)
	e.state.setMapping(testMapping)
	e.state.addSamples([]device.Sample{full}, time.Now())
	e.current.Store(e.state.snapshot())
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[mf.GetName()+s] = true
			}
		}
	}
	return names
}

// metricNames parses a PromQL expression and returns the metric names its
// selectors use.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			out = append(out, name)
		}
		return nil
	})
	return out, nil
}

// grafanaVars replaces Grafana's interval variables, which PromQL does not
// know, by a duration; label variables sit inside strings and parse as they
// are.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[A-Za-z_][A-Za-z0-9_]*\)$`)

type ruleFile struct {
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

func TestAlertRules(t *testing.T) {
	served := servedNames(t)
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			names, err := metricNames(r.Expr)
			if err != nil {
				t.Errorf("%s: alert %s: %v", alertsFile, r.Alert, err)
				continue
			}
			if len(names) == 0 {
				t.Errorf("%s: alert %s uses no metric", alertsFile, r.Alert)
			}
			for _, n := range names {
				if !served[n] {
					t.Errorf("%s: alert %s uses %s, which the exporter does not serve", alertsFile, r.Alert, n)
				}
			}
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: rule %q needs alert, labels.severity and annotations.summary", alertsFile, r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: alert %s: for: %v", alertsFile, r.Alert, err)
				}
			}
		}
	}
	// The alerts: GPU lost, XID, ECC, thermal, idle allocated GPU.
	for _, want := range []string{"GPULost", "GPUXIDError", "GPUDoubleBitECCErrors", "GPUHighTemperature", "GPUAllocatedIdle"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("%s: no alert %s", alertsFile, want)
		}
	}
}

// exprs returns every PromQL expression of a Grafana dashboard: panel
// targets and query variables.
func exprs(v any, path string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "." + k
			if s, ok := x.(string); ok && k == "expr" {
				out[p] = s
			}
			exprs(x, p, out)
		}
	case []any:
		for i, x := range v {
			exprs(x, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

func TestDashboard(t *testing.T) {
	served := servedNames(t)
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	found := map[string]string{}
	exprs(dash["panels"], "panels", found)
	// Query variables: label_values(SELECTOR, label).
	tmpl, _ := dash["templating"].(map[string]any)
	vars, _ := tmpl["list"].([]any)
	for i, v := range vars {
		m, _ := v.(map[string]any)
		if m["type"] != "query" {
			continue
		}
		q, _ := m["query"].(map[string]any)
		s, _ := q["query"].(string)
		lv := labelValues.FindStringSubmatch(s)
		if lv == nil {
			t.Errorf("%s: templating.list[%d]: query %q is not label_values(SELECTOR, label)", dashboardFile, i, s)
			continue
		}
		found["templating.list["+strconv.Itoa(i)+"]"] = lv[1]
	}
	if len(found) < 10 {
		t.Fatalf("%s: only %d expressions found", dashboardFile, len(found))
	}
	used := map[string]bool{}
	for where, expr := range found {
		names, err := metricNames(grafanaVars.Replace(expr))
		if err != nil {
			t.Errorf("%s: %s: %v", dashboardFile, where, err)
			continue
		}
		for _, n := range names {
			used[n] = true
			if !served[n] {
				t.Errorf("%s: %s uses %s, which the exporter does not serve", dashboardFile, where, n)
			}
		}
	}
	// The dashboard shows every DCGM field.
	for _, f := range fields {
		if !used[f.Name] {
			t.Errorf("%s: no panel shows %s", dashboardFile, f.Name)
		}
	}
}

func TestMetricNamesRejectsBadPromQL(t *testing.T) {
	if _, err := metricNames(`rate(DCGM_FI_DEV_GPU_UTIL[5m]`); err == nil {
		t.Fatal("unbalanced parenthesis parsed")
	}
	got, err := metricNames(`max by (UUID) (DCGM_FI_DEV_GPU_UTIL{pod!=""}) / on(UUID) {__name__="DCGM_FI_DEV_FB_USED"}`)
	if err != nil || !slices.Equal(got, []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
		t.Fatalf("metricNames = %v, %v", got, err)
	}
}
