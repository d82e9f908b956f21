// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// NodeGroup is a group of identical nodes, from a cluster YAML file
// (ReadCluster) or a short node spec (ParseNodeSpec).
type NodeGroup struct {
	// Name is the node name prefix: the nodes are Name-0 … Name-(Count-1).
	Name  string
	Count int
	// Model is the GPU model, a gpu catalog name ("" for CPU-only nodes).
	Model string
	// GPUs per node: physical devices, each Partitions' GPUs.
	GPUs int
	// Vendor is the maker of the GPUs (the vendor field; the model's,
	// gpu.VendorOf, when not given); Partition their AMD partition mode
	// (the partition field, e.g. CPX/NPS1; zero: whole devices).
	Vendor    gpu.Vendor
	Partition gpu.Partition
	// CPUMilli in millicores, MemoryMiB in MiB, per node.
	CPUMilli, MemoryMiB int64
	// MIG is the MIG layout of every GPU of the group: the profile names
	// of the MIG devices on one GPU (e.g. ["3g.40gb", "3g.40gb"]), checked
	// with gpu.PlaceMIG; nil for no MIG. The simulator uses it under
	// --sharing mig and simulates whole GPUs otherwise.
	MIG []string
	// MIGLine is the mig field's line (0 without one).
	MIGLine int
	// Labels are node labels, for make cluster's fake nodes (the
	// simulator does not read them).
	Labels map[string]string
	// Line is the group's line in its file (its item number in a short
	// spec).
	Line int
}

// Bounds that keep a bad cluster description from making an absurd
// cluster.
const (
	maxGroupNodes   = 100000
	maxClusterNodes = 1000000
	maxNodeCores    = 1 << 20 // CPU cores per node
	maxNodeGiB      = 1 << 30 // GiB per node
	maxNodeMiB      = 1 << 40 // MiB per node (memoryMiB)
)

// groupKeys are the keys of a node group in a cluster YAML file; the last
// two are the node YAML spellings of make cluster, still read.
var groupKeys = []string{"name", "count", "model", "vendor", "partition", "gpus", "cpu", "memoryGiB", "mig", "labels", "cpuMilli", "memoryMiB"}

// ReadCluster reads a cluster YAML file, the one node format that gpuplane
// simulate --nodes, gpuplane quota --nodes and make cluster NODES= read
// (docs/simulate.md, "Cluster YAML"):
//
//	nodeGroups:
//	  - name: a100      # node name prefix (default: the model, lower case)
//	    count: 4        # nodes
//	    model: A100-80GB
//	    vendor: nvidia  # optional: nvidia, amd or intel (default: the model's)
//	    partition: CPX/NPS1  # optional AMD partition mode (MI300X, MI325X, MI355X)
//	    gpus: 8         # GPUs (physical devices) per node
//	    cpu: 128        # CPU cores per node (decimal allowed)
//	    memoryGiB: 2048 # memory per node in GiB (decimal allowed)
//	    mig: [3g.40gb, 3g.40gb]  # optional MIG layout of each GPU
//	    labels: {topology.kubernetes.io/rack: r1}  # optional node labels
//
// A node of gpus devices in partition mode P has gpus ×
// gpu.Partitions(model, P).GPUs GPUs (8 MI300X in CPX/NPS1: 64), each a
// GPU to the simulator, as AMD's device plugin advertises one amd.com/gpu
// per partition. A vendor given must be a catalog model's own; it names
// the maker of a model the catalog lacks.
// gpus, cpu and memoryGiB default to the model's gpu.TypicalServer, and
// are required for a model without one (gpus is 0 without a model); a
// model outside the GPU catalog
// is taken only with all three. cpuMilli (millicores) and memoryMiB (MiB),
// the spellings of make cluster's former node YAML, are read in place of
// cpu and memoryGiB. The YAML is strict: an unknown or repeated key, a
// wrong type or a second document is an error. Errors name the file, the
// line and the field.
func ReadCluster(file string, r io.Reader) ([]NodeGroup, error) {
	top, err := yamlx.ReadMapping(file, r, "a mapping with key nodeGroups")
	if err != nil {
		return nil, err
	}
	var groups *yaml.Node
	if _, err := yamlx.Fields(file, "", top, []string{"nodeGroups"}, func(_, v *yaml.Node) error {
		groups = v
		return nil
	}); err != nil {
		return nil, err
	}
	if groups == nil {
		return nil, fmt.Errorf("%s:%d: field nodeGroups: missing", file, top.Line)
	}
	if groups.Kind != yaml.SequenceNode || len(groups.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: field nodeGroups: want a non-empty list of node groups", file, groups.Line)
	}
	out := make([]NodeGroup, 0, len(groups.Content))
	for i, g := range groups.Content {
		ng, err := readGroup(file, yamlx.Item("nodeGroups", i), g)
		if err != nil {
			return nil, err
		}
		out = append(out, ng)
	}
	return out, checkGroups(file, out)
}

