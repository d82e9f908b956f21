// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// testNode discovers a built-in mock profile.
func testNode(t testing.TB, profile string) device.Node {
	t.Helper()
	n, err := mock.Discover(profile)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testConfig(t testing.TB, yaml string) *configv1.Config {
	t.Helper()
	c, err := configv1.ParseConfig("test.yaml", []byte("version: v1\n"+yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testPlugin returns the plugin of the named resource.
func testPlugin(t testing.TB, n *device.Node, c *configv1.Config, resource string) *Plugin {
	t.Helper()
	res, err := BuildResources(*n, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res {
		if res[i].Name == resource {
			return NewPlugin(n, &res[i], c, NewHealth(*n, *c.Gpuplane.IgnoredXIDs), t.TempDir())
		}
	}
	t.Fatalf("no resource %s", resource)
	return nil
}

// ids maps GPU indices (and replica numbers with "::") to device IDs.
func gpuIDs(n *device.Node, idx ...int) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = n.GPUs[x].UUID
	}
	return out
}
