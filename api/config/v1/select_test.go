// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSelectConfig: the cases of NVIDIA's config-manager's
// updateConfigName (k8s-device-plugin cmd/config-manager/main.go), each
// worked out by hand from its order: the label's configuration, else the
// default, else the fallbacks in order.
func TestSelectConfig(t *testing.T) {
	two := []string{"a100-mig", "default"}
	for _, tc := range []struct {
		name      string
		names     []string
		label     string
		def       string
		fallbacks []string
		want      string
		err       string
	}{
		{"the label's", two, "a100-mig", "", DefaultFallbackStrategies, "a100-mig", ""},
		{"the label's over the default", two, "a100-mig", "default", nil, "a100-mig", ""},
		{"a label naming none", two, "t4", "", DefaultFallbackStrategies, "", "node label nvidia.com/device-plugin.config=t4: no such configuration (have a100-mig, default)"},
		{"the default without a label", two, "", "a100-mig", DefaultFallbackStrategies, "a100-mig", ""},
		{"a default naming none", two, "", "t4", DefaultFallbackStrategies, "", `default configuration "t4": no such configuration`},
		{"named", two, "", "", []string{FallbackNamed}, "default", ""},
		{"named without one named default", []string{"a", "b"}, "", "", []string{FallbackNamed, FallbackEmpty}, "", ""},
		{"single", []string{"only"}, "", "", []string{FallbackNamed, FallbackSingle}, "only", ""},
		{"single of two fails", []string{"a", "b"}, "", "", []string{FallbackSingle}, "", "the fallback strategies [single] select none of a, b"},
		{"empty", two, "", "", []string{FallbackEmpty, FallbackNamed}, "", ""},
		{"no fallbacks", two, "", "", nil, "", "node label nvidia.com/device-plugin.config not set"},
		{"no files, even for empty", nil, "", "", []string{FallbackEmpty}, "", "no configuration files"},
		{"an unknown strategy reached", []string{"a", "b"}, "", "", []string{"first"}, "", `unknown fallback strategy "first"`},
	} {
		got, err := SelectConfig(tc.names, tc.label, tc.def, tc.fallbacks)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want an error with %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestCheckFallbackStrategies(t *testing.T) {
	if err := CheckFallbackStrategies([]string{"named", "single", "empty"}); err != nil {
		t.Error(err)
	}
	if err := CheckFallbackStrategies([]string{"named", "Single"}); err == nil || !strings.Contains(err.Error(), `"Single"`) {
		t.Errorf("Single: %v", err)
	}
}

// TestConfigNames: a directory laid out as the kubelet mounts a ConfigMap
// (each key a link to ..data/<key>, ..data a link to a timestamped
// directory) lists its keys only.
func TestConfigNames(t *testing.T) {
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_12_06_01_00_00.123")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"default", "a100-mig"} {
		if err := os.WriteFile(filepath.Join(ts, k), []byte("version: v1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"default", "a100-mig"} {
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ConfigNames(dir)
	if err != nil || !slices.Equal(got, []string{"a100-mig", "default"}) {
		t.Errorf("ConfigNames: %v, %v; want [a100-mig default]", got, err)
	}
	if _, err := ConfigNames(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory: no error")
	}
}

// TestParseConfigMap: the GPU Operator's ConfigMap form of per-node
// configurations, given as the file, is refused in one line naming its
// keys (in their order), not as four unknown fields.
func TestParseConfigMap(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
data:
  a100-40gb: |-
    version: v1
  tesla-t4: |-
    version: v1
`)
	_, err := ParseConfig("cm.yaml", data)
	want := "cm.yaml:1: this is a ConfigMap: pass one of its keys (a100-40gb, tesla-t4) as the file, or mount it and pass its directory as --config-dir"
	if err == nil || err.Error() != want {
		t.Errorf("ParseConfig: %v\nwant %s", err, want)
	}
	// A document with a kind that is not a ConfigMap gets the schema's errors.
	if _, err := ParseConfig("x.yaml", []byte("kind: Pod\n")); err == nil || strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("kind Pod: %v", err)
	}
}