// rawGroup is a node group as written, before defaults.
type rawGroup struct {
	NodeGroup
	seen  map[string]bool
	lines map[string]int // each key's line

	cpu, mem          float64 // cores, GiB
	vendor, partition string
}

// readGroup reads one node group mapping.
func readGroup(file, path string, g *yaml.Node) (NodeGroup, error) {
	rg, err := readGroupFields(file, path, g)
	if err != nil {
		return rg.NodeGroup, err
	}
	return rg.finish(file, path, g.Line)
}

// readGroupFields reads the keys of a node group.
func readGroupFields(file, path string, g *yaml.Node) (rawGroup, error) {
	rg := rawGroup{NodeGroup: NodeGroup{Line: g.Line}, lines: map[string]int{}}
	if g.Kind != yaml.MappingNode {
		return rg, fmt.Errorf("%s:%d: %s: want a mapping", file, g.Line, path)
	}
	seen, err := yamlx.Fields(file, path, g, groupKeys, func(k, v *yaml.Node) error {
		p := yamlx.Field(path, k.Value)
		rg.lines[k.Value] = k.Line
		var err error
		var n int
		switch k.Value {
		case "name":
			rg.Name, err = yamlx.Scalar(file, p, v)
		case "count":
			rg.Count, err = yamlx.Int(file, p, v, 0, maxGroupNodes)
		case "model":
			rg.Model, err = yamlx.Scalar(file, p, v)
		case "vendor":
			rg.vendor, err = yamlx.Scalar(file, p, v)
		case "partition":
			rg.partition, err = yamlx.Scalar(file, p, v)
		case "gpus":
			rg.GPUs, err = yamlx.Int(file, p, v, 0, maxGPUsPerNode)
		case "cpu":
			rg.cpu, err = yamlx.Number(file, p, v, maxNodeCores)
		case "memoryGiB":
			rg.mem, err = yamlx.Number(file, p, v, maxNodeGiB)
		case "cpuMilli":
			n, err = yamlx.Int(file, p, v, 0, maxNodeCores*1000)
			rg.cpu = float64(n) / 1000
		case "memoryMiB":
			n, err = yamlx.Int(file, p, v, 0, maxNodeMiB)
			rg.mem = float64(n) / 1024
		case "mig":
			rg.MIG, err = yamlx.Strings(file, p, v, "MIG profile names")
		case "labels":
			rg.Labels, err = readLabels(file, p, v)
		}
		return err
	})
	rg.seen = seen
	if err != nil {
		return rg, err
	}
	for _, pair := range [][2]string{{"cpu", "cpuMilli"}, {"memoryGiB", "memoryMiB"}} {
		if seen[pair[0]] && seen[pair[1]] {
			return rg, fmt.Errorf("%s:%d: %s.%s: given with %s; give one", file, g.Line, path, pair[1], pair[0])
		}
		if seen[pair[1]] {
			seen[pair[0]] = true
		}
	}
	return rg, nil
}

