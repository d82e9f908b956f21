// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/api/resource"
)

const nvidiaStyleConfig = `version: v1
flags:
  migStrategy: mixed
  plugin:
    deviceListStrategy: [envvar]
    deviceIDStrategy: uuid
    passDeviceSpecs: true
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
    - name: nvidia.com/mig-1g.10gb
      replicas: 2
gpuplane:
  replicaPolicy: pack
  ignoredXIDs: [13, 43]
`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte(nvidiaStyleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Flags.MIGStrategy != "mixed" || !c.HasListStrategy(ListEnvvar) || !c.Flags.Plugin.PassDeviceSpecs {
		t.Errorf("flags = %+v", c.Flags)
	}
	if c.Replicas("nvidia.com/gpu") != 4 || c.Replicas("nvidia.com/mig-1g.10gb") != 2 || c.Replicas("nvidia.com/mig-3g.40gb") != 1 {
		t.Errorf("replicas wrong: %+v", c.Sharing)
	}
	if got := c.SharedName("nvidia.com/gpu", 4); got != "nvidia.com/gpu.shared" {
		t.Errorf("SharedName = %s", got)
	}
	if c.Gpuplane.ReplicaPolicy != ReplicaPack || !reflect.DeepEqual(*c.Gpuplane.IgnoredXIDs, []uint64{13, 43}) {
		t.Errorf("gpuplane = %+v", c.Gpuplane)
	}
	// A single string is a one-element list; defaults fill the rest.
	c, err = ParseConfig("c.yaml", []byte("version: v1\nflags: {plugin: {deviceListStrategy: envvar}}"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([]string(c.Flags.Plugin.DeviceListStrategy), []string{"envvar"}) || c.Flags.MIGStrategy != "none" || c.Gpuplane.ReplicaPolicy != "spread" {
		t.Errorf("config = %+v", c)
	}
	if !reflect.DeepEqual(*c.Gpuplane.IgnoredXIDs, DefaultIgnoredXIDs) {
		t.Errorf("ignored XIDs = %v", *c.Gpuplane.IgnoredXIDs)
	}
	if d := DefaultConfig(); !d.HasListStrategy(ListEnvvar) || d.Flags.MIGStrategy != "none" || d.Gpuplane.MilliGPU {
		t.Errorf("default config = %+v", d)
	}
	// gpu-milli is opt-in, and goes with time-slicing of MIG devices.
	c, err = ParseConfig("c.yaml", []byte("version: v1\ngpuplane: {milliGPU: true}\nsharing: {timeSlicing: {resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]}}"))
	if err != nil || !c.Gpuplane.MilliGPU {
		t.Errorf("milliGPU: %+v, %v", c, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"version: v2", `version: "v2" is not supported`},
		{"version: v1\nflags: {migStrategy: all}", `flags.migStrategy: "all"`},
		{"version: v1\nflags: {colour: red}", `c.yaml:2: flags.colour: unknown field`},
		{"version: v1\nsharing: {mps: {resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]}}", `c.yaml:2: sharing.mps.resources[0].name: "nvidia.com/mig-1g.10gb"; MPS shares whole GPUs only`},
		{"version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 101}]}}", "sharing.mps.resources[0].replicas: 101 is out of range (1..100"},
		{"version: v1\nsharing: {mps: {renameByDefault: true}}", "sharing.mps.resources: no resources specified"},
		{"version: v1\nflags: {migStrategy: mixed}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "sharing.mps: migStrategy mixed is not supported with MPS"},
		{"version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}, timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "sharing.mps: cannot be combined with sharing.timeSlicing"},
		{"version: v1\ngpuplane: {milliGPU: true}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "gpuplane.milliGPU: cannot be combined with sharing.mps"},
		{"version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: some}]}}", `sharing.mps.resources[0].devices: devices set as "some"`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: volume-mounts}}", `flags.plugin.deviceListStrategy[0]: "volume-mounts"; want envvar`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: [envvar, volume-mounts]}}", `c.yaml:2: flags.plugin.deviceListStrategy[1]: "volume-mounts"; want envvar, cdi-annotations or cdi-cri`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: [cdi-cri, cdi-cri]}}", `flags.plugin.deviceListStrategy[1]: "cdi-cri" is listed twice`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: [envvar, envvar]}}", `deviceListStrategy[1]: "envvar" is listed twice`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: 3}}", "want a string or a list of strings"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 0}]}}", "sharing.timeSlicing.resources[0].replicas: 0 is out of range"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: amd.com/gpu, replicas: 2}]}}", `sharing.timeSlicing.resources[0].name: "amd.com/gpu"`},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}, {name: nvidia.com/gpu, replicas: 3}]}}", "resources[1].name: \"nvidia.com/gpu\" is listed twice"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: some}]}}", `devices set as "some" but the only valid string input is 'all'`},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: 0}]}}", "a count of devices must be > 0"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: [GPU-1]}]}}", "unsupported device in devices list"},
		{"version: v1\nflags: {migStrategy: all}", "c.yaml:2: flags.migStrategy: \"all\""},
		{"version: v1\ngpuplane: {replicaPolicy: random}", `gpuplane.replicaPolicy: "random"`},
		{"version: v1\nflags: {plugin: {deviceIDStrategy: index}}", `flags.plugin.deviceIDStrategy: "index" is not supported`},
		{"version: v1\ngpuplane: {ignoredXIDs: [-1]}", "c.yaml: "},
		{"version: v1\ngpuplane: {milliGPU: yes please}", "c.yaml: "},
		{"version: v1\ngpuplane: {milliGPU: true}\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "gpuplane.milliGPU: cannot be combined with time-slicing of nvidia.com/gpu"},
	} {
		_, err := ParseConfig("c.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml:") {
			t.Errorf("ParseConfig(%q) = %v, want error with %q", tc.yaml, err, tc.want)
		}
	}
}

