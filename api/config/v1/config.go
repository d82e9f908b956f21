// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package v1 is the node agent's configuration, version v1: the one home of
// the configuration file's schema, its defaults and validation, the MIG
// strategy names, and the environment variable through which a share of
// one GPU reaches the container. The device plugin, the feature labels,
// the exporter and the scheduler all read it. The resource names and
// annotations they share live in api/resource.
//
// The schema is the subset of NVIDIA's k8s-device-plugin configuration
// (github.com/NVIDIA/k8s-device-plugin, api/config/v1) that gpuplane
// implements, plus a gpuplane section. A file written for NVIDIA's plugin is
// read as NVIDIA's plugin reads it (version defaults to v1; a timeSlicing
// section needs resources; devices and rename are accepted and ignored as
// NVIDIA ignores them), except that a key NVIDIA's plugin has but gpuplane
// does not implement is ignored with a warning (Config.Warnings), and an
// unknown or misplaced key, which NVIDIA's plugin silently drops, is an
// error naming its line, its full path and where it belongs.
package v1

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// Version is the configuration file version this package reads.
const Version = "v1"

// The environment variable through which the node agent passes a pod's
// share of one GPU to its container. The resource names and the
// annotations that carry gpuplane-scheduler's choice to the node agent live
// in api/resource.
const (
	// EnvGPUShare is the environment variable that passes a share of one
	// GPU (resource.GPUMilli) to the container, in milli-GPU, e.g. "300".
	// gpuplane does not enforce it: like time-slicing, a share is a
	// scheduling contract the workload keeps.
	EnvGPUShare = "GPUPLANE_GPU_SHARE"
)

// MIG strategies, as NVIDIA's device plugin names them.
const (
	// MIGStrategyNone exposes whole GPUs as nvidia.com/gpu, MIG or not.
	MIGStrategyNone = "none"
	// MIGStrategySingle exposes the MIG devices as nvidia.com/gpu; every
	// GPU must be MIG-enabled with one and the same profile everywhere (or
	// none may be MIG-enabled, and whole GPUs are exposed).
	MIGStrategySingle = "single"
	// MIGStrategyMixed exposes whole GPUs as nvidia.com/gpu and each MIG
	// profile as nvidia.com/mig-<profile>.
	MIGStrategyMixed = "mixed"
)

// Device list strategies (flags.plugin.deviceListStrategy), NVIDIA's:
// how Allocate names the devices to the container runtime.
const (
	// ListEnvvar sets NVIDIA_VISIBLE_DEVICES to the device UUIDs, for the
	// NVIDIA container runtime (the default).
	ListEnvvar = "envvar"
	// ListCDIAnnotations names the CDI devices nvidia.com/gpu=<UUID> in a
	// container annotation, cdi.k8s.io/nvidia-device-plugin_<response ID>.
	ListCDIAnnotations = "cdi-annotations"
	// ListCDICRI names them in the CRI's CDIDevices field (Kubernetes 1.28
	// and later). Both CDI strategies need the node's CDI spec with those
	// names: NVIDIA's container toolkit's, nvidia-ctk cdi generate
	// --device-name-strategy=uuid (NVIDIA's plugin generates its own,
	// kind k8s.device-plugin.nvidia.com/gpu; gpuplane names the toolkit's
	// devices, as its DRA driver does).
	ListCDICRI = "cdi-cri"
)

// Replica policies (gpuplane.replicaPolicy): how GetPreferredAllocation
// picks time-slicing replicas.
const (
	// ReplicaSpread prefers replicas on different, less used GPUs.
	ReplicaSpread = "spread"
	// ReplicaPack prefers replicas on the same, most used GPUs.
	ReplicaPack = "pack"
)

// DefaultIgnoredXIDs is the default of gpuplane.ignoredXIDs: the XIDs that
// do not make a GPU unhealthy because applications cause them (13 graphics
// engine exception, 31 GPU memory page fault, 43 GPU stopped processing, 45
// preemptive cleanup, 68 video processor exception, 109 context switch
// timeout). It is NVIDIA's device plugin's list of application XIDs
// (internal/rm/health.go); internal/node/health applies it.
var DefaultIgnoredXIDs = []uint64{13, 31, 43, 45, 68, 109}