// finish checks a node group and fills in its defaults.
func (rg rawGroup) finish(file, path string, line int) (NodeGroup, error) {
	ng, seen := rg.NodeGroup, rg.seen
	field := func(key string) string { // at the key's line; a missing key's, the group's
		at := line
		if l, ok := rg.lines[key]; ok {
			at = l
		}
		return fmt.Sprintf("%s:%d: %s.%s", file, at, path, key)
	}
	if !seen["count"] {
		return ng, fmt.Errorf("%s: missing", field("count"))
	}
	ng.Model = gpu.Canonical(ng.Model) // catalog names without regard to case
	server, typical := gpu.TypicalServer(ng.Model)
	if ng.Model != "" {
		_, known := gpu.Lookup(ng.Model)
		switch {
		case !known && !(seen["gpus"] && seen["cpu"] && seen["memoryGiB"]):
			return ng, fmt.Errorf("%s: model %s is not in the GPU catalog (%s); give gpus, cpu and memoryGiB for another model%s", field("model"), Quote(ng.Model), strings.Join(gpu.Default().Names(), ", "), gpu.DidYouMean(ng.Model))
		case !known && !kubename.IsLabelValue(ng.Model):
			return ng, fmt.Errorf("%s: model %s is not a label value (it becomes nvidia.com/gpu.product)", field("model"), Quote(ng.Model))
		}
	}
	if ng.Model == "" && !seen["gpus"] {
		seen["gpus"] = true // a CPU-only group: no model, no GPUs
	}
	for _, key := range []string{"gpus", "cpu", "memoryGiB"} {
		if !seen[key] && !typical {
			return ng, fmt.Errorf("%s: missing, and model %s has no typical server to take it from", field(key), Quote(ng.Model))
		}
	}
	if !seen["gpus"] {
		ng.GPUs = server.GPUs
	}
	ng.CPUMilli, ng.MemoryMiB = server.CPUMilli, server.MemoryMiB
	if seen["cpu"] {
		ng.CPUMilli = int64(math.Round(rg.cpu * 1000))
	}
	if seen["memoryGiB"] {
		ng.MemoryMiB = int64(math.Round(rg.mem * 1024))
	}
	if (ng.Model == "") != (ng.GPUs == 0) {
		return ng, fmt.Errorf("%s: %d GPUs of model %s: give a model exactly when the nodes have GPUs", field("gpus"), ng.GPUs, Quote(ng.Model))
	}
	if err := rg.devices(&ng, field); err != nil {
		return ng, err
	}
	ng.MIGLine = rg.lines["mig"]
	if ng.MIG != nil && len(ng.MIG) == 0 {
		// A GPU in MIG mode with no MIG device serves no pod (as
		// mig-parted configs, ReadMIGConfig).
		return ng, fmt.Errorf("%s: no MIG device: a GPU in MIG mode with none serves no pod; leave mig out for whole GPUs", field("mig"))
	}
	if ng.MIG != nil {
		if _, err := gpu.PlaceMIG(ng.Model, ng.MIG); err != nil {
			return ng, fmt.Errorf("%s: %v", field("mig"), err)
		}
	}
	if !seen["name"] {
		ng.Name = strings.ToLower(ng.Model)
		if ng.Name == "" {
			ng.Name = "cpu"
		}
	}
	if err := checkPrefix(ng.Name); err != nil {
		return ng, fmt.Errorf("%s: %v", field("name"), err)
	}
	return ng, nil
}

// devices checks a group's vendor and partition fields and sets them in
// ng (vendorOf, partitionGPUs); field names a field in errors.
func (rg rawGroup) devices(ng *NodeGroup, field func(string) string) error {
	v, err := vendorOf(ng.Model, rg.vendor)
	if err != nil {
		return fmt.Errorf("%s: %v", field("vendor"), err)
	}
	p, err := gpu.ParsePartition(rg.partition)
	if err == nil {
		_, err = partitionGPUs(ng.Model, p, ng.GPUs)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", field("partition"), err)
	}
	ng.Vendor, ng.Partition = v, p
	return nil
}

