// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import "testing"

// setupRows are TestReadDevicePluginSetup's rows: the labels
// gpu-feature-discovery writes for each of the device plugin's setups
// (github.com/NVIDIA/k8s-device-plugin; the rows quote
// internal/lm/resource.go baseLabeler and getProductName, and
// internal/lm/mig-strategy.go, whose own tests,
// internal/lm/mig-strategy_test.go, list the same label sets), the setup,
// one device's milli-GPU and whether MPS refuses a request of more than
// one.
var setupRows = []struct {
	name   string
	labels map[string]string
	want   DevicePluginSetup
	milli  int64
	failGT bool
}{
	// Time-slicing, default naming: getProductName appends "SHARED"
	// when isShared (replicas > 1) and not isRenamed; replicas and
	// sharing-strategy from baseLabeler. 1000 / 4 = 250.
	{"time-slicing -SHARED", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-L4-SHARED", "nvidia.com/gpu.count": "4",
		"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/mig.strategy": "none",
	}, DevicePluginSetup{Sharing: "time-slicing", Replicas: 4, MIGStrategy: "none", Product: "NVIDIA-L4"}, 250, false},
	// renameByDefault (api/config/v1/replicas.go): the product keeps
	// no "-SHARED"; the same replicas.
	{"time-slicing renamed", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing",
	}, DevicePluginSetup{Sharing: "time-slicing", Replicas: 4, Product: "NVIDIA-L4"}, 250, false},
	// gpu-feature-discovery before v0.15.0 wrote no sharing-strategy
	// (it came with MPS): replicas > 1 is time-slicing. 1000 / 3 = 333.
	{"time-slicing, no strategy label", map[string]string{
		"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.replicas": "3",
	}, DevicePluginSetup{Sharing: "time-slicing", Replicas: 3, Product: "Tesla-T4"}, 333, false},
	// MPS: api/config/v1/sharing.go SharingStrategy "mps"; named as
	// time-slicing is. 1000 / 2 = 500.
	{"mps", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-SHARED", "nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.sharing-strategy": "mps",
	}, DevicePluginSetup{Sharing: "mps", Replicas: 2, Product: "NVIDIA-A100-SXM4-40GB"}, 500, true},
	// Single MIG strategy (newMigStrategySingleLabeler ->
	// NewMIGResourceLabeler: baseLabeler(count, model, "MIG",
	// profile)): each nvidia.com/gpu device is a 1g.10gb instance,
	// 1000 milli-GPU as a device of the plugin (no replicas).
	{"mig single", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "nvidia.com/gpu.count": "7",
		"nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.strategy": "single",
	}, DevicePluginSetup{Replicas: 1, MIGStrategy: "single", Product: "NVIDIA-H100-80GB-HBM3", MIGProfile: "1g.10gb"}, 1000, false},
	// Single with its instances time-sliced 2 ways: "SHARED" is the
	// last part, after the profile (getProductName).
	{"mig single, shared", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb-SHARED", "nvidia.com/gpu.replicas": "2",
		"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/mig.strategy": "single",
	}, DevicePluginSetup{Sharing: "time-slicing", Replicas: 2, MIGStrategy: "single", Product: "NVIDIA-A100-SXM4-80GB", MIGProfile: "3g.40gb"}, 500, false},
	// newInvalidMigStrategyLabeler: product "<model>-MIG-INVALID",
	// count 0, replicas 0, sharing-strategy "".
	{"mig single, -MIG-INVALID", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-INVALID", "nvidia.com/gpu.count": "0",
		"nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.sharing-strategy": "", "nvidia.com/mig.strategy": "single",
	}, DevicePluginSetup{Replicas: 1, MIGStrategy: "single", Product: "NVIDIA-A100-SXM4-80GB", MIGInvalid: true}, 1000, false},
	// Mixed, every GPU MIG-enabled: newGPULabelers labels them
	// without sharing (NewGPUResourceLabelerWithoutSharing), so
	// getReplicas is 0 and the strategy "none"; the MIG devices are
	// nvidia.com/mig-<profile>, labelled under that name.
	{"mig mixed", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "0",
		"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.strategy": "mixed",
		"nvidia.com/mig-3g.40gb.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "nvidia.com/mig-3g.40gb.count": "4",
	}, DevicePluginSetup{Replicas: 1, MIGStrategy: "mixed", Product: "NVIDIA-A100-SXM4-80GB"}, 1000, false},
	// No sharing: replicas 1, strategy "none".
	{"none", map[string]string{
		"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none",
	}, DevicePluginSetup{Replicas: 1, Product: "Tesla-T4"}, 1000, false},
	// No labels at all (no gpu-feature-discovery).
	{"no labels", nil, DevicePluginSetup{Replicas: 1}, 1000, false},
	// Garbage replicas read as 1 (the snapshot reader refuses them).
	{"garbage replicas", map[string]string{
		"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.replicas": "four", "nvidia.com/gpu.sharing-strategy": "mps",
	}, DevicePluginSetup{Replicas: 1, Product: "Tesla-T4"}, 1000, false},
	{"negative replicas", map[string]string{"nvidia.com/gpu.replicas": "-4"}, DevicePluginSetup{Replicas: 1}, 1000, false},
	// More replicas than milli-GPU: a device is at least 1.
	{"replicas over 1000", map[string]string{"nvidia.com/gpu.replicas": "5000"}, DevicePluginSetup{Sharing: "time-slicing", Replicas: 5000}, 1, false},
	// A media-extension profile: the MIG device's name writes "+" as
	// "." (internal/resource/nvml-mig-device.go GetName), so
	// "1g.10gb+me" is "1g.10gb.me", which ParseMIGProfile reads.
	{"mig single, media extension", map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me", "nvidia.com/mig.strategy": "single",
	}, DevicePluginSetup{Replicas: 1, MIGStrategy: "single", Product: "NVIDIA-H100-80GB-HBM3", MIGProfile: "1g.10gb.me"}, 1000, false},
	// A suffix that names no profile keeps the product whole.
	{"not a profile", map[string]string{"nvidia.com/gpu.product": "ACME-X1-MIG-fast"}, DevicePluginSetup{Replicas: 1, Product: "ACME-X1-MIG-fast"}, 1000, false},
}

