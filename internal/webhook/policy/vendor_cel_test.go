// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// TestBadModelsCEL: the admission policy's badModels, evaluated by cel-go
// with the strings extension Kubernetes' CEL environment has
// (k8s.io/apiserver/pkg/cel/environment base.go: ext.Strings), finds the
// models that modelAllowed refuses: AMD_Instinct_MI300X and MI300X are one
// model either way round, AMD_Instinct_MI325X is not the MI300X, and an
// NVIDIA product label is compared as it is.
func TestBadModelsCEL(t *testing.T) {
	var expr string
	for _, v := range LogicVariables() {
		if v.Name == "badModels" {
			expr = v.Expression
		}
	}
	env, err := cel.NewEnv(cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)), ext.Strings())
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	picked := []string{"AMD_Instinct_MI300X", "MI300X", "AMD_Instinct_MI325X", "NVIDIA-H100-80GB-HBM3", "H100-80GB", "Gaudi3"}
	for _, c := range []struct {
		models, want []string
	}{
		{[]string{"MI300X", "NVIDIA-H100-80GB-HBM3"}, []string{"AMD_Instinct_MI325X", "H100-80GB", "Gaudi3"}},
		{[]string{"AMD_Instinct_MI300X", "Gaudi3"}, []string{"AMD_Instinct_MI325X", "NVIDIA-H100-80GB-HBM3", "H100-80GB"}},
	} {
		out, _, err := prg.Eval(map[string]any{"variables": map[string]any{"picked": picked, "models": c.models}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := out.ConvertToNative(reflect.TypeOf([]string(nil)))
		if err != nil {
			t.Fatal(err)
		}
		var goBad []string
		for _, m := range picked {
			if !modelAllowed(c.models, m) {
				goBad = append(goBad, m)
			}
		}
		if !slices.Equal(got.([]string), c.want) || !slices.Equal(goBad, c.want) {
			t.Errorf("models %q: CEL %q, Go %q, want %q", c.models, got, goBad, c.want)
		}
	}
}