// readLabels reads a group's node labels: qualified names (an optional
// DNS subdomain prefix and "/", then at most 63 of [A-Za-z0-9-_.]) to
// label values (at most 63 of them, starting and ending alphanumeric).
func readLabels(file, path string, v *yaml.Node) (map[string]string, error) {
	m, keys, err := yamlx.StringMap(file, path, v)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		switch {
		case !kubename.IsLabelKey(k):
			return nil, fmt.Errorf("%s:%d: %s: key %s is not a qualified name (an optional DNS subdomain and /, then at most 63 of A-Z, a-z, 0-9, -, _ and .)", file, v.Line, path, Quote(k))
		case !kubename.IsLabelValue(m[k]):
			return nil, fmt.Errorf("%s:%d: %s: %s: value %s is not a label value (at most 63 of A-Z, a-z, 0-9, -, _ and ., alphanumeric at both ends)", file, v.Line, path, k, Quote(m[k]))
		}
	}
	return m, nil
}

// checkPrefix checks a node name prefix: lower-case letters, digits, '-'
// and '.', starting with a letter or digit, at most 200 bytes (a node name
// is at most 253).
func checkPrefix(s string) error {
	if s == "" || len(s) > 200 {
		return fmt.Errorf("name prefix %s must be 1 to 200 bytes", Quote(s))
	}
	for i, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '.')
		if !ok {
			return fmt.Errorf("name prefix %s: only a-z, 0-9, '-' and '.' (not first)", Quote(s))
		}
	}
	return nil
}

// checkGroups checks what spans groups: distinct name prefixes and the
// cluster's size.
func checkGroups(file string, groups []NodeGroup) error {
	first := map[string]int{}
	total := 0
	for _, g := range groups {
		if l, dup := first[g.Name]; dup {
			return fmt.Errorf("%s:%d: name: prefix %s already used on line %d", file, g.Line, Quote(g.Name), l)
		}
		first[g.Name] = g.Line
		if total += g.Count; total > maxClusterNodes {
			return fmt.Errorf("%s:%d: count: more than %d nodes in all", file, g.Line, maxClusterNodes)
		}
	}
	if total == 0 {
		return fmt.Errorf("%s: no nodes", file)
	}
	return nil
}

// ReadClusterFile opens path and reads it with ReadCluster.
func ReadClusterFile(path string) ([]NodeGroup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCluster(path, f)
}