// Config is the device-plugin configuration file: the subset of NVIDIA's
// device-plugin config (version v1) that gpuplane implements, plus a
// gpuplane section. Unknown fields are rejected.
type Config struct {
	// Version must be Version ("v1"); empty (absent) means v1, as in
	// NVIDIA's plugin (api/config/v1/config.go, parseConfigFrom).
	Version string  `json:"version"`
	Flags   Flags   `json:"flags,omitempty"`
	Sharing Sharing `json:"sharing,omitempty"`
	// Gpuplane holds gpuplane's own settings.
	Gpuplane Extensions `json:"gpuplane,omitempty"`
	// Warnings are what ParseConfig accepted but ignores, each "file:line:
	// path: text", for the caller to log.
	Warnings []string `json:"-"`
}

// Flags is NVIDIA's flags section.
type Flags struct {
	// MIGStrategy is none (default), single or mixed.
	MIGStrategy string `json:"migStrategy,omitempty"`
	// MPSRoot is the host directory of the MPS daemons' directories under
	// sharing.mps (default DefaultMPSRoot), NVIDIA's --mps-root.
	MPSRoot string      `json:"mpsRoot,omitempty"`
	Plugin  PluginFlags `json:"plugin,omitempty"`
}

// PluginFlags is NVIDIA's flags.plugin section.
type PluginFlags struct {
	// DeviceListStrategy is envvar (the default), cdi-annotations or
	// cdi-cri, as a single string or a list.
	DeviceListStrategy StringList `json:"deviceListStrategy,omitempty"`
	// PassDeviceSpecs adds the device nodes (/dev/nvidia*) to Allocate.
	PassDeviceSpecs bool `json:"passDeviceSpecs,omitempty"`
	// DeviceIDStrategy is accepted for compatibility; only uuid (the
	// default) is supported: device IDs are UUIDs, never indices.
	DeviceIDStrategy string `json:"deviceIDStrategy,omitempty"`
}

// Sharing is NVIDIA's sharing section.
type Sharing struct {
	TimeSlicing TimeSlicing `json:"timeSlicing,omitempty"`
	// MPS shares GPUs through MPS (mps.go); nil: not set.
	MPS *MPS `json:"mps,omitempty"`
}

// TimeSlicing shares each device of a resource as Replicas devices.
type TimeSlicing struct {
	// RenameByDefault renames each shared resource to <name>.shared.
	RenameByDefault bool `json:"renameByDefault,omitempty"`
	// FailRequestsGreaterThanOne refuses Allocate requests for more than one
	// replica of a shared resource.
	FailRequestsGreaterThanOne bool `json:"failRequestsGreaterThanOne,omitempty"`
	// Resources lists the shared resources.
	Resources []SharedResource `json:"resources,omitempty"`
}

// SharedResource is one time-sliced resource.
type SharedResource struct {
	// Name is nvidia.com/gpu or nvidia.com/mig-<profile>.
	Name string `json:"name"`
	// Rename is accepted for compatibility and ignored unless it is the
	// default <name>.shared, as NVIDIA's plugin does
	// (DisableResourceNamingInConfig).
	Rename string `json:"rename,omitempty"`
	// Devices is accepted in NVIDIA's forms ("all", a count, a list of
	// GPU indices, MIG indices "gpu:mig" or UUIDs); as in NVIDIA's plugin,
	// anything but all is ignored with a warning: every device is shared.
	Devices Devices `json:"devices,omitempty"`
	// Replicas is the number of replicas of each device (1..1024).
	Replicas int `json:"replicas"`
}

// Devices is NVIDIA's devices field of a shared resource (replicas.go,
// ReplicatedDevices): all, a count, or a list of device references. The
// zero value, an absent field, means all.
type Devices struct {
	All   bool
	Count int
	List  []string
}

// IsAll reports whether d selects every device.
func (d Devices) IsAll() bool { return d.All || (d.Count == 0 && d.List == nil) }

