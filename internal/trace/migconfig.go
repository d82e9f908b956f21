// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// MIGConfig is one named configuration of an NVIDIA mig-parted config file
// (github.com/NVIDIA/mig-parted, the format the GPU Operator's MIG manager
// reads), as ReadMIGConfig returns it: entries that each select GPUs and
// give their MIG layout.
type MIGConfig struct {
	Name    string
	Entries []MIGEntry
}

// MIGEntry is one entry of a MIG configuration.
type MIGEntry struct {
	// Line is the entry's line in its file.
	Line int
	// Models is device-filter: the catalog models (internal/gpu) the entry
	// applies to; nil: every model, empty: none. mig-parted matches PCI
	// device IDs here (0x20B510DE), which readDeviceFilter maps to catalog
	// models (gpu.ModelOfPCIDeviceID); a catalog name is taken too.
	Models []string
	// Devices are the GPU indices the entry applies to; nil: all.
	Devices []int
	// Enabled is mig-enabled; Layout the MIG devices of each selected GPU
	// (mig-devices, expanded: {"3g.40gb": 2} is [3g.40gb 3g.40gb]).
	Enabled bool
	Layout  []string
}

// migEntryKeys are the keys of a mig-parted config entry.
var migEntryKeys = []string{"device-filter", "devices", "mig-enabled", "mig-devices"}

