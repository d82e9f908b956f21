// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package quota turns a teams file (teams, their namespaces and their GPUs
// per model) into Kueue objects: ResourceFlavors, ClusterQueues in one
// Cohort, LocalQueues, and a ResourceQuota per namespace. It is the one
// home of the teams file, which gpuplane simulate --teams reads too.
package quota

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// Teams is a teams file: the teams sharing a cluster's GPUs in one Kueue
// Cohort.
type Teams struct {
	// Cohort names the Kueue Cohort of every team's ClusterQueue.
	Cohort string
	Teams  []Team
}

// Team is one team: its ClusterQueue is named after it, and each of its
// namespaces gets a LocalQueue and a ResourceQuota.
type Team struct {
	Name       string
	Namespaces []string
	// Priority orders the teams' workloads (higher first), as a Kueue
	// WorkloadPriorityClass value.
	Priority int
	Quotas   []ModelQuota

	line int
}

// ModelQuota is a team's quota of one GPU model, in whole GPUs, with
// Kueue's meaning (https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/):
// Nominal GPUs are guaranteed; BorrowingLimit caps the GPUs borrowed from
// the cohort beyond Nominal (nil: no cap); LendingLimit caps the GPUs of
// Nominal lent to the cohort when unused (nil: all of them). Nominal is
// never nil in a parsed file.
type ModelQuota struct {
	// Model is the GPU model as the node list names it (the openb model
	// column, or an internal/gpu catalog name).
	Model                                 string
	Nominal, BorrowingLimit, LendingLimit *int
	// Product is the nvidia.com/gpu.product node label value of Model
	// (for example NVIDIA-A100-SXM4-80GB); it may be given once per model
	// and is then the same in every team.
	Product string

	line int
}

// Line returns the line of the team in its file (0 when not parsed).
func (t Team) Line() int { return t.line }

// Line returns the line of the quota in its file (0 when not parsed).
func (q ModelQuota) Line() int { return q.line }

// Limits of a teams file; far beyond any cluster, they keep bad input from
// costing memory or overflowing sums.
const (
	maxTeamsBytes = 1 << 20
	maxGPUs       = 1 << 20
)

// LoadTeams reads a teams file; see ParseTeams.
func LoadTeams(path string) (*Teams, error) {
	data, err := readTeams(path)
	if err != nil {
		return nil, err
	}
	return ParseTeams(path, data)
}