// MarshalJSON writes d in the form it was read in.
func (d Devices) MarshalJSON() ([]byte, error) {
	switch {
	case d.Count > 0:
		return json.Marshal(d.Count)
	case d.List != nil:
		return json.Marshal(d.List)
	}
	return json.Marshal("all")
}

// UnmarshalJSON accepts NVIDIA's forms, with NVIDIA's errors.
func (d *Devices) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		if str != "all" {
			return fmt.Errorf("devices set as %q but the only valid string input is 'all'", str)
		}
		*d = Devices{All: true}
		return nil
	}
	var count int
	if json.Unmarshal(b, &count) == nil {
		if count <= 0 {
			return fmt.Errorf("devices set as %d but a count of devices must be > 0", count)
		}
		*d = Devices{Count: count}
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(b, &items) != nil {
		return fmt.Errorf("unrecognized type for devices spec: %s", b)
	}
	list := make([]string, 0, len(items))
	for _, it := range items {
		var index uint64
		if json.Unmarshal(it, &index) == nil {
			list = append(list, strconv.FormatUint(index, 10))
			continue
		}
		var s string
		if json.Unmarshal(it, &s) != nil || !deviceRef.MatchString(s) {
			return fmt.Errorf("unsupported device in devices list: %s; want a GPU index, a MIG index (gpu:mig) or a GPU or MIG UUID", it)
		}
		list = append(list, s)
	}
	*d = Devices{List: list}
	return nil
}

// deviceRef matches NVIDIA's device references (replicas.go,
// ReplicatedDeviceRef): a GPU index, a MIG index "gpu:mig", a GPU UUID, or
// a MIG UUID in the current or the legacy MIG-GPU-<uuid>/<gi>/<ci> form.
var deviceRef = regexp.MustCompile(`^([0-9]+|[0-9]+:[0-9]+|(GPU|MIG)-` + uuidRE + `|MIG-GPU-` + uuidRE + `/[0-9]+/[0-9]+)$`)

const uuidRE = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

// Extensions is gpuplane's own configuration.
type Extensions struct {
	// ReplicaPolicy is spread (default) or pack.
	ReplicaPolicy string `json:"replicaPolicy,omitempty"`
	// IgnoredXIDs, when given, replaces DefaultIgnoredXIDs.
	IgnoredXIDs *[]uint64 `json:"ignoredXIDs,omitempty"`
	// MilliGPU serves resource.GPUMilli (gpuplane.io/gpu-milli): 1000
	// devices per GPU with MIG disabled, one per milli-GPU, for shares of
	// one GPU placed by gpuplane-scheduler. It cannot be combined with
	// time-slicing of nvidia.com/gpu.
	MilliGPU bool `json:"milliGPU,omitempty"`
}

// StringList is a YAML string or list of strings.
type StringList []string

// UnmarshalJSON accepts "a" or ["a", "b"].
func (s *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*s = many
	return nil
}

// DefaultConfig returns the configuration used without a file: MIG strategy
// none, envvar device lists, no sharing.
func DefaultConfig() *Config {
	c := &Config{Version: Version}
	if err := c.complete(); err != nil {
		panic(err) // the defaults are valid
	}
	return c
}