// TestDevicesErrorNamesLine: a bad devices entry is named with its file,
// line and path, without the JSON decoder's prefixes (it was "c.yaml: error
// unmarshaling JSON: while decoding JSON: unsupported device ...").
// GPU-00000000 is not a UUID by NVIDIA's rule (replicas.go).
func TestDevicesErrorNamesLine(t *testing.T) {
	y := "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      devices: all\n    - name: nvidia.com/mig-1g.10gb\n      replicas: 2\n      devices: [GPU-00000000]\n"
	_, err := ParseConfig("c.yaml", []byte(y))
	want := `c.yaml:10: sharing.timeSlicing.resources[1].devices: unsupported device in devices list: "GPU-00000000"; want a GPU index, a MIG index (gpu:mig) or a GPU or MIG UUID`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	_, err = ParseConfig("c.yaml", []byte("version: v1\nflags: {plugin: {deviceListStrategy: 3}}"))
	if err == nil || strings.Contains(err.Error(), "JSON") {
		t.Errorf("err = %v, want it without the JSON decoder's prefixes", err)
	}
}

func TestLoadConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(nvidiaStyleConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(p); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(p + ".missing"); err == nil || !strings.Contains(err.Error(), "config.yaml.missing") {
		t.Errorf("LoadConfig(missing) = %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(nvidiaStyleConfig))
	f.Add([]byte("version: v1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// A valid configuration is complete: defaults are filled and valid.
		if c.Version != "v1" || c.Gpuplane.IgnoredXIDs == nil || len(c.Flags.Plugin.DeviceListStrategy) == 0 {
			t.Fatalf("incomplete config accepted: %+v", c)
		}
		if err := c.complete(); err != nil {
			t.Fatalf("accepted config fails validation again: %v", err)
		}
	})
}

func TestResourceNames(t *testing.T) {
	// NVIDIA's names: nvidia.com/gpu, nvidia.com/mig-<profile>, and the
	// .shared suffix of a renamed time-sliced resource.
	if got := resource.MIGResource("1g.10gb+me"); got != "nvidia.com/mig-1g.10gb+me" {
		t.Errorf("MIGResource = %q", got)
	}
	c := DefaultConfig()
	c.Sharing.TimeSlicing.RenameByDefault = true
	if got := c.SharedName(resource.GPU, 2); got != "nvidia.com/gpu.shared" {
		t.Errorf("SharedName(%s, 2) = %q", resource.GPU, got)
	}
	if got := c.SharedName(resource.MIGResource("3g.40gb"), 1); got != "nvidia.com/mig-3g.40gb" {
		t.Errorf("SharedName of an unshared MIG resource = %q", got)
	}
}

// TestTimeSlicingMediaExtensions: the media-extension profile's resource,
// as NVIDIA's plugin names it (nvidia.com/mig-1g.10gb.me,
// k8s-device-plugin internal/rm/rm.go), can be time-sliced.
func TestTimeSlicingMediaExtensions(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/mig-1g.10gb.me, replicas: 2}]}}\n"))
	if err != nil || c.Replicas("nvidia.com/mig-1g.10gb.me") != 2 {
		t.Errorf("nvidia.com/mig-1g.10gb.me: %v", err)
	}
	if _, err := ParseConfig("c.yaml", []byte("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/mig-1g.10gb.xe, replicas: 2}]}}\n")); err == nil {
		t.Error("nvidia.com/mig-1g.10gb.xe accepted")
	}
}

