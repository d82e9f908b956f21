package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// NodeGroup is a group of identical nodes, from a cluster YAML file
// (ReadCluster) or a short node spec (ParseNodeSpec).
type NodeGroup struct {
	// Name is the node name prefix: the nodes are Name-0 … Name-(Count-1).
	Name  string
	Count int
	// Model is the GPU model, a gpu catalog name ("" for CPU-only nodes).
	Model string
	// GPUs per node.
	GPUs int
	// CPUMilli in millicores, MemoryMiB in MiB, per node.
	CPUMilli, MemoryMiB int64
	// MIG is the MIG layout of every GPU of the group: the profile names
	// of the MIG devices on one GPU (e.g. ["3g.40gb", "3g.40gb"]), checked
	// with gpu.PlaceMIG; nil for no MIG. The simulator uses it under
	// --sharing mig and simulates whole GPUs otherwise.
	MIG []string
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
)

// groupKeys are the keys of a node group in a cluster YAML file.
var groupKeys = []string{"name", "count", "model", "gpus", "cpu", "memoryGiB", "mig"}

// ReadCluster reads a cluster YAML file:
//
//	nodeGroups:
//	  - name: a100      # node name prefix (default: the model, lower case)
//	    count: 4        # nodes
//	    model: A100-80GB
//	    gpus: 8         # GPUs per node
//	    cpu: 128        # CPU cores per node (decimal allowed)
//	    memoryGiB: 2048 # memory per node in GiB (decimal allowed)
//	    mig: [3g.40gb, 3g.40gb]  # optional MIG layout of each GPU
//
// gpus, cpu and memoryGiB default to the model's gpu.TypicalServer, and
// are required for a model without one. The YAML is strict: an unknown or
// repeated key, a wrong type or a second document is an error. Errors name
// the file, the line and the field.
func ReadCluster(file string, r io.Reader) ([]NodeGroup, error) {
	top, err := readYAMLMapping(file, r, "a mapping with key nodeGroups")
	if err != nil {
		return nil, err
	}
	var groups *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value != "nodeGroups" {
			return nil, fmt.Errorf("%s:%d: unknown field %s (want nodeGroups)", file, k.Line, Quote(k.Value))
		}
		if groups != nil {
			return nil, fmt.Errorf("%s:%d: field nodeGroups given twice", file, k.Line)
		}
		groups = top.Content[i+1]
	}
	if groups == nil {
		return nil, fmt.Errorf("%s:%d: field nodeGroups: missing", file, top.Line)
	}
	if groups.Kind != yaml.SequenceNode || len(groups.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: field nodeGroups: want a non-empty list of node groups", file, groups.Line)
	}
	out := make([]NodeGroup, 0, len(groups.Content))
	for i, g := range groups.Content {
		ng, err := readGroup(file, fmt.Sprintf("nodeGroups[%d]", i), g)
		if err != nil {
			return nil, err
		}
		out = append(out, ng)
	}
	return out, checkGroups(file, out)
}

// readYAMLMapping reads r as one YAML document whose top is a mapping and
// returns that mapping. An empty file, a second document or another top
// is an error naming file and line; want says what the top should be.
func readYAMLMapping(file string, r io.Reader, want string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(r)
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file", file)
	} else if err != nil {
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, fmt.Errorf("%s:%d: a second YAML document; give one", file, max(extra.Line, 1))
	}
	top := &doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want %s", file, top.Line, want)
	}
	return top, nil
}

