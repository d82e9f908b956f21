// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"os"
	"strings"
	"testing"
)

func TestParseTeamsExample(t *testing.T) {
	ts, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ts.Cohort != "openb" || len(ts.Teams) != 3 {
		t.Fatalf("cohort %q, %d teams; want openb, 3", ts.Cohort, len(ts.Teams))
	}
	v, n, r := ts.Teams[0], ts.Teams[1], ts.Teams[2]
	if v.Name != "vision" || v.Priority != 100 || strings.Join(v.Namespaces, ",") != "vision,vision-dev" || v.Line() != 4 {
		t.Errorf("team 0 = %+v (line %d)", v, v.Line())
	}
	q := v.Quotas[0]
	if q.Model != "V100M32" || *q.Nominal != 100 || *q.BorrowingLimit != 50 || *q.LendingLimit != 20 || q.Line() != 8 {
		t.Errorf("vision V100M32 = %+v", q)
	}
	if v.Quotas[1].BorrowingLimit != nil || v.Quotas[1].LendingLimit != nil {
		t.Errorf("vision T4 limits should be absent (no cap)")
	}
	// nlp gives no product for V100M32: vision's applies.
	if n.Quotas[0].Product != "Tesla-V100-SXM2-32GB" || *n.Quotas[0].BorrowingLimit != 0 {
		t.Errorf("nlp V100M32 = %+v", n.Quotas[0])
	}
	if r.Priority != 0 || r.Quotas[1].Product != "Tesla-T4" || *r.Quotas[1].Nominal != 100 || r.Quotas[1].Line() != 21 {
		t.Errorf("research = %+v", r)
	}
}

func TestParseTeamsErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unknown key", "cohort: c\nteams:\n- name: a\n  namespace: [a]\n", `t.yaml:4: teams[0].namespace: unknown field; did you mean "namespaces"?`}, // no "in type quota.teamYAML",
		{"bad cohort", "cohort: C!\nteams: []\n", "t.yaml:1: cohort:"},
		{"no teams", "cohort: c\n", "t.yaml:1: teams: no teams"},
		{"no namespaces", "cohort: c\nteams:\n- name: a\n  quotas: [{model: T4, nominal: 1}]\n", "t.yaml:3: teams[0].namespaces: team \"a\" has no namespaces"},
		{"shared namespace", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, nominal: 1}]\n- name: b\n  namespaces: [x]\n  quotas: [{model: T4, nominal: 1}]\n", "t.yaml:6: teams[1].namespaces: namespace \"x\" already belongs to the team of line 3"},
		{"repeated team", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, nominal: 1}]\n- name: a\n  namespaces: [y]\n  quotas: [{model: T4, nominal: 1}]\n", "t.yaml:6: teams[1].name: team \"a\" repeats line 3"},
		{"no nominal", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - model: T4\n", "t.yaml:6: teams[0].quotas[0].nominal: missing"},
		{"negative", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - {model: T4, nominal: 2, borrowingLimit: -1}\n", "t.yaml:6: teams[0].quotas[0].borrowingLimit: -1 GPUs is outside"},
		{"lending not a number", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - {model: T4, nominal: 2, lendingLimit: two}\n", "t.yaml:6: teams[0].quotas[0].lendingLimit: \"two\" is not a whole number"},
		{"lending over nominal", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - {model: T4, nominal: 2, lendingLimit: 3}\n", "t.yaml:6: teams[0].quotas[0].lendingLimit: 3 GPUs is more than nominal 2"},
		{"one product, two models", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: A100-40GB, product: lab-a100, nominal: 1}]\n- name: b\n  namespaces: [y]\n  quotas: [{model: A100-80GB, product: lab-a100, nominal: 1}]\n", "t.yaml:8: teams[1].quotas[0].product: \"lab-a100\" is model \"A100-40GB\" elsewhere; one product is one model"},
		// A catalogued product label names its own model: NVIDIA's
		// product of an AMD model selects no AMD node (nor the reverse).
		{"another model's product", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: MI300X, product: NVIDIA-H100-80GB-HBM3, nominal: 1}]\n", "t.yaml:5: teams[0].quotas[0].product: \"NVIDIA-H100-80GB-HBM3\" is the product label of model H100-80GB, not MI300X"},
		{"another vendor's product", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: h100-80gb, product: AMD_Instinct_MI300X, nominal: 1}]\n", "t.yaml:5: teams[0].quotas[0].product: \"AMD_Instinct_MI300X\" is the product label of model MI300X, not H100-80GB"},
		{"two products", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, product: Tesla-T4, nominal: 1}]\n- name: b\n  namespaces: [y]\n  quotas: [{model: T4, product: NVIDIA-T4, nominal: 1}]\n", "t.yaml:8: teams[1].quotas[0].product: model \"T4\" is \"Tesla-T4\" elsewhere"},
		{"not int", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, nominal: two}]\n", "t.yaml:5: teams[0].quotas[0].nominal: \"two\" is not a whole number"},
		// go.yaml.in/yaml/v3 alone would read 1.5 as 1.
		{"fraction", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, nominal: 1.5}]\n", "t.yaml:5: teams[0].quotas[0].nominal: 1.5 is not a whole number"},
		{"fractional priority", "cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  priority: 2.5\n  quotas: [{model: T4, nominal: 1}]\n", "t.yaml:5: teams[0].priority: 2.5 is not a whole number"},
		{"two documents", "cohort: c\n---\ncohort: d\n", "t.yaml:2: a second YAML document; give one"},
		{"empty", "", "t.yaml: empty teams file"},
	} {
		_, err := ParseTeams("t.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func FuzzParseTeams(f *testing.F) {
	for _, s := range []string{
		"cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas: [{model: T4, nominal: 1, borrowingLimit: 2, lendingLimit: 1}]\n",
		"cohort: c\nteams:\n- {name: a, namespaces: [x], priority: -3, quotas: [{model: T4, product: Tesla-T4, nominal: 0}]}\n",
		"cohort: c\nteams: [[1]]\n",
		"&a [*a]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseTeams("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		// Plan never panics on a parsed file, and its errors name the file.
		if _, err := Plan("f.yaml", ts, map[string]int{}); err != nil && !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Fatalf("Plan error %q does not name the file", err)
		}
		for _, tm := range ts.Teams {
			for _, q := range tm.Quotas {
				if q.Nominal == nil || *q.Nominal < 0 || (q.LendingLimit != nil && *q.LendingLimit > *q.Nominal) {
					t.Fatalf("accepted bad quota %+v", q)
				}
			}
		}
	})
}