// ReadMIGConfig reads a mig-parted config file and returns the
// configuration called name, or the only one when name is "":
//
//	version: v1
//	mig-configs:
//	  all-3g:
//	    - devices: all          # or a list of GPU indices: [0, 1]
//	      device-filter: ["0x20B210DE", "0x20B510DE"]  # optional; PCI IDs or models
//	      mig-enabled: true
//	      mig-devices:
//	        "3g.40gb": 2
//
// A GPU that no entry selects, or one selected with mig-enabled: false, is
// left whole; of entries selecting the same GPU the last one counts. The
// layouts of entries with a device-filter are checked here (gpu.PlaceMIG);
// the others when applied to a node's model (MIGConfig.Layout). The YAML is
// strict: an unknown or repeated key, a GPU index listed twice in devices,
// a missing version (as mig-parted) or a wrong type is an error naming the
// file, the line and the field.
func ReadMIGConfig(file string, r io.Reader, name string) (*MIGConfig, error) {
	top, err := yamlx.ReadMapping(file, io.LimitReader(r, 1<<20), "a mapping with keys version and mig-configs")
	if err != nil {
		return nil, err
	}
	var configs *yaml.Node
	seen, err := yamlx.Fields(file, "", top, []string{"version", "mig-configs"}, func(k, v *yaml.Node) error {
		if k.Value == "mig-configs" {
			configs = v
		} else if v.Kind != yaml.ScalarNode || v.Value != "v1" {
			return yamlx.Errorf(file, v, "version", "want v1")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if configs == nil {
		return nil, fmt.Errorf("%s:%d: field mig-configs: missing", file, top.Line)
	}
	if configs.Kind != yaml.MappingNode || len(configs.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: mig-configs: want a non-empty mapping of configuration names", file, configs.Line)
	}
	var out *MIGConfig
	var names []string
	given := map[string]bool{}
	for i := 0; i+1 < len(configs.Content); i += 2 {
		k, v := configs.Content[i], configs.Content[i+1]
		if given[k.Value] {
			return nil, fmt.Errorf("%s:%d: mig-configs.%s: given twice", file, k.Line, Quote(k.Value))
		}
		given[k.Value] = true
		chosen := k.Value == name || (name == "" && len(configs.Content) == 2)
		// Every configuration is read; only the chosen one is checked
		// (a file such as the GPU Operator's default config holds
		// all-enabled, MIG mode without instances, and layouts for GPUs of
		// every model).
		c, err := readMIGEntries(file, "mig-configs."+Quote(k.Value), k.Value, v, chosen)
		if err != nil {
			return nil, err
		}
		names = append(names, k.Value)
		if chosen {
			out = c
		}
	}
	if !seen["version"] {
		// mig-parted (api/spec/v1 Spec.UnmarshalJSON) refuses a config
		// without it: "unable to parse with missing 'version' field".
		return nil, fmt.Errorf("%s:%d: field version: missing (mig-parted wants version: v1)", file, top.Line)
	}
	if out == nil {
		sort.Strings(names)
		if name == "" {
			return nil, fmt.Errorf("%s: %d configurations (%s): name one", file, len(names), Quote(strings.Join(names, ", ")))
		}
		return nil, fmt.Errorf("%s: no configuration %s (have %s)", file, Quote(name), Quote(strings.Join(names, ", ")))
	}
	return out, nil
}

func readMIGEntries(file, path, name string, v *yaml.Node, check bool) (*MIGConfig, error) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: %s: want a non-empty list of entries", file, v.Line, path)
	}
	c := &MIGConfig{Name: name}
	for i, e := range v.Content {
		en, err := readMIGEntry(file, yamlx.Item(path, i), e, check)
		if err != nil {
			return nil, err
		}
		c.Entries = append(c.Entries, en)
	}
	return c, nil
}

// readMIGEntry reads one entry of a configuration and, with check, checks
// it.
func readMIGEntry(file, p string, e *yaml.Node, check bool) (MIGEntry, error) {
	en := MIGEntry{Line: e.Line}
	if e.Kind != yaml.MappingNode {
		return en, fmt.Errorf("%s:%d: %s: want a mapping", file, e.Line, p)
	}
	seen, err := yamlx.Fields(file, p, e, migEntryKeys, func(k, val *yaml.Node) error {
		f := yamlx.Field(p, k.Value)
		var err error
		switch k.Value {
		case "device-filter":
			en.Models, err = readDeviceFilter(file, f, val)
		case "devices":
			en.Devices, err = readDevices(file, f, val)
		case "mig-enabled":
			en.Enabled, err = yamlx.Bool(file, f, val)
		case "mig-devices":
			en.Layout, err = readMIGDevices(file, f, val)
		}
		return err
	})
	if err != nil {
		return en, err
	}
	switch {
	case !seen["devices"]:
		return en, fmt.Errorf("%s:%d: %s.devices: missing", file, e.Line, p)
	case !seen["mig-enabled"]:
		return en, fmt.Errorf("%s:%d: %s.mig-enabled: missing", file, e.Line, p)
	case !check:
		return en, nil
	case !en.Enabled && len(en.Layout) > 0:
		return en, fmt.Errorf("%s:%d: %s.mig-devices: given with mig-enabled: false", file, e.Line, p)
	case en.Enabled && len(en.Layout) == 0:
		// mig-parted accepts MIG mode without instances; such a GPU
		// serves no pod at all.
		return en, fmt.Errorf("%s:%d: %s.mig-devices: no MIG device with mig-enabled: true (a MIG-enabled GPU without instances serves no pod); give profiles such as \"3g.40gb\": 2, or mig-enabled: false", file, e.Line, p)
	}
	for _, m := range en.Models {
		if _, err := gpu.PlaceMIG(m, en.Layout); err != nil && len(en.Layout) > 0 {
			return en, fmt.Errorf("%s:%d: %s.mig-devices: %v", file, e.Line, p, err)
		}
	}
	return en, nil
}

// readDeviceFilter reads device-filter: PCI device IDs as mig-parted
// takes them ("0x20B210DE", device << 16 | vendor), or MIG-capable
// catalog models in any case (gpu.Canonical), one or a list, as the
// catalog models they name
// (gpu.ModelOfPCIDeviceID). An ID the catalog lacks (an A30, a GB200)
// matches no GPU of the simulated nodes, as in mig-parted, where an entry
// applies only to GPUs whose device ID is in its filter: an entry of only
// such IDs selects nothing (an empty, non-nil list).
func readDeviceFilter(file, f string, val *yaml.Node) ([]string, error) {
	items := []*yaml.Node{val}
	if val.Kind == yaml.SequenceNode {
		items = val.Content
	}
	models := []string{}
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return nil, yamlx.Errorf(file, val, f, "want a PCI device ID, a GPU model or a list of them")
		}
		if v := strings.ToLower(it.Value); strings.HasPrefix(v, "0x") {
			id, err := strconv.ParseUint(v[2:], 16, 32)
			if err != nil {
				return nil, yamlx.Errorf(file, it, f, "%s is not a PCI device ID (0x<device><vendor>, 8 hex digits, as 0x20B210DE)", Quote(it.Value))
			}
			if m, ok := gpu.ModelOfPCIDeviceID(uint32(id)); ok && !contains(models, m.Name) {
				models = append(models, m.Name)
			}
			continue
		}
		name := gpu.Canonical(it.Value) // any case, as every model name
		if len(gpu.MIGProfiles(name)) == 0 {
			return nil, yamlx.Errorf(file, val, f, "%s is no PCI device ID (0x20B210DE) nor MIG-capable catalog model (%s)", Quote(it.Value), strings.Join(migModels(), ", "))
		}
		if !contains(models, name) {
			models = append(models, name)
		}
	}
	return models, nil
}