// LoadConfig reads and validates a configuration file. Errors name the file
// and the field.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig parses and validates a configuration file's content, filling
// in defaults; file is used in errors and warnings. Every unknown or
// misplaced key is reported at once, as "file:line: path: unknown field;
// it belongs under ..." lines.
func ParseConfig(file string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlx.Syntax(file, err)
	}
	if err := configMapError(file, &doc); err != nil {
		return nil, err
	}
	chk := yamlx.Check(file, &doc, schema)
	if err := chk.Err(); err != nil {
		return nil, err
	}
	if err := checkDevices(file, data, chk.Lines); err != nil {
		return nil, err
	}
	var c Config
	if err := sigsyaml.Unmarshal(data, &c); err != nil {
		return nil, yamlError(file, err)
	}
	// NVIDIA's ReplicatedResources.UnmarshalJSON (replicas.go): a
	// timeSlicing or mps section without resources is refused.
	if line, ok := chk.Lines["sharing.timeSlicing"]; ok && len(c.Sharing.TimeSlicing.Resources) == 0 {
		return nil, fmt.Errorf("%s:%d: sharing.timeSlicing.resources: no resources specified", file, line)
	}
	if _, ok := chk.Lines["sharing.mps"]; ok && c.Sharing.MPS == nil {
		c.Sharing.MPS = &MPS{} // an empty section: refused by completeMPS
	}
	if err := c.complete(); err != nil {
		return nil, chk.Locate(file, err)
	}
	shared, section := c.SharedResources()
	for i, r := range shared {
		f := fmt.Sprintf("%s.resources[%d]", section, i)
		if !r.Devices.IsAll() {
			chk.Warnings = append(chk.Warnings, fmt.Sprintf("%s:%d: %s.devices: ignored, as NVIDIA's plugin ignores it: every device of %s is shared", file, chk.Lines[f+".devices"], f, r.Name))
		}
		if r.Rename != "" && !(c.RenameByDefault() && r.Rename == r.Name+resource.SharedSuffix) {
			chk.Warnings = append(chk.Warnings, fmt.Sprintf("%s:%d: %s.rename: ignored, as NVIDIA's plugin ignores it: only renameByDefault renames", file, chk.Lines[f+".rename"], f))
		}
	}
	c.Warnings = chk.Warnings
	return &c, nil
}

// isMIGResource reports whether name is the resource name of a MIG
// profile, e.g. nvidia.com/mig-1g.10gb or nvidia.com/mig-1g.10gb.me (the
// media-extension profile 1g.10gb+me as NVIDIA's plugin advertises it,
// device.MIGResourceProfile); the "+me" spelling is accepted too. The
// profile is read by apidra.ParseMIGProfile: a GPU instance of 1..8
// compute slices whose compute instance spans it, without attributes
// other than +me.
func isMIGResource(name string) bool {
	profile, ok := strings.CutPrefix(name, resource.MIGPrefix)
	if !ok {
		return false
	}
	p, err := apidra.ParseMIGProfile(profile)
	return err == nil && p.ComputeInstanceSlices == 0 && p.Attributes == ""
}

// complete validates c and fills in defaults.
func (c *Config) complete() error {
	if c.Version == "" {
		c.Version = Version
	}
	if c.Version != Version {
		return fmt.Errorf("version: %q is not supported; want %s", c.Version, Version)
	}
	switch c.Flags.MIGStrategy {
	case "":
		c.Flags.MIGStrategy = MIGStrategyNone
	case MIGStrategyNone, MIGStrategySingle, MIGStrategyMixed:
	default:
		return fmt.Errorf("flags.migStrategy: %q; want none, single or mixed", c.Flags.MIGStrategy)
	}
	if len(c.Flags.Plugin.DeviceListStrategy) == 0 {
		c.Flags.Plugin.DeviceListStrategy = StringList{ListEnvvar}
	}
	seen := map[string]bool{}
	for i, s := range c.Flags.Plugin.DeviceListStrategy {
		switch s {
		case ListEnvvar, ListCDIAnnotations, ListCDICRI:
		default:
			return fmt.Errorf("flags.plugin.deviceListStrategy[%d]: %q; want envvar, cdi-annotations or cdi-cri", i, s)
		}
		if seen[s] {
			return fmt.Errorf("flags.plugin.deviceListStrategy[%d]: %q is listed twice", i, s)
		}
		seen[s] = true
	}
	switch c.Flags.Plugin.DeviceIDStrategy {
	case "":
		c.Flags.Plugin.DeviceIDStrategy = "uuid"
	case "uuid":
	default:
		return fmt.Errorf("flags.plugin.deviceIDStrategy: %q is not supported; device IDs are UUIDs (uuid)", c.Flags.Plugin.DeviceIDStrategy)
	}
	names := map[string]bool{}
	for i, r := range c.Sharing.TimeSlicing.Resources {
		f := fmt.Sprintf("sharing.timeSlicing.resources[%d]", i)
		if r.Name != resource.GPU && !isMIGResource(r.Name) {
			return fmt.Errorf("%s.name: %q; want nvidia.com/gpu or nvidia.com/mig-<profile>", f, r.Name)
		}
		if names[r.Name] {
			return fmt.Errorf("%s.name: %q is listed twice", f, r.Name)
		}
		names[r.Name] = true
		if r.Replicas < 1 || r.Replicas > 1024 {
			return fmt.Errorf("%s.replicas: %d is out of range (1..1024)", f, r.Replicas)
		}
	}
	if err := c.completeMPS(); err != nil {
		return err
	}
	switch c.Gpuplane.ReplicaPolicy {
	case "":
		c.Gpuplane.ReplicaPolicy = ReplicaSpread
	case ReplicaSpread, ReplicaPack:
	default:
		return fmt.Errorf("gpuplane.replicaPolicy: %q; want spread or pack", c.Gpuplane.ReplicaPolicy)
	}
	if c.Gpuplane.MilliGPU && c.Replicas(resource.GPU) > 1 {
		return fmt.Errorf("gpuplane.milliGPU: cannot be combined with time-slicing of %s (sharing.timeSlicing.resources): both would share the same GPUs under two counts", resource.GPU)
	}
	if c.Gpuplane.IgnoredXIDs == nil {
		x := append([]uint64(nil), DefaultIgnoredXIDs...)
		c.Gpuplane.IgnoredXIDs = &x
	}
	return nil
}

