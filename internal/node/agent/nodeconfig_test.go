// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

func TestNodeConfigCheck(t *testing.T) {
	named := []string{configv1.FallbackNamed}
	for _, tc := range []struct {
		name       string
		o          NodeConfigOptions
		configFile string
		node       string
		err        string
	}{
		{"off", NodeConfigOptions{FallbackStrategies: named}, "/etc/c.yaml", "", ""},
		{"on", NodeConfigOptions{Dir: "/etc/configs", Default: "a", FallbackStrategies: named}, "", "n1", ""},
		{"with --config", NodeConfigOptions{Dir: "/etc/configs"}, "/etc/c.yaml", "n1", "--config and --config-dir exclude each other"},
		{"no node name", NodeConfigOptions{Dir: "/etc/configs"}, "", "", "--config-dir needs --node-name"},
		{"a default without a directory", NodeConfigOptions{Default: "a"}, "", "n1", "--default-config needs --config-dir"},
		{"an unknown strategy", NodeConfigOptions{Dir: "/etc/configs", FallbackStrategies: []string{"named", "first"}}, "", "n1", `--fallback-strategies: unknown fallback strategy "first"`},
	} {
		err := tc.o.check(tc.configFile, tc.node)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// configDir writes a directory of configurations named names.
func configDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("version: v1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func labelled(name, config string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if config != "" {
		n.Labels[configv1.NodeConfigLabel] = config
	}
	return n
}

// TestUseNodeConfig: an unlabelled node takes the configuration named
// default (fallback named); labelling it default changes nothing; labelling
// it t4 stops the agent with ErrNodeConfigChanged naming both.
func TestUseNodeConfig(t *testing.T) {
	dir := configDir(t, "default", "a100-mig", "t4")
	client := fake.NewClientset(labelled("n1", ""))
	o := NodeConfigOptions{Dir: dir, FallbackStrategies: []string{configv1.FallbackNamed}}
	ctx, file, stop, err := useNodeConfig(t.Context(), o, client, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "default"); file != want {
		t.Errorf("file %q, want %q", file, want)
	}
	nodes := client.CoreV1().Nodes()
	if _, err := nodes.Update(t.Context(), labelled("n1", "default"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The fake API server replays no missed event: the change is written
	// again until the watch has seen it.
	for i := 0; ctx.Err() == nil; i++ {
		n := labelled("n1", "t4")
		n.Annotations = map[string]string{"touch": strings.Repeat("x", i%2+1)}
		if _, err := nodes.Update(t.Context(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	err = stop(nil)
	want := `the node's configuration changed: node label nvidia.com/device-plugin.config="t4" selects configuration "t4", not "default"`
	if !errors.Is(err, ErrNodeConfigChanged) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("stop: %v\nwant %s", err, want)
	}
}

// TestUseNodeConfigStops: stopped without a change, the error given is
// returned as it is.
func TestUseNodeConfigStops(t *testing.T) {
	client := fake.NewClientset(labelled("n1", "t4"))
	o := NodeConfigOptions{Dir: configDir(t, "default", "t4")}
	ctx, cancel := context.WithCancel(t.Context())
	_, file, stop, err := useNodeConfig(ctx, o, client, "n1")
	if err != nil || filepath.Base(file) != "t4" {
		t.Fatalf("%q, %v", file, err)
	}
	cancel()
	given := errors.New("served")
	if err := stop(given); err != given {
		t.Errorf("stop: %v, want %v", err, given)
	}
}

// TestUseNodeConfigRefused: a label naming no configuration, and an empty
// fallback's defaults.
func TestUseNodeConfigRefused(t *testing.T) {
	o := NodeConfigOptions{Dir: configDir(t, "a", "b"), FallbackStrategies: []string{configv1.FallbackNamed, configv1.FallbackEmpty}}
	_, _, _, err := useNodeConfig(t.Context(), o, fake.NewClientset(labelled("n1", "t4")), "n1")
	if want := "node label nvidia.com/device-plugin.config=t4: no such configuration (have a, b)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("label t4: %v, want %q", err, want)
	}
	_, file, stop, err := useNodeConfig(t.Context(), o, fake.NewClientset(labelled("n1", "")), "n1")
	if err != nil || file != "" {
		t.Errorf("unlabelled, fallback empty: %q, %v; want no file (the defaults)", file, err)
	}
	if stop != nil {
		_ = stop(nil)
	}
	if _, _, _, err := useNodeConfig(t.Context(), o, fake.NewClientset(), "n1"); err == nil || !strings.Contains(err.Error(), "--config-dir: the node's label") {
		t.Errorf("no Node: %v", err)
	}
}
