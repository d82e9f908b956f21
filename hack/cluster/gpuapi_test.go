// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

func TestCheckGPUAPI(t *testing.T) {
	chart := filepath.Join("..", "..", kube.DeviceClassTemplate)
	for _, args := range [][]string{nil, {"--gpu-api", "device-plugin"}, {"--gpu-api=dra", "--device-classes", chart}} {
		if err := checkGPUAPI(args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if err := checkGPUAPI([]string{"--gpu-api", "csi"}); err == nil || err.Error() != `--gpu-api "csi": want device-plugin or dra` {
		t.Errorf("bogus API: %v", err)
	}
	if err := checkGPUAPI([]string{"--gpu-api", "dra", "--device-classes", "nope.yaml"}); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing template: %v", err)
	}
}

// The deploy/scheduler/config.yaml profiles get default-scheduler's
// appended; a file that has it (named, or unnamed: the default) keeps
// its own.
func TestWithDefaultProfile(t *testing.T) {
	gp := map[string]any{"schedulerName": "gpuplane"}
	if got, want := withDefaultProfile([]any{gp}), []any{gp, map[string]any{"schedulerName": "default-scheduler"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := withDefaultProfile(nil); !reflect.DeepEqual(got, []any{map[string]any{"schedulerName": "default-scheduler"}}) {
		t.Errorf("no profiles: %v", got)
	}
	for _, p := range []map[string]any{{"schedulerName": "default-scheduler", "x": 1}, {"plugins": map[string]any{}}} {
		if got := withDefaultProfile([]any{gp, p}); len(got) != 2 {
			t.Errorf("%v: %v", p, got)
		}
	}
}

// The agent of a DRA node: the kubelet's plugin directories under its
// root dir, no device-plugin flags.
func TestAgentArgsDRA(t *testing.T) {
	k := &kube.KubeletNode{Name: "kubelet-0", Dir: "/n", RootDir: "/n/root", DevicePluginDir: "/n/root/device-plugins", PodResourcesSocket: "/n/root/pod-resources/kubelet.sock"}
	args := agentArgs(kubeletSpec{profile: "p", api: gpuAPIDRA}, k, "/kc")
	for _, want := range [][]string{{"--kubelet-api=dra"}, {"--dra-plugin-dir", "/n/root/plugins/gpu.nvidia.com"}, {"--dra-registrar-dir", "/n/root/plugins_registry"},
		{"--cdi-dir", "/n/cdi"}, {"--mock-mig-state", "/n/mig-state.json"}, {"--node-name", "kubelet-0"}, {"--mock-profile", "p"}} {
		i := slices.Index(args, want[0])
		if i < 0 || (len(want) == 2 && (i+1 >= len(args) || args[i+1] != want[1])) {
			t.Errorf("args %v lack %v", args, want)
		}
	}
	for _, no := range []string{"--device-plugin-dir", "--scheduler-choice"} {
		if slices.Contains(args, no) {
			t.Errorf("args %v have %s", args, no)
		}
	}
	dp := agentArgs(kubeletSpec{profile: "p", api: gpuAPIDevicePlugin}, k, "/kc")
	if !slices.Contains(dp, "--scheduler-choice") || slices.Contains(dp, "--kubelet-api=dra") {
		t.Errorf("device-plugin args %v", dp)
	}
}