// yamlError rewrites a YAML syntax error "yaml: line N: msg" as
// "file:N: msg".
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, m, ok := strings.Cut(rest, ": "); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return fmt.Errorf("%s:%s: %s", file, n, m)
			}
		}
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// readGroup reads one node group mapping.
func readGroup(file, path string, g *yaml.Node) (NodeGroup, error) {
	ng := NodeGroup{Line: g.Line}
	if g.Kind != yaml.MappingNode {
		return ng, fmt.Errorf("%s:%d: %s: want a mapping", file, g.Line, path)
	}
	seen := map[string]bool{}
	var cpu, mem float64
	for i := 0; i+1 < len(g.Content); i += 2 {
		k, v := g.Content[i], g.Content[i+1]
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s.%s: %s", file, v.Line, path, k.Value, fmt.Sprintf(format, a...))
		}
		if seen[k.Value] {
			return ng, fmt.Errorf("%s:%d: %s.%s: given twice", file, k.Line, path, k.Value)
		}
		seen[k.Value] = true
		scalar := func() (string, error) {
			if v.Kind != yaml.ScalarNode {
				return "", bad("want a scalar")
			}
			return v.Value, nil
		}
		number := func(hi float64) (float64, error) {
			s, err := scalar()
			if err != nil {
				return 0, err
			}
			x, err := strconv.ParseFloat(s, 64)
			switch {
			case err != nil || math.IsNaN(x):
				return 0, bad("%s is not a number", Quote(s))
			case x < 0:
				return 0, bad("negative value %s", s)
			case x > hi:
				return 0, bad("value %s above %v", s, hi)
			}
			return x, nil
		}
		integer := func(hi int) (int, error) {
			s, err := scalar()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(s)
			switch {
			case err != nil:
				return 0, bad("%s is not an integer", Quote(s))
			case n < 0:
				return 0, bad("negative value %d", n)
			case n > hi:
				return 0, bad("value %d above %d", n, hi)
			}
			return n, nil
		}
		var err error
		switch k.Value {
		case "name":
			ng.Name, err = scalar()
		case "count":
			ng.Count, err = integer(maxGroupNodes)
		case "model":
			ng.Model, err = scalar()
		case "gpus":
			ng.GPUs, err = integer(maxGPUsPerNode)
		case "cpu":
			cpu, err = number(maxNodeCores)
		case "memoryGiB":
			mem, err = number(maxNodeGiB)
		case "mig":
			if v.Kind != yaml.SequenceNode {
				return ng, bad("want a list of MIG profile names")
			}
			ng.MIG = make([]string, 0, len(v.Content))
			for _, p := range v.Content {
				if p.Kind != yaml.ScalarNode {
					return ng, bad("want a list of MIG profile names")
				}
				ng.MIG = append(ng.MIG, p.Value)
			}
		default:
			return ng, fmt.Errorf("%s:%d: %s: unknown field %s (known: %s)", file, k.Line, path, Quote(k.Value), strings.Join(groupKeys, ", "))
		}
		if err != nil {
			return ng, err
		}
	}
	field := func(key string) string { return fmt.Sprintf("%s:%d: %s.%s", file, g.Line, path, key) }
	if !seen["count"] {
		return ng, fmt.Errorf("%s: missing", field("count"))
	}
	if ng.Model != "" {
		if _, ok := gpu.Default().Get(ng.Model); !ok {
			return ng, fmt.Errorf("%s: model %s is not in the GPU catalog (%s)", field("model"), Quote(ng.Model), strings.Join(gpu.Default().Names(), ", "))
		}
	}
	server, typical := gpu.TypicalServer(ng.Model)
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
		ng.CPUMilli = int64(math.Round(cpu * 1000))
	}
	if seen["memoryGiB"] {
		ng.MemoryMiB = int64(math.Round(mem * 1024))
	}
	if (ng.Model == "") != (ng.GPUs == 0) {
		return ng, fmt.Errorf("%s: %d GPUs of model %s: give a model exactly when the nodes have GPUs", field("gpus"), ng.GPUs, Quote(ng.Model))
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

// ParseNodeSpec reads a short node spec, "MODEL x COUNT" items joined by
// commas ("A100-80GB x 16, T4 x 100"): COUNT nodes of the model's
// gpu.TypicalServer each (GPUs, CPU and memory per node). A model without
// a typical server (L4, L40S) must be given in a cluster YAML file. Errors
// quote the item.
func ParseNodeSpec(spec string) ([]NodeGroup, error) {
	var out []NodeGroup
	for i, item := range strings.Split(spec, ",") {
		f := strings.Fields(item)
		if len(f) != 3 || (f[1] != "x" && f[1] != "X" && f[1] != "×") {
			return nil, fmt.Errorf("node spec item %d %s: want MODEL x COUNT", i+1, Quote(strings.TrimSpace(item)))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > maxGroupNodes {
			return nil, fmt.Errorf("node spec item %d %s: count %s is not an integer in [1, %d]", i+1, Quote(strings.TrimSpace(item)), Quote(f[2]), maxGroupNodes)
		}
		s, ok := gpu.TypicalServer(f[0])
		if !ok {
			return nil, fmt.Errorf("node spec item %d %s: model %s has no typical server; describe its nodes in a cluster YAML file", i+1, Quote(strings.TrimSpace(item)), Quote(f[0]))
		}
		out = append(out, NodeGroup{Name: strings.ToLower(f[0]), Count: n, Model: f[0], GPUs: s.GPUs, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, Line: i + 1})
	}
	return out, checkGroups("node spec", out)
}

// IsNodeSpec reports whether a --nodes argument is a short node spec
// rather than a file name: it holds " x " and names no existing file.
func IsNodeSpec(arg string) bool {
	if !strings.Contains(arg, " x ") && !strings.Contains(arg, " X ") && !strings.Contains(arg, "×") {
		return false
	}
	_, err := os.Stat(arg)
	return errors.Is(err, os.ErrNotExist)
}

// Nodes expands node groups into nodes: group g gives g.Count nodes named
// g.Name-0, g.Name-1, …, each with the group's line.
func Nodes(groups []NodeGroup) []NodeSpec {
	total := 0
	for _, g := range groups {
		total += g.Count
	}
	out := make([]NodeSpec, 0, total)
	for _, g := range groups {
		for i := range g.Count {
			out = append(out, NodeSpec{Name: g.Name + "-" + strconv.Itoa(i), CPUMilli: g.CPUMilli, MemoryMiB: g.MemoryMiB, GPUs: g.GPUs, Model: g.Model, MIG: g.MIG, Line: g.Line})
		}
	}
	return out
}