// readTeams reads a teams file, up to one byte past the size limit.
func readTeams(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTeamsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// file, team and quota are the YAML shapes of a teams file; yamlx.Decode
// refuses a key they do not have and a fraction for an int.
type (
	fileYAML struct {
		Cohort string     `yaml:"cohort"`
		Teams  []teamYAML `yaml:"teams"`
	}
	teamYAML struct {
		Name       string      `yaml:"name"`
		Namespaces []string    `yaml:"namespaces"`
		Priority   int         `yaml:"priority"`
		Quotas     []quotaYAML `yaml:"quotas"`
		line       int
		path       string // teams[i], for errors
	}
	quotaYAML struct {
		Model          string `yaml:"model"`
		Product        string `yaml:"product"`
		Nominal        *int   `yaml:"nominal"`
		BorrowingLimit *int   `yaml:"borrowingLimit"`
		LendingLimit   *int   `yaml:"lendingLimit"`
		line           int
		path           string // teams[i].quotas[j], for errors
	}
)

// lines sets the line of each team and quota from the document's node
// tree (a custom UnmarshalYAML would lose KnownFields).
func (f *fileYAML) lines(doc *yaml.Node) {
	teams := yamlx.Lookup(doc, "teams")
	if teams == nil || teams.Kind != yaml.SequenceNode {
		return
	}
	for i := range f.Teams {
		f.Teams[i].path = yamlx.Item("teams", i)
		for j := range f.Teams[i].Quotas {
			f.Teams[i].Quotas[j].path = yamlx.Item(f.Teams[i].path+".quotas", j)
		}
	}
	for i := range f.Teams {
		if i >= len(teams.Content) {
			return
		}
		f.Teams[i].line = teams.Content[i].Line
		quotas := yamlx.Lookup(teams.Content[i], "quotas")
		if quotas == nil || quotas.Kind != yaml.SequenceNode {
			continue
		}
		for j := range f.Teams[i].Quotas {
			if j < len(quotas.Content) {
				f.Teams[i].Quotas[j].line = quotas.Content[j].Line
			}
		}
	}
}

// ParseTeams parses a teams file (YAML; docs/quota.md):
//
//	cohort: gpu-cluster
//	teams:
//	- name: vision
//	  namespaces: [vision, vision-dev]
//	  priority: 100
//	  quotas:
//	  - {model: A100-80GB, product: NVIDIA-A100-SXM4-80GB, nominal: 8, borrowingLimit: 4, lendingLimit: 2}
//
// An unknown key, a missing or bad field, a repeated team, namespace or
// model, or a model given two products is an error naming file, line and
// field. name is used in errors.
func ParseTeams(name string, data []byte) (*Teams, error) {
	return parseTeams(name, data, true)
}

// LoadNamespaces reads a teams file for the namespaces of each team only,
// as gpuplane cost does: it returns the team of each namespace. cohort and
// each team's quotas may be absent; what is given is checked as
// ParseTeams checks it.
func LoadNamespaces(path string) (map[string]string, error) {
	data, err := readTeams(path)
	if err != nil {
		return nil, err
	}
	t, err := parseTeams(path, data, false)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, tm := range t.Teams {
		for _, ns := range tm.Namespaces {
			out[ns] = tm.Name
		}
	}
	return out, nil
}

// parseTeams is ParseTeams; with quotas false, cohort and quotas may be
// absent.
func parseTeams(name string, data []byte, quotas bool) (*Teams, error) {
	if len(data) > maxTeamsBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxTeamsBytes)
	}
	doc, err := yamlx.Parse(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("%s: empty teams file", name)
	}
	var f fileYAML
	if err := yamlx.Decode(name, doc, &f); err != nil {
		return nil, err
	}
	f.lines(doc)
	if (quotas || f.Cohort != "") && !kubename.IsDNS1123Label(f.Cohort) {
		return nil, errf(name, 1, "cohort", "%q is not a lowercase RFC 1123 name of at most 63 characters", f.Cohort)
	}
	if len(f.Teams) == 0 {
		return nil, errf(name, 1, "teams", "no teams")
	}
	c := checker{name: name, quotas: quotas, teamAt: map[string]int{}, nsAt: map[string]int{}, product: map[string]string{}, modelOf: map[string]string{}}
	out := &Teams{Cohort: f.Cohort}
	for _, ty := range f.Teams {
		t, err := c.team(ty)
		if err != nil {
			return nil, err
		}
		out.Teams = append(out.Teams, t)
	}
	// A product given once applies to the model in every team.
	for i := range out.Teams {
		for j := range out.Teams[i].Quotas {
			q := &out.Teams[i].Quotas[j]
			q.Product = c.product[q.Model]
		}
	}
	return out, nil
}

// errf is an error "name:line: field: reason".
func errf(name string, line int, field, format string, a ...any) error {
	return yamlx.At(name, line, field, format, a...)
}

// checker checks the teams of a file in order, with what spans them.
type checker struct {
	name    string
	quotas  bool           // quotas required
	teamAt  map[string]int // team name -> line
	nsAt    map[string]int // namespace -> line of its team
	product map[string]string
	modelOf map[string]string // product -> model
}

