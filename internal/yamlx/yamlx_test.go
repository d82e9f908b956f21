// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package yamlx

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/hint"
)

func parse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	n, err := Parse("f.yaml", strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestParse(t *testing.T) {
	if n, err := Parse("f.yaml", strings.NewReader("")); n != nil || err != nil {
		t.Errorf("empty: %v, %v; want nil, nil", n, err)
	}
	for _, in := range []string{"a: 1\n---\n", "---\na: 1\n...\n", "a: 1\n---\n# nothing\n---\n"} {
		if n, err := Parse("f.yaml", strings.NewReader(in)); n == nil || err != nil || Lookup(n, "a").Value != "1" {
			t.Errorf("Parse(%q) = %v, %v; want the mapping a: 1", in, n, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"a: 1\n---\nb: 2\n", "f.yaml:2: a second YAML document; give one"},
		{"a: 1\n---\n---\nb: 2\n", "f.yaml:3: a second YAML document; give one"},
		// A parser error names the line where its context opens (the
		// flow or block collection), else where the problem was found
		// (the end of the file: its last line); go.yaml.in/yaml/v3 says one
		// line less for parser errors.
		{"a: [\n", "f.yaml:1: did not find expected node content"},
		{"a: [", "f.yaml:1: did not find expected node content"},
		{"a: 1\nb: [\n\n", "f.yaml:3: did not find expected node content"},
		{"groups:\n  - name: a\n    count: [1\n  - name: b\n", "f.yaml:3: did not find expected ',' or ']'"},
		{"a:\n  - x\n  y: 1\n", "f.yaml:2: did not find expected '-' indicator"},
		{"a: {b: 1\nc: 2\n", "f.yaml:2: did not find expected ',' or '}'"},
		{"a:\n  b: 1\n c: 2\n", "f.yaml:3: did not find expected key"},
		// Scanner errors were right already.
		{"a: 1\n  b: 2\n", "f.yaml:2: mapping values are not allowed in this context"},
		{"a: 1\nb: 2\n c: 3\n", "f.yaml:3: mapping values are not allowed in this context"},
	} {
		if _, err := Parse("f.yaml", strings.NewReader(c.in)); err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := ReadMapping("f.yaml", strings.NewReader("- 1\n"), "a mapping"); err == nil || err.Error() != "f.yaml:1: want a mapping" {
		t.Errorf("ReadMapping of a list: %v", err)
	}
}

func TestFields(t *testing.T) {
	known := []string{"name", "count", "memoryGiB"}
	n := parse(t, "name: a\ncount: 2\n")
	var got []string
	seen, err := Fields("f.yaml", "g", n, known, func(k, v *yaml.Node) error {
		got = append(got, k.Value+"="+v.Value)
		return nil
	})
	if err != nil || strings.Join(got, ",") != "name=a,count=2" || !seen["count"] || seen["memoryGiB"] {
		t.Fatalf("Fields = %v, %v, %v", got, seen, err)
	}
	for _, c := range []struct{ in, want string }{
		{"name: a\nname: b\n", "f.yaml:2: g.name: given twice"},
		{"memory: 3\n", `f.yaml:1: g: unknown field "memory" (known: name, count, memoryGiB); did you mean "memoryGiB"?`},
		{"Count: 3\n", `f.yaml:1: g: unknown field "Count" (known: name, count, memoryGiB); did you mean "count"?`},
		{"colour: 3\n", `f.yaml:1: g: unknown field "colour" (known: name, count, memoryGiB)`},
		{"[1]\n", "f.yaml:1: g: want a mapping"},
	} {
		_, err := Fields("f.yaml", "g", parse(t, c.in), known, func(k, v *yaml.Node) error { return nil })
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	if got := Unknown("x", []string{"nodeGroups"}); got != `unknown field "x" (want nodeGroups)` {
		t.Errorf("Unknown = %s", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"device-filter", "devices", "mig-enabled", "mig-devices"}
	for in, want := range map[string]string{
		"mig-enable":  "mig-enabled", // prefix
		"mig-devies":  "mig-devices", // 1 edit
		"device":      "devices",
		"DEVICES":     "devices", // case
		"colour":      "",
		"mig-devices": "mig-devices",
	} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := hint.Distance("kitten", "sitting"); d != 3 {
		t.Errorf("distance(kitten, sitting) = %d, want 3", d)
	}
}

func TestScalars(t *testing.T) {
	n := parse(t, "a: 7\nb: 1.5\nc: many\nd: -1\ne: 65\nf: 0.5\ng: [x, y]\nh: true\ni: {k: v, l: w}\nj: 2e3\n")
	v := func(k string) *yaml.Node { return Lookup(n, k) }
	if x, err := Int("f.yaml", "a", v("a"), 0, 64); x != 7 || err != nil {
		t.Errorf("Int(7) = %d, %v", x, err)
	}
	for _, c := range []struct {
		key, want string
		lo        int
	}{
		{"b", "f.yaml:2: b: 1.5 is not a whole number", 0},
		{"j", "f.yaml:10: j: 2e3 is not a whole number", 0},
		{"c", `f.yaml:3: c: "many" is not an integer`, 0},
		{"d", "f.yaml:4: d: negative value -1", 0},
		{"a", "f.yaml:1: a: value 7 below 10", 10},
		{"e", "f.yaml:5: e: value 65 above 64", 0},
		{"g", "f.yaml:7: g: want a scalar", 0},
	} {
		if _, err := Int("f.yaml", c.key, v(c.key), c.lo, 64); err == nil || err.Error() != c.want {
			t.Errorf("Int(%s) = %v, want %q", c.key, err, c.want)
		}
	}
	if x, err := Number("f.yaml", "f", v("f"), 1); x != 0.5 || err != nil {
		t.Errorf("Number(0.5) = %v, %v", x, err)
	}
	if _, err := Number("f.yaml", "e", v("e"), 64); err == nil || err.Error() != "f.yaml:5: e: value 65 above 64" {
		t.Errorf("Number(65) = %v", err)
	}
	if s, err := Strings("f.yaml", "g", v("g"), "names"); strings.Join(s, ",") != "x,y" || err != nil {
		t.Errorf("Strings = %v, %v", s, err)
	}
	if _, err := Strings("f.yaml", "a", v("a"), "names"); err == nil || err.Error() != "f.yaml:1: a: want a list of names" {
		t.Errorf("Strings(7) = %v", err)
	}
	if b, err := Bool("f.yaml", "h", v("h")); !b || err != nil {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if m, keys, err := StringMap("f.yaml", "i", v("i")); m["l"] != "w" || strings.Join(keys, ",") != "k,l" || err != nil {
		t.Errorf("StringMap = %v, %v, %v", m, keys, err)
	}
	if Lookup(n, "zz") != nil || Lookup(nil, "a") != nil {
		t.Error("Lookup of an absent key is not nil")
	}
}

type quota struct {
	Model   string `yaml:"model"`
	Nominal *int   `yaml:"nominal"`
}

type team struct {
	Name       string            `yaml:"name"`
	Namespaces []string          `yaml:"namespaces"`
	Priority   int               `yaml:"priority"`
	Quotas     []quota           `yaml:"quotas"`
	Labels     map[string]string `yaml:"labels"`
}

type teams struct {
	Cohort string `yaml:"cohort"`
	Teams  []team `yaml:"teams"`
	hidden int
}

func TestDecode(t *testing.T) {
	var f teams
	n := parse(t, "cohort: c\nteams:\n- name: a\n  priority: 3\n  quotas: [{model: T4, nominal: 2}]\n  labels: {x: y}\n")
	if err := Decode("t.yaml", n, &f); err != nil || f.Teams[0].Priority != 3 || *f.Teams[0].Quotas[0].Nominal != 2 || f.Teams[0].Labels["x"] != "y" {
		t.Fatalf("Decode = %+v, %v", f, err)
	}
	for _, c := range []struct{ in, want string }{
		{"teams:\n- name: a\n  namespace: [a]\n", `t.yaml:3: teams[0].namespace: unknown field; did you mean "namespaces"?`},
		{"teams:\n- name: a\n  quotas: [{model: T4, nominal: 1.5}]\n", "t.yaml:3: teams[0].quotas[0].nominal: 1.5 is not a whole number"},
		{"teams:\n- name: a\n  model: T4\n", "t.yaml:3: teams[0].model: unknown field; it belongs under teams[*].quotas[*]"},
		{"cohort: c\ncohort: d\n", "t.yaml:2: cohort: listed twice"},
		{"teams:\n- name: a\n  priority: high\n", `t.yaml:3: teams[0].priority: "high" is not a whole number`},
		{"teams:\n- name: a\n  quotas: [{model: T4, nominal: [2]}]\n", "t.yaml:3: teams[0].quotas[0].nominal: want a whole number, not a list or mapping"},
		{"teams:\n- name: a\n  quotas: [{model: T4, nominal: \"2\"}]\n", `t.yaml:3: teams[0].quotas[0].nominal: "2" is not a whole number`},
		{"teams:\n- name: a\n  priority: [high]\n  quotas: 3\n", "t.yaml:3: teams[0].priority: want a whole number, not a list or mapping"},
		{"hidden: 1\n", "t.yaml:1: hidden: unknown field"},
	} {
		var f teams
		if err := Decode("t.yaml", parse(t, c.in), &f); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestCheckSchema(t *testing.T) {
	schema := &Key{Kids: map[string]*Key{
		"flags":   {Kids: map[string]*Key{"plugin": {Kids: map[string]*Key{"strategy": {}}}, "old": {Ignored: "no effect"}}},
		"mps":     {Refused: "not supported"},
		"version": {},
	}}
	c := Check("c.yaml", parse(t, "version: v1\nstrategy: x\nflags: {old: 1, plugin: {strategy: y}}\nmps: {}\n"), schema)
	want := "c.yaml:2: strategy: unknown field; it belongs under flags.plugin\nc.yaml:4: mps: not supported"
	if err := c.Err(); err == nil || err.Error() != want {
		t.Errorf("Check = %v, want %q", err, want)
	}
	if len(c.Warnings) != 1 || c.Warnings[0] != "c.yaml:3: flags.old: ignored: no effect" {
		t.Errorf("warnings %q", c.Warnings)
	}
	if c.Lines["flags.plugin.strategy"] != 3 || c.Lines["version"] != 1 {
		t.Errorf("lines %v", c.Lines)
	}
}

func TestLocate(t *testing.T) {
	c := Check("p.yaml", parse(t, "gpus:\n- productName: L4\n  mig: [1g.5gb]\n"), SchemaOf(struct {
		GPUs []struct {
			ProductName string   `json:"productName"`
			MIG         []string `json:"mig"`
		} `json:"gpus"`
	}{}, "json"))
	for msg, want := range map[string]string{
		"gpus[0].mig: no such profile":    "p.yaml:3: gpus[0].mig: no such profile",
		"gpus[0].mig[0]: no such profile": "p.yaml:3: gpus[0].mig[0]: no such profile",
		"gpus[0].uuid: required":          "p.yaml:2: gpus[0].uuid: required",
		"links: bad":                      "p.yaml: links: bad",
		"no field here":                   "p.yaml: no field here",
	} {
		if got := c.Locate("p.yaml", &strError{msg}).Error(); got != want {
			t.Errorf("Locate(%q) = %q, want %q", msg, got, want)
		}
	}
}