// Replicas returns the replicas of the named resource (as NVIDIA names it
// before any rename) under the active sharing strategy, time-slicing or
// MPS, 1 when it is not shared.
func (c *Config) Replicas(name string) int {
	shared, _ := c.SharedResources()
	for _, r := range shared {
		if r.Name == name {
			return r.Replicas
		}
	}
	return 1
}

// HasListStrategy reports whether s is one of the device list strategies.
func (c *Config) HasListStrategy(s string) bool {
	for _, x := range c.Flags.Plugin.DeviceListStrategy {
		if x == s {
			return true
		}
	}
	return false
}

// SharedName returns the advertised name of resource name with replicas
// replicas (time-slicing or MPS): <name>.shared under the strategy's
// renameByDefault, else name.
func (c *Config) SharedName(name string, replicas int) string {
	if replicas > 1 && c.RenameByDefault() && !strings.HasSuffix(name, resource.SharedSuffix) {
		return name + resource.SharedSuffix
	}
	return name
}

// checkDevices decodes each time-slicing resource's devices on its own, so
// that a bad one is named with its line and path (the decoder of the whole
// file says neither). A file of another shape is left to that decoder.
func checkDevices(file string, data []byte, lines map[string]int) error {
	type section struct {
		Resources []struct {
			Devices json.RawMessage `json:"devices"`
		} `json:"resources"`
	}
	var raw struct {
		Sharing struct {
			TimeSlicing section `json:"timeSlicing"`
			MPS         section `json:"mps"`
		} `json:"sharing"`
	}
	if sigsyaml.Unmarshal(data, &raw) != nil {
		return nil
	}
	for name, sec := range map[string]section{"timeSlicing": raw.Sharing.TimeSlicing, "mps": raw.Sharing.MPS} {
		for i, r := range sec.Resources {
			if len(r.Devices) == 0 {
				continue
			}
			var d Devices
			if err := d.UnmarshalJSON(r.Devices); err != nil {
				f := fmt.Sprintf("sharing.%s.resources[%d].devices", name, i)
				return fmt.Errorf("%s:%d: %s: %w", file, lines[f], f, err)
			}
		}
	}
	return nil
}

// yamlError names the file in a sigs.k8s.io/yaml decoding error and drops
// the JSON-decoder prefixes ("error unmarshaling JSON: while decoding JSON:
// json: "), leaving e.g. `unknown field "colour"` or the YAML syntax error.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: ")
	msg = strings.TrimPrefix(msg, "while decoding JSON: ")
	if i := strings.LastIndex(msg, "json: "); i >= 0 {
		msg = msg[i+len("json: "):]
	}
	return fmt.Errorf("%s: %s", file, msg)
}
