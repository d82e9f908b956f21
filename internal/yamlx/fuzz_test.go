// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package yamlx

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzRead feeds any bytes through Parse, Fields, Int, Number, Strings,
// Check and Decode: none may panic, and every error names the file.
func FuzzRead(f *testing.F) {
	f.Add([]byte("cohort: c\nteams:\n- name: a\n  quotas: [{model: T4, nominal: 2}]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("teams: [{priority: 1.5, labels: {a: b}}]\n---\nx: 1\n"))
	f.Add([]byte("name: a\nname: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		named := func(err error) {
			if err != nil && !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
		}
		n, err := Parse("f.yaml", strings.NewReader(string(data)))
		named(err)
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			_, err := Fields("f.yaml", "", n, []string{"cohort", "teams", "name"}, func(k, v *yaml.Node) error {
				_, e1 := Int("f.yaml", k.Value, v, 0, 100)
				_, e2 := Number("f.yaml", k.Value, v, 100)
				_, e3 := Strings("f.yaml", k.Value, v, "names")
				named(e1)
				named(e2)
				named(e3)
				return nil
			})
			named(err)
		}
		c := Check("f.yaml", n, SchemaOf(teams{}, "yaml"))
		for _, p := range c.Problems {
			named(&strError{p})
		}
		var tf teams
		named(Decode("f.yaml", n, &tf))
	})
}

type strError struct{ s string }

func (e *strError) Error() string { return e.s }
