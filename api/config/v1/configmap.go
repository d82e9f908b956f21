// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// configMapError is the one-line error for a Kubernetes ConfigMap given as
// the configuration file (the GPU Operator's form of per-node
// configurations: kind ConfigMap, one configuration per key of data),
// naming its keys; nil for any other document. Without it the schema
// check would report apiVersion, kind, metadata and data as four unknown
// fields.
func configMapError(file string, doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	var kind string
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k, v := m.Content[i].Value, m.Content[i+1]; {
		case k == "kind":
			kind = v.Value
		case k == "data" && v.Kind == yaml.MappingNode:
			for j := 0; j < len(v.Content); j += 2 {
				keys = append(keys, v.Content[j].Value)
			}
		}
	}
	if kind != "ConfigMap" {
		return nil
	}
	return fmt.Errorf("%s:%d: this is a ConfigMap: pass one of its keys (%s) as the file, or mount it and pass its directory as --config-dir", file, m.Line, strings.Join(keys, ", "))
}
