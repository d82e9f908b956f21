// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"strings"
	"testing"
	"time"
)

// --node-feature-api writes the NodeFeature object of --node-name in
// --namespace: both are needed before anything starts.
func TestCheckNodeFeatureAPI(t *testing.T) {
	o := DefaultOptions()
	o.NodeFeatureAPI, o.NodeName, o.Namespace = true, "node-1", ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--node-feature-api needs --node-name (or $NODE_NAME) and --namespace (or $POD_NAMESPACE)") {
		t.Errorf("no namespace: %v", err)
	}
	o.Namespace = "gpu-system"
	if err := o.Check(); err != nil {
		t.Errorf("node and namespace given: %v", err)
	}
}

// --scheduler-choice lists the pods bound to --node-name: it needs one.
func TestCheckSchedulerChoice(t *testing.T) {
	o := DefaultOptions()
	o.SchedulerChoice, o.NodeName = true, ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--scheduler-choice needs --node-name (or $NODE_NAME)") {
		t.Errorf("no node name: %v", err)
	}
	o.NodeName = "node-1"
	if err := o.Check(); err != nil {
		t.Errorf("node name given: %v", err)
	}
}

// The flags only the DRA plugin reads are refused without
// --kubelet-api=dra, a toolkit spec without --cdi-dir (nothing would read
// it) and a negative rediscovery interval, each naming the flag.
func TestCheckDRAFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"shares, device plugin", func(o *Options) { o.DRA.Shares = true }, "--cdi-toolkit-spec, --dra-shares and --dra-consumable-shares need --kubelet-api=dra"},
		{"toolkit spec, device plugin", func(o *Options) { o.DRA.CDIDir, o.DRA.ToolkitSpec = "/var/run/cdi", "/var/run/cdi/nvidia.yaml" }, "--cdi-toolkit-spec, --dra-shares and --dra-consumable-shares need --kubelet-api=dra"},
		{"toolkit spec alone", func(o *Options) { o.KubeletAPI = KubeletAPIDRA; o.DRA.ToolkitSpec = "/var/run/cdi/nvidia.yaml" }, "--cdi-toolkit-spec needs --cdi-dir"},
		{"negative interval", func(o *Options) { o.KubeletAPI = KubeletAPIDRA; o.DRA.RediscoverInterval = -time.Second }, "--dra-rediscover-interval -1s: must not be negative"},
		{"dra, all set", func(o *Options) {
			o.KubeletAPI, o.DRA.CDIDir, o.DRA.ToolkitSpec, o.DRA.Shares, o.DRA.RediscoverInterval = KubeletAPIDRA, "/var/run/cdi", "/var/run/cdi/nvidia.yaml", true, 0
		}, ""},
	} {
		o := DefaultOptions()
		o.NodeName = "node-1"
		tc.edit(&o)
		err := o.Check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