// ParseNodeSpec reads a short node spec, items joined by ',' or ';'
// ("A100-80GB x 16, T4 x 100", "4x A100-80GB; T4 x 100"). An item is
// "MODEL x COUNT", "COUNT x MODEL" or "COUNTx MODEL" ('x', 'X' or '×'):
// COUNT nodes either way, of the model's gpu.TypicalServer each (GPUs, CPU
// and memory per node). MODEL is a catalog name (case aside) or NVIDIA's
// product label as gpu-feature-discovery publishes it
// ("NVIDIA-A100-SXM4-80GB", "Tesla-T4"; gpu.FromLabel), or AMD's node
// labeller's amd.com/gpu.product-name ("AMD_Instinct_MI300X"). A model without a
// typical server (H100-NVL, H20, GH200) must be given in a cluster YAML
// file. Errors quote the item and name the field.
func ParseNodeSpec(spec string) ([]NodeGroup, error) {
	var out []NodeGroup
	for i, item := range strings.Split(strings.ReplaceAll(spec, ";", ","), ",") {
		g, err := parseSpecItem(i+1, item)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, checkGroups("node spec", out)
}

// parseSpecItem reads item number i of a node spec.
func parseSpecItem(i int, item string) (NodeGroup, error) {
	q := Quote(strings.TrimSpace(item))
	name, count, ok := splitSpecItem(strings.Fields(item))
	if !ok {
		return NodeGroup{}, fmt.Errorf("node spec item %d %s: want MODEL x COUNT or COUNT x MODEL", i, q)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > maxGroupNodes {
		return NodeGroup{}, fmt.Errorf("node spec item %d %s: count %s is not an integer in [1, %d]", i, q, Quote(count), maxGroupNodes)
	}
	if gpu.IsMIGLabel(name) {
		return NodeGroup{}, fmt.Errorf("node spec item %d %s: model %s is a MIG device; describe MIG layouts in a cluster YAML file", i, q, Quote(name))
	}
	m, known := gpu.Lookup(name) // catalog names without regard to case
	if !known {
		m, known = gpu.FromLabel(name)
	}
	if !known {
		return NodeGroup{}, fmt.Errorf("node spec item %d %s: model %s is not in the GPU catalog (%s)%s", i, q, Quote(name), strings.Join(gpu.Default().Names(), ", "), gpu.DidYouMean(name))
	}
	s, ok := gpu.TypicalServer(m.Name)
	if !ok {
		return NodeGroup{}, fmt.Errorf("node spec item %d %s: model %s has no typical server; describe its nodes in a cluster YAML file", i, q, Quote(name))
	}
	return NodeGroup{Name: strings.ToLower(strings.ReplaceAll(name, "_", "-")), Count: n, Model: m.Name, Vendor: m.Vendor, GPUs: s.GPUs, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, Line: i}, nil
}

// splitSpecItem returns the model and count of a node spec item's fields:
// MODEL x COUNT, COUNT x MODEL (a count is digits, a model is not only
// digits) or COUNTx MODEL; false for any other form.
func splitSpecItem(f []string) (model, count string, ok bool) {
	switch {
	case len(f) == 3 && isTimes(f[1]) && (isDigits(f[2]) || !isDigits(f[0])):
		return f[0], f[2], true
	case len(f) == 3 && isTimes(f[1]):
		return f[2], f[0], true
	case len(f) == 2 && countFirst.MatchString(f[0]):
		return f[1], strings.TrimRight(f[0], "xX×"), true
	}
	return "", "", false
}

// countFirst is a count glued to its x, as in "4x A100-80GB".
var countFirst = regexp.MustCompile(`^[0-9]+(x|X|×)$`)

func isTimes(w string) bool { return w == "x" || w == "X" || w == "×" }

func isDigits(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// IsNodeSpec reports whether a --nodes argument is a short node spec
// rather than a file name: it names no existing file and looks like one,
// well formed or not, so that ParseNodeSpec says what is wrong with it
// rather than "no such file": a "×", an item of two or more fields one of
// which is "x" or "X" ("T4 x 200", "A100 x", "A100-80GB x 0") or a count
// glued to its x ("4x A100-80GB"), or an item MODELxCOUNT without spaces
// ("A100x4"); items are joined by ',' or ';'.
func IsNodeSpec(arg string) bool {
	if !looksLikeSpec(arg) {
		return false
	}
	_, err := os.Stat(arg)
	return errors.Is(err, os.ErrNotExist)
}

// glued is a node spec item written without spaces around its x.
var glued = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*[xX][0-9]+$`)

func looksLikeSpec(arg string) bool {
	if strings.Contains(arg, "×") {
		return true
	}
	for _, item := range strings.Split(strings.ReplaceAll(arg, ";", ","), ",") {
		f := strings.Fields(item)
		for _, w := range f {
			if (w == "x" || w == "X" || countFirst.MatchString(w)) && len(f) > 1 {
				return true
			}
		}
		if len(f) == 1 && glued.MatchString(f[0]) {
			return true
		}
	}
	return false
}

// Nodes expands node groups into nodes: group g gives g.Count nodes named
// g.Name-0, g.Name-1, …, each with the group's line, and g.GPUs devices
// in g.Partition as their GPUs (partitionGPUs).
func Nodes(groups []NodeGroup) []NodeSpec {
	total := 0
	for _, g := range groups {
		total += g.Count
	}
	out := make([]NodeSpec, 0, total)
	for _, g := range groups {
		gpus, _ := partitionGPUs(g.Model, g.Partition, g.GPUs) // checked by ReadCluster
		for i := range g.Count {
			out = append(out, NodeSpec{Name: g.Name + "-" + strconv.Itoa(i), CPUMilli: g.CPUMilli, MemoryMiB: g.MemoryMiB, GPUs: gpus, Model: g.Model, Vendor: g.Vendor, Partition: g.Partition, MIG: g.MIG, MIGLine: g.MIGLine, Line: g.Line})
		}
	}
	return out
}