// TestReadDevicePluginSetup: each of setupRows' label sets reads as the
// setup, and as one device's milli-GPU (ReplicaMilli: 1000 / replicas,
// rounded down) and whether MPS refuses a request of more than one
// (api/config/v1/config.go defaults sharing.mps.failRequestsGreaterThanOne
// to true; time-slicing's default, unset, is false: internal/rm/rm.go
// ValidateRequest).
func TestReadDevicePluginSetup(t *testing.T) {
	for _, tc := range setupRows {
		got := ReadDevicePluginSetup(tc.labels)
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if m := got.ReplicaMilli(); m != tc.milli {
			t.Errorf("%s: ReplicaMilli %d, want %d", tc.name, m, tc.milli)
		}
		if f := got.FailsRequestsOverOne(); f != tc.failGT {
			t.Errorf("%s: FailsRequestsOverOne %v, want %v", tc.name, f, tc.failGT)
		}
	}
}

// TestPluginDevices: what a node's nvidia.com/gpu devices are, worked out
// by hand from NVIDIA's device plugin (github.com/NVIDIA/k8s-device-plugin
// internal/rm: each GPU served Replicas times as "<uuid>::<i>"; the single
// MIG strategy: each instance one nvidia.com/gpu device) and the MIG user
// guide's all-<profile> layouts (A100-80GB: 7 x 1g.10gb, 2 x 3g.40gb;
// A100-40GB: 3 x 2g.10gb, no 3g.40gb).
func TestPluginDevices(t *testing.T) {
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		devices int64
		want    PluginDevices
		ok      bool
	}{
		{"plain", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, 8,
			PluginDevices{GPUs: 8}, true},
		{"time-slicing x4, default naming", map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4-SHARED", "nvidia.com/gpu.replicas": "4"}, 16,
			PluginDevices{GPUs: 4, ReplicaMilli: 250, Replicas: true}, true},
		{"mps x3", map[string]string{"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.replicas": "3", "nvidia.com/gpu.sharing-strategy": "mps"}, 6,
			PluginDevices{GPUs: 2, ReplicaMilli: 333, Replicas: true}, true},
		{"single 1g.10gb", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "nvidia.com/mig.strategy": "single"}, 56,
			PluginDevices{GPUs: 8, ReplicaMilli: 142, MIGProfile: "1g.10gb"}, true},
		{"single 3g.40gb, 5 devices", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "nvidia.com/mig.strategy": "single"}, 5,
			PluginDevices{GPUs: 3, ReplicaMilli: 428, MIGProfile: "3g.40gb"}, true},
		{"single 2g.10gb on A100-40GB", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-2g.10gb", "nvidia.com/mig.strategy": "single"}, 6,
			PluginDevices{GPUs: 2, ReplicaMilli: 285, MIGProfile: "2g.10gb"}, true},
		{"single, a profile the model lacks", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-3g.40gb", "nvidia.com/mig.strategy": "single"}, 7,
			PluginDevices{GPUs: 7}, false},
		{"MIG-INVALID", map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-INVALID", "nvidia.com/mig.strategy": "single"}, 0,
			PluginDevices{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ReadDevicePluginSetup(tc.labels)
			got, ok := s.Devices(ModelOfProduct(s.Product), tc.devices)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Devices = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzDevicePluginSetup: any labels and device count read without a
// panic, and what Devices answers holds together: no more GPUs than
// devices, a device at most a whole GPU, replicas that divide into GPUs
// (GPUs x Replicas ≤ devices), an instance of a profile the catalog lays
// out on the model.
func FuzzDevicePluginSetup(f *testing.F) {
	f.Add("NVIDIA-L4-SHARED", "4", "time-slicing", "", int64(16))
	f.Add("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "1", "none", "single", int64(56))
	f.Add("NVIDIA-A100-SXM4-80GB-MIG-INVALID", "0", "", "single", int64(0))
	f.Add("Tesla-T4-SHARED", "3", "mps", "", int64(6))
	f.Fuzz(func(t *testing.T, product, replicas, sharing, strategy string, devices int64) {
		if devices < 0 || devices > 1<<20 {
			return
		}
		s := ReadDevicePluginSetup(map[string]string{"nvidia.com/gpu.product": product, "nvidia.com/gpu.replicas": replicas,
			"nvidia.com/gpu.sharing-strategy": sharing, "nvidia.com/mig.strategy": strategy})
		if s.Replicas < 1 {
			t.Fatalf("replicas %d", s.Replicas)
		}
		d, ok := s.Devices(ModelOfProduct(s.Product), devices)
		switch {
		case d.GPUs < 0 || d.GPUs > devices:
			t.Fatalf("%d GPUs of %d devices", d.GPUs, devices)
		case d.ReplicaMilli < 0 || d.ReplicaMilli > 1000:
			t.Fatalf("a device %d milli-GPU", d.ReplicaMilli)
		case d.Replicas && d.GPUs*int64(s.Replicas) > devices:
			t.Fatalf("%d GPUs x %d replicas > %d devices", d.GPUs, s.Replicas, devices)
		case ok && d.MIGProfile != "" && d.ReplicaMilli == 0:
			t.Fatalf("MIG profile %s of no share", d.MIGProfile)
		}
	})
}