// NVIDIA's plugin reads a file without version as v1 (k8s-device-plugin
// api/config/v1/config.go, parseConfigFrom: `if config.Version == ""`).
func TestNVIDIAVersionDefault(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("flags:\n  migStrategy: single\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != "v1" || c.Flags.MIGStrategy != "single" {
		t.Errorf("config = %+v", c)
	}
	if c, err := ParseConfig("c.yaml", nil); err != nil || c.Version != "v1" {
		t.Errorf("empty file: %+v, %v", c, err)
	}
}

// NVIDIA's ReplicatedResources.UnmarshalJSON (api/config/v1/replicas.go)
// refuses a timeSlicing section whose resources are absent or empty with
// "no resources specified".
func TestNVIDIANoResources(t *testing.T) {
	for _, y := range []string{
		"sharing:\n  timeSlicing:\n    resources: []\n",
		"sharing:\n  timeSlicing:\n    renameByDefault: true\n",
		"sharing:\n  timeSlicing: {}\n",
	} {
		_, err := ParseConfig("c.yaml", []byte(y))
		if err == nil || err.Error() != "c.yaml:2: sharing.timeSlicing.resources: no resources specified" {
			t.Errorf("ParseConfig(%q) = %v", y, err)
		}
	}
}

// The devices forms of NVIDIA's ReplicatedDevices.UnmarshalJSON
// (api/config/v1/replicas.go): "all", a count > 0, a list of GPU indices,
// MIG indices and UUIDs; anything but all is ignored with a warning, as
// DisableResourceNamingInConfig (config.go) does.
func TestNVIDIADevices(t *testing.T) {
	for _, tc := range []struct {
		devices string
		want    Devices
	}{
		{"all", Devices{All: true}},
		{"2", Devices{Count: 2}},
		{`[0, "1", "0:1", GPU-b1028956-cfa2-0990-bf4a-5da9abb51763, MIG-b1028956-cfa2-0990-bf4a-5da9abb51763, MIG-GPU-b1028956-cfa2-0990-bf4a-5da9abb51763/3/0]`,
			Devices{List: []string{"0", "1", "0:1", "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763", "MIG-b1028956-cfa2-0990-bf4a-5da9abb51763", "MIG-GPU-b1028956-cfa2-0990-bf4a-5da9abb51763/3/0"}}},
	} {
		y := "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n      devices: " + tc.devices + "\n"
		c, err := ParseConfig("c.yaml", []byte(y))
		if err != nil {
			t.Fatalf("devices %s: %v", tc.devices, err)
		}
		r := c.Sharing.TimeSlicing.Resources[0]
		if !reflect.DeepEqual(r.Devices, tc.want) || c.Replicas(resource.GPU) != 4 {
			t.Errorf("devices %s: %+v", tc.devices, r)
		}
		var want []string
		if !tc.want.All {
			want = []string{"c.yaml:7: sharing.timeSlicing.resources[0].devices: ignored, as NVIDIA's plugin ignores it: every device of nvidia.com/gpu is shared"}
		}
		if !reflect.DeepEqual(c.Warnings, want) {
			t.Errorf("devices %s: warnings %q, want %q", tc.devices, c.Warnings, want)
		}
	}
	// rename: ignored unless it is the default <name>.shared under
	// renameByDefault (disableResoureRenaming in replicas.go).
	y := "sharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      rename: %s\n"
	for rename, warn := range map[string]bool{"nvidia.com/gpu.shared": false, "gpu-shared": true} {
		c, err := ParseConfig("c.yaml", []byte(fmt.Sprintf(y, rename)))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		if warn {
			want = []string{"c.yaml:7: sharing.timeSlicing.resources[0].rename: ignored, as NVIDIA's plugin ignores it: only renameByDefault renames"}
		}
		if !reflect.DeepEqual(c.Warnings, want) || c.SharedName(resource.GPU, 2) != "nvidia.com/gpu.shared" {
			t.Errorf("rename %s: warnings %q, want %q", rename, c.Warnings, want)
		}
	}
}