// gpuplane cost reads only each team's namespaces: cohort and quotas may be
// absent (findings 15), what is given is still checked, and an unknown key
// names no Go type (findings 14).
func TestLoadNamespaces(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("ns.yaml", "teams:\n- name: ml\n  namespaces: [ml, ml-dev]\n- name: web\n  namespaces: [web]\n  quotas: [{model: T4, nominal: 1}]\n")
	got, err := LoadNamespaces(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["ml"] != "ml" || got["ml-dev"] != "ml" || got["web"] != "web" {
		t.Errorf("namespaces = %v, want ml, ml-dev: ml; web: web", got)
	}
	// The full file still needs cohort and quotas.
	if _, err := LoadTeams(p); err == nil || !strings.Contains(err.Error(), "ns.yaml:1: cohort:") {
		t.Errorf("LoadTeams without cohort: %v", err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"unknown key", "teams:\n- name: a\n  namespace: [a]\n", `u.yaml:3: teams[0].namespace: unknown field; did you mean "namespaces"?`},
		{"bad cohort", "cohort: C!\nteams:\n- name: a\n  namespaces: [a]\n", "u.yaml:1: cohort:"},
		{"no namespaces", "teams:\n- name: a\n", "u.yaml:2: teams[0].namespaces: team \"a\" has no namespaces"},
		{"bad quota", "teams:\n- name: a\n  namespaces: [a]\n  quotas: [{model: T4}]\n", "u.yaml:4: teams[0].quotas[0].nominal: missing"},
		{"syntax", "teams: [\n", "u.yaml:1: did not find expected node content"},
	} {
		_, err := LoadNamespaces(write("u.yaml", c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "teamYAML") {
			t.Errorf("%s: error %v, want one containing %q and no Go type", c.name, err, c.want)
		}
	}
}