// migModels returns the MIG-capable catalog models, sorted.
func migModels() []string {
	var out []string
	for _, n := range gpu.Default().Names() {
		if len(gpu.MIGProfiles(n)) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// readDevices reads devices: all (nil) or a list of distinct GPU indices.
func readDevices(file, f string, val *yaml.Node) ([]int, error) {
	if val.Kind == yaml.ScalarNode && val.Value == "all" {
		return nil, nil
	}
	if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
		return nil, yamlx.Errorf(file, val, f, "want all or a list of GPU indices")
	}
	var out []int
	for _, it := range val.Content {
		d, err := strconv.Atoi(it.Value)
		if it.Kind != yaml.ScalarNode || err != nil || d < 0 || d >= maxGPUsPerNode {
			return nil, yamlx.Errorf(file, val, f, "%s is not a GPU index 0..%d", Quote(it.Value), maxGPUsPerNode-1)
		}
		if containsInt(out, d) {
			// mig-parted takes it; it is a typo here.
			return nil, yamlx.Errorf(file, it, f, "GPU %d listed twice", d)
		}
		out = append(out, d)
	}
	return out, nil
}

// readMIGDevices reads mig-devices, profile names to counts, as the
// expanded layout.
func readMIGDevices(file, f string, val *yaml.Node) ([]string, error) {
	if val.Kind != yaml.MappingNode {
		return nil, yamlx.Errorf(file, val, f, "want a mapping of MIG profile names to counts")
	}
	var layout []string
	for m := 0; m+1 < len(val.Content); m += 2 {
		pk, pv := val.Content[m], val.Content[m+1]
		n, err := strconv.Atoi(pv.Value)
		if pv.Kind != yaml.ScalarNode || err != nil || n < 0 || n > 7 {
			return nil, yamlx.Errorf(file, pv, f+"."+Quote(pk.Value), "want a count 0..7")
		}
		for range n {
			layout = append(layout, pk.Value)
		}
	}
	return layout, nil
}

// Selects reports whether the entry applies to GPU g of a node of the
// given model (its device-filter and devices).
func (e *MIGEntry) Selects(model string, g int) bool {
	return (e.Models == nil || contains(e.Models, model)) && (e.Devices == nil || containsInt(e.Devices, g))
}

// Layout returns the MIG layout of GPU g of a node of the given model: the
// last entry selecting it, its layout if MIG-enabled (nil: left whole),
// and the entry's line (0 when no entry selects it). The layout is not
// checked against the model when the entry has no device-filter: the
// caller checks it with gpu.PlaceMIG, naming the line.
func (c *MIGConfig) Layout(model string, g int) (layout []string, line int) {
	for _, e := range c.Entries {
		if !e.Selects(model, g) {
			continue
		}
		line = e.Line
		layout = nil
		if e.Enabled {
			layout = append([]string{}, e.Layout...)
		}
	}
	return layout, line
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