// team checks one team and its quotas.
func (c *checker) team(ty teamYAML) (Team, error) {
	name := c.name
	if !kubename.IsDNS1123Label(ty.Name) {
		return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "name"), "%q is not a lowercase RFC 1123 name of at most 63 characters", ty.Name)
	}
	if l, ok := c.teamAt[ty.Name]; ok {
		return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "name"), "team %q repeats line %d", ty.Name, l)
	}
	c.teamAt[ty.Name] = ty.line
	if len(ty.Namespaces) == 0 {
		return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "namespaces"), "team %q has no namespaces", ty.Name)
	}
	for _, ns := range ty.Namespaces {
		if !kubename.IsDNS1123Label(ns) {
			return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "namespaces"), "%q is not a namespace name", ns)
		}
		if l, ok := c.nsAt[ns]; ok {
			return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "namespaces"), "namespace %q already belongs to the team of line %d", ns, l)
		}
		c.nsAt[ns] = ty.line
	}
	if ty.Priority < -1_000_000_000 || ty.Priority > 1_000_000_000 {
		return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "priority"), "%d is outside -1e9..1e9", ty.Priority)
	}
	if len(ty.Quotas) == 0 && c.quotas {
		return Team{}, errf(name, ty.line, yamlx.Field(ty.path, "quotas"), "team %q has no quotas", ty.Name)
	}
	t := Team{Name: ty.Name, Namespaces: ty.Namespaces, Priority: ty.Priority, line: ty.line}
	modelAt := map[string]int{}
	for _, qy := range ty.Quotas {
		qy.Model = gpu.Canonical(qy.Model) // "mi300x" is the catalog's MI300X
		if qy.Model == "" || len(qy.Model) > kubename.MaxLabelValue {
			return Team{}, errf(name, qy.line, yamlx.Field(qy.path, "model"), "missing or longer than 63 characters")
		}
		if l, ok := modelAt[qy.Model]; ok {
			return Team{}, errf(name, qy.line, yamlx.Field(qy.path, "model"), "model %q repeats line %d", qy.Model, l)
		}
		modelAt[qy.Model] = qy.line
		if err := c.quota(qy); err != nil {
			return Team{}, err
		}
		t.Quotas = append(t.Quotas, ModelQuota{Model: qy.Model, Product: qy.Product,
			Nominal: qy.Nominal, BorrowingLimit: qy.BorrowingLimit, LendingLimit: qy.LendingLimit, line: qy.line})
	}
	return t, nil
}

// quota checks one quota's product and GPU counts.
func (c *checker) quota(qy quotaYAML) error {
	name := c.name
	if qy.Product != "" {
		if !kubename.IsLabelValue(qy.Product) {
			return errf(name, qy.line, yamlx.Field(qy.path, "product"), "%q is not a label value", qy.Product)
		}
		if m, ok := gpu.FromLabel(qy.Product); ok && m.Name != qy.Model {
			// Another model's product label would select no node of
			// this one (NVIDIA's on an AMD model, or the reverse).
			return errf(name, qy.line, yamlx.Field(qy.path, "product"), "%q is the product label of model %s, not %s", qy.Product, m.Name, qy.Model)
		}
		if p, ok := c.product[qy.Model]; ok && p != qy.Product {
			return errf(name, qy.line, yamlx.Field(qy.path, "product"), "model %q is %q elsewhere", qy.Model, p)
		}
		// Two models on one product would be two ResourceFlavors
		// selecting the same nodes: Kueue would count each GPU in both
		// flavors' quotas.
		if m, ok := c.modelOf[qy.Product]; ok && m != qy.Model {
			return errf(name, qy.line, yamlx.Field(qy.path, "product"), "%q is model %q elsewhere; one product is one model", qy.Product, m)
		}
		c.product[qy.Model] = qy.Product
		c.modelOf[qy.Product] = qy.Model
	}
	if qy.Nominal == nil {
		return errf(name, qy.line, yamlx.Field(qy.path, "nominal"), "missing")
	}
	for _, v := range []struct {
		field string
		n     *int
	}{{"nominal", qy.Nominal}, {"borrowingLimit", qy.BorrowingLimit}, {"lendingLimit", qy.LendingLimit}} {
		if v.n != nil && (*v.n < 0 || *v.n > maxGPUs) {
			return errf(name, qy.line, yamlx.Field(qy.path, v.field), "%d GPUs is outside 0..%d", *v.n, maxGPUs)
		}
	}
	// Kueue: lendingLimit must be at most nominalQuota.
	if qy.LendingLimit != nil && *qy.LendingLimit > *qy.Nominal {
		return errf(name, qy.line, yamlx.Field(qy.path, "lendingLimit"), "%d GPUs is more than nominal %d", *qy.LendingLimit, *qy.Nominal)
	}
	return nil
}