// A misplaced key is named with its full path and line, every one of
// them, with where it belongs. NVIDIA's plugin (yaml.Unmarshal in
// config.go, not strict) drops such keys silently; gpuplane refuses them.
func TestMisplacedKeys(t *testing.T) {
	y := `version: v1
flags:
  migStrategy: none
  renameByDefault: true
  failRequestsGreaterThanOne: true
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 2
      deviceListStrategy: envvar
`
	_, err := ParseConfig("c.yaml", []byte(y))
	want := "c.yaml:4: flags.renameByDefault: unknown field; it belongs under sharing.mps or sharing.timeSlicing\n" +
		"c.yaml:5: flags.failRequestsGreaterThanOne: unknown field; it belongs under sharing.mps or sharing.timeSlicing\n" +
		"c.yaml:11: sharing.timeSlicing.resources[0].deviceListStrategy: unknown field; it belongs under flags.plugin"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	_, err = ParseConfig("c.yaml", []byte("version: v1\nversion: v1\n"))
	if err == nil || err.Error() != "c.yaml:2: version: listed twice" {
		t.Errorf("duplicate key: %v", err)
	}
}

// Keys of NVIDIA's flags that gpuplane does not implement (flags.go,
// CommandLineFlags) are accepted with a warning each, so that the
// configuration of NVIDIA's Helm chart loads.
func TestNVIDIAIgnoredFlags(t *testing.T) {
	y := `version: v1
flags:
  migStrategy: mixed
  failOnInitError: true
  nvidiaDriverRoot: /
  plugin:
    passDeviceSpecs: false
    deviceListStrategy: [envvar]
    deviceIDStrategy: uuid
  gfd:
    oneshot: false
`
	c, err := ParseConfig("c.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"c.yaml:4: flags.failOnInitError: ignored: no effect in gpuplane",
		"c.yaml:5: flags.nvidiaDriverRoot: ignored: no effect in gpuplane",
		"c.yaml:11: flags.gfd.oneshot: ignored: gpuplane-node-agent's flags set how labels are written",
	}
	if !reflect.DeepEqual(c.Warnings, want) || c.Flags.MIGStrategy != "mixed" {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
}

// TestMPSConfig: NVIDIA's sharing.mps (k8s-device-plugin 0.15 and later,
// api/config/v1 sharing.go, replicas.go) is read as NVIDIA's plugin reads
// it: the strategy is mps, replicas of nvidia.com/gpu, renamed to
// nvidia.com/gpu.shared under renameByDefault, failRequestsGreaterThanOne
// true unless set false (NVIDIA's config.go), the MPS root from
// flags.mpsRoot else /run/nvidia/mps.
func TestMPSConfig(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("version: v1\nsharing:\n  mps:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.SharingStrategy() != SharingMPS || c.Replicas("nvidia.com/gpu") != 4 || c.SharedName("nvidia.com/gpu", 4) != "nvidia.com/gpu.shared" ||
		!c.FailRequestsGreaterThanOne() || c.MPSRoot() != "/run/nvidia/mps" {
		t.Errorf("strategy %s, replicas %d, name %s, failRequestsGreaterThanOne %v, root %s", c.SharingStrategy(), c.Replicas("nvidia.com/gpu"),
			c.SharedName("nvidia.com/gpu", 4), c.FailRequestsGreaterThanOne(), c.MPSRoot())
	}
	c, err = ParseConfig("c.yaml", []byte("version: v1\nflags: {mpsRoot: /var/mps}\nsharing: {mps: {failRequestsGreaterThanOne: false, resources: [{name: nvidia.com/gpu, replicas: 2, rename: x}]}}"))
	if err != nil {
		t.Fatal(err)
	}
	if c.FailRequestsGreaterThanOne() || c.SharedName("nvidia.com/gpu", 2) != "nvidia.com/gpu" || c.MPSRoot() != "/var/mps" || len(c.Warnings) != 1 ||
		!strings.Contains(c.Warnings[0], "sharing.mps.resources[0].rename: ignored") {
		t.Errorf("failRequestsGreaterThanOne %v, name %s, root %s, warnings %q", c.FailRequestsGreaterThanOne(), c.SharedName("nvidia.com/gpu", 2), c.MPSRoot(), c.Warnings)
	}
	if d := DefaultConfig(); d.SharingStrategy() != SharingNone {
		t.Errorf("default strategy %s", d.SharingStrategy())
	}
}
