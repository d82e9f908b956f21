package v1

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// key is one key of the configuration file's schema: the keys of NVIDIA's
// device-plugin configuration (k8s-device-plugin api/config/v1: config.go,
// flags.go, sharing.go, replicas.go) and the gpuplane section.
type key struct {
	// kids are the keys of a mapping value; nil: a scalar or a list of
	// scalars.
	kids map[string]*key
	// items is the schema of each element of a list of mappings.
	items *key
	// ignored, when set, marks a key of NVIDIA's that gpuplane accepts and
	// ignores, with a warning saying why.
	ignored string
	// refused, when set, marks a key of NVIDIA's that gpuplane refuses,
	// saying why.
	refused string
}

func fields(names ...string) map[string]*key {
	m := make(map[string]*key, len(names))
	for _, n := range names {
		m[n] = &key{}
	}
	return m
}

func ignoredFields(why string, names ...string) map[string]*key {
	m := make(map[string]*key, len(names))
	for _, n := range names {
		m[n] = &key{ignored: why}
	}
	return m
}

func merge(ms ...map[string]*key) map[string]*key {
	out := map[string]*key{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const (
	noEffect   = "no effect in gpuplane"
	notApplied = "not implemented by gpuplane"
)

// schema is the whole file's schema.
var schema = &key{kids: map[string]*key{
	"version": {},
	"flags": {kids: merge(
		fields("migStrategy"),
		ignoredFields(noEffect, "failOnInitError", "nvidiaDriverRoot", "nvidiaDevRoot", "deviceDiscoveryStrategy"),
		ignoredFields(notApplied, "mpsRoot", "gdrcopyEnabled", "gdsEnabled", "mofedEnabled"),
		ignoredFields("gpuplane-node-agent's --node-feature-api flag does this", "useNodeFeatureAPI"),
		map[string]*key{
			"plugin": {kids: merge(
				fields("passDeviceSpecs", "deviceListStrategy", "deviceIDStrategy"),
				ignoredFields(noEffect, "cdiAnnotationPrefix", "nvidiaCTKPath", "containerDriverRoot"),
				ignoredFields("gpuplane.replicaPolicy sets how replicas are chosen", "sharedDevicesAllocationPolicy"),
			)},
			"gfd": {kids: ignoredFields("gpuplane-node-agent's flags set how labels are written", "oneshot", "noTimestamp", "sleepInterval", "outputFile", "machineTypeFile")},
		},
	)},
	"resources": {ignored: "NVIDIA's plugin ignores it too (\"not yet supported\")"},
	"sharing": {kids: map[string]*key{
		"timeSlicing": {kids: map[string]*key{
			"renameByDefault":            {},
			"failRequestsGreaterThanOne": {},
			"resources":                  {items: &key{kids: fields("name", "rename", "devices", "replicas")}},
		}},
		"mps": {refused: "MPS sharing is not supported; use sharing.timeSlicing"},
	}},
	"imex":     {ignored: notApplied + ": no IMEX channels are passed to containers"},
	"gpuplane": {kids: fields("replicaPolicy", "ignoredXIDs", "milliGPU")},
}}

// homes maps a key's name to the paths of the mappings that hold it, for
// the hint on a misplaced key.
var homes = func() map[string][]string {
	h := map[string][]string{}
	var walk func(prefix string, k *key)
	walk = func(prefix string, k *key) {
		if k.items != nil {
			walk(prefix+"[]", k.items)
		}
		for name, kid := range k.kids {
			h[name] = append(h[name], prefix)
			walk(join(prefix, name), kid)
		}
	}
	walk("", schema)
	for _, p := range h {
		sort.Strings(p)
	}
	return h
}()

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// checked is what checking a file's keys found: problems (errors) and
// warnings, each "line N: path: text", and the line of each path present.
type checked struct {
	problems, warnings []string
	lines              map[string]int
}

// checkKeys checks the keys of a parsed file against schema: every
// unknown or misplaced key is a problem naming its full path, with where
// it belongs when it belongs elsewhere.
func checkKeys(doc *yaml.Node) checked {
	c := checked{lines: map[string]int{}}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		c.walk("", doc.Content[0], schema)
	}
	return c
}

func (c *checked) add(to *[]string, line int, path, text string) {
	*to = append(*to, fmt.Sprintf("line %d: %s: %s", line, path, text))
}

func (c *checked) walk(path string, n *yaml.Node, k *key) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch {
	case k.kids != nil && n.Kind == yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, val := n.Content[i].Value, n.Content[i+1]
			p := join(path, name)
			line := n.Content[i].Line
			if seen[name] {
				c.add(&c.problems, line, p, "listed twice")
				continue
			}
			seen[name] = true
			kid, ok := k.kids[name]
			if !ok {
				c.add(&c.problems, line, p, "unknown field"+hint(name))
				continue
			}
			c.lines[p] = line
			switch {
			case kid.refused != "":
				c.add(&c.problems, line, p, kid.refused)
			case kid.ignored != "":
				c.add(&c.warnings, line, p, "ignored: "+kid.ignored)
			default:
				c.walk(p, val, kid)
			}
		}
	case k.items != nil && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			c.lines[p] = item.Line
			c.walk(p, item, k.items)
		}
	}
	// Any other shape is left to the decoder, which names the type wanted.
}

// hint says where a key of the schema found in the wrong place belongs.
func hint(name string) string {
	var at []string
	for _, h := range homes[name] {
		if h == "" {
			at = append(at, "the top level")
		} else {
			at = append(at, strings.ReplaceAll(h, "[]", "[*]"))
		}
	}
	if len(at) == 0 {
		return ""
	}
	return "; it belongs under " + strings.Join(at, " or ")
}
