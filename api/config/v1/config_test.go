package v1

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const nvidiaStyleConfig = `version: v1
flags:
  migStrategy: mixed
  plugin:
    deviceListStrategy: [envvar, cdi-cri]
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
	if c.Flags.MIGStrategy != "mixed" || !c.HasListStrategy(ListCDICRI) || c.HasListStrategy(ListCDIAnnotations) || !c.Flags.Plugin.PassDeviceSpecs {
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
	c, err = ParseConfig("c.yaml", []byte("version: v1\nflags: {plugin: {deviceListStrategy: cdi-annotations}}"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual([]string(c.Flags.Plugin.DeviceListStrategy), []string{"cdi-annotations"}) || c.Flags.MIGStrategy != "none" || c.Gpuplane.ReplicaPolicy != "spread" {
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
		{"flags: {}", `version: "" is not supported`},
		{"version: v1\nflags: {migStrategy: all}", `flags.migStrategy: "all"`},
		{"version: v1\nflags: {failOnInitError: true}", `unknown field "failOnInitError"`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: volume-mounts}}", `flags.plugin.deviceListStrategy[0]: "volume-mounts"`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: [envvar, envvar]}}", `deviceListStrategy[1]: "envvar" is listed twice`},
		{"version: v1\nflags: {plugin: {deviceListStrategy: 3}}", "want a string or a list of strings"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 0}]}}", "sharing.timeSlicing.resources[0].replicas: 0 is out of range"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: amd.com/gpu, replicas: 2}]}}", `sharing.timeSlicing.resources[0].name: "amd.com/gpu"`},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}, {name: nvidia.com/gpu, replicas: 3}]}}", "resources[1].name: \"nvidia.com/gpu\" is listed twice"},
		{"version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: all}]}}", `unknown field "devices"`},
		{"version: v1\ngpuplane: {replicaPolicy: random}", `gpuplane.replicaPolicy: "random"`},
		{"version: v1\nflags: {plugin: {deviceIDStrategy: index}}", `flags.plugin.deviceIDStrategy: "index" is not supported`},
		{"version: v1\ngpuplane: {ignoredXIDs: [-1]}", "c.yaml: "},
		{"version: v1\ngpuplane: {milliGPU: yes please}", "c.yaml: "},
		{"version: v1\ngpuplane: {milliGPU: true}\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}", "gpuplane.milliGPU: cannot be combined with time-slicing of nvidia.com/gpu"},
	} {
		_, err := ParseConfig("c.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml: ") {
			t.Errorf("ParseConfig(%q) = %v, want error with %q", tc.yaml, err, tc.want)
		}
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
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
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
	if got := MIGResource("1g.10gb+me"); got != "nvidia.com/mig-1g.10gb+me" {
		t.Errorf("MIGResource = %q", got)
	}
	c := DefaultConfig()
	c.Sharing.TimeSlicing.RenameByDefault = true
	if got := c.SharedName(ResourceGPU, 2); got != "nvidia.com/gpu.shared" {
		t.Errorf("SharedName(%s, 2) = %q", ResourceGPU, got)
	}
	if got := c.SharedName(MIGResource("3g.40gb"), 1); got != "nvidia.com/mig-3g.40gb" {
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
