// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// isYAML reports whether a snapshot file is YAML (`kubectl get nodes,pods
// -A -o yaml`) rather than JSON: its first byte that is not white space is
// not '{'.
func isYAML(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] != '{'
}

// readYAMLList reads the List of `kubectl get nodes,pods -A -o yaml` with
// go.yaml.in/yaml/v3 and gives each item as the JSON the reader expects,
// with the line each item starts on. kubectl writes every quantity and
// label value as a string (quoted where it looks like a number), so every
// scalar becomes a JSON string but null, the booleans the reader reads
// (spec.unschedulable, a device's allowMultipleAllocations) and the one
// number (a DRA request's count): a hand-written `cpu: 8` reads as "8".
func readYAMLList(file string, data []byte) (kubeList, []int, error) {
	var list kubeList
	top, err := yamlx.Parse(file, bytes.NewReader(data))
	if err != nil {
		return list, nil, err
	}
	if top == nil {
		return list, nil, fmt.Errorf("%s:1: empty file: want the List of `kubectl get nodes,pods -A -o json` (or -o yaml)", file)
	}
	if top.Kind != yaml.MappingNode {
		return list, nil, fmt.Errorf("%s:%d: not a YAML mapping: want the List of `kubectl get nodes,pods -A -o json` (or -o yaml)", file, top.Line)
	}
	var lines []int
	// Aliases can make a small file expand without end (a "billion
	// laughs"): the JSON may be at most 16 times the YAML, plus 1 MiB.
	budget := 16*len(data) + 1<<20
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "kind":
			list.Kind = v.Value
		case "items":
			if v.Kind != yaml.SequenceNode {
				if v.Tag == "!!null" {
					continue
				}
				return list, nil, fmt.Errorf("%s:%d: items: not a YAML list", file, v.Line)
			}
			for _, it := range v.Content {
				var b bytes.Buffer
				if err := yamlJSON(&b, it, "", 0, budget); err != nil {
					return list, nil, fmt.Errorf("%s:%d: %v", file, it.Line, err)
				}
				budget -= b.Len()
				list.Items = append(list.Items, json.RawMessage(b.Bytes()))
				lines = append(lines, it.Line)
			}
		}
	}
	return list, lines, nil
}

// yamlJSON writes YAML node n as JSON (see readYAMLList); key is the
// mapping key n is the value of. It stops when b would pass budget bytes.
func yamlJSON(b *bytes.Buffer, n *yaml.Node, key string, depth, budget int) error {
	if depth > 100 {
		return fmt.Errorf("YAML nested more than 100 deep")
	}
	if b.Len() > budget {
		return fmt.Errorf("the YAML's aliases expand it past %d bytes", budget)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlJSON(b, n.Alias, key, depth+1, budget)
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: empty YAML document", n.Line)
		}
		return yamlJSON(b, n.Content[0], key, depth+1, budget)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key that is not a scalar", k.Line)
			}
			kj, _ := json.Marshal(k.Value)
			b.Write(kj)
			b.WriteByte(':')
			if err := yamlJSON(b, n.Content[i+1], k.Value, depth+1, budget); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := yamlJSON(b, c, "", depth+1, budget); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch {
		case n.Tag == "!!null":
			b.WriteString("null")
		case n.Tag == "!!int" && key == "count":
			var v int64
			if err := n.Decode(&v); err != nil {
				return fmt.Errorf("line %d: %v", n.Line, err)
			}
			fmt.Fprintf(b, "%d", v)
		case n.Tag == "!!bool" && (key == "unschedulable" || key == "allowMultipleAllocations"):
			var v bool
			if err := n.Decode(&v); err != nil {
				return fmt.Errorf("line %d: %v", n.Line, err)
			}
			fmt.Fprintf(b, "%t", v)
		default:
			s, _ := json.Marshal(n.Value)
			b.Write(s)
		}
	}
	return nil
}
