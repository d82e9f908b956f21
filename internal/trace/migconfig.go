package trace

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/gpu"
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
	// applies to; nil: every model. mig-parted matches PCI device IDs
	// here (0x20B510DE); gpuplane's nodes carry catalog names instead.
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
//	      device-filter: A100-80GB  # optional; a model or a list of them
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
	top, err := readYAMLMapping(file, io.LimitReader(r, 1<<20), "a mapping with keys version and mig-configs")
	if err != nil {
		return nil, err
	}
	var configs *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if seen[k.Value] {
			return nil, fmt.Errorf("%s:%d: field %s given twice", file, k.Line, Quote(k.Value))
		}
		seen[k.Value] = true
		switch k.Value {
		case "version":
			if v.Kind != yaml.ScalarNode || v.Value != "v1" {
				return nil, fmt.Errorf("%s:%d: version: want v1", file, v.Line)
			}
		case "mig-configs":
			configs = v
		default:
			return nil, fmt.Errorf("%s:%d: unknown field %s (want version, mig-configs)", file, k.Line, Quote(k.Value))
		}
	}
	if configs == nil {
		return nil, fmt.Errorf("%s:%d: field mig-configs: missing", file, top.Line)
	}
	if configs.Kind != yaml.MappingNode || len(configs.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: mig-configs: want a non-empty mapping of configuration names", file, configs.Line)
	}
	var out *MIGConfig
	var names []string
	for i := 0; i+1 < len(configs.Content); i += 2 {
		k, v := configs.Content[i], configs.Content[i+1]
		if seen["mig-configs."+k.Value] {
			return nil, fmt.Errorf("%s:%d: mig-configs.%s: given twice", file, k.Line, Quote(k.Value))
		}
		seen["mig-configs."+k.Value] = true
		c, err := readMIGEntries(file, "mig-configs."+Quote(k.Value), k.Value, v)
		if err != nil {
			return nil, err
		}
		names = append(names, k.Value)
		if k.Value == name || (name == "" && len(configs.Content) == 2) {
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

func readMIGEntries(file, path, name string, v *yaml.Node) (*MIGConfig, error) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: %s: want a non-empty list of entries", file, v.Line, path)
	}
	c := &MIGConfig{Name: name}
	for i, e := range v.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if e.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: %s: want a mapping", file, e.Line, p)
		}
		en := MIGEntry{Line: e.Line}
		seen := map[string]bool{}
		var devices *yaml.Node
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, val := e.Content[j], e.Content[j+1]
			bad := func(format string, a ...any) error {
				return fmt.Errorf("%s:%d: %s.%s: %s", file, val.Line, p, k.Value, fmt.Sprintf(format, a...))
			}
			if seen[k.Value] {
				return nil, fmt.Errorf("%s:%d: %s.%s: given twice", file, k.Line, p, k.Value)
			}
			seen[k.Value] = true
			switch k.Value {
			case "device-filter":
				items := []*yaml.Node{val}
				if val.Kind == yaml.SequenceNode {
					items = val.Content
				}
				for _, it := range items {
					if it.Kind != yaml.ScalarNode {
						return nil, bad("want a GPU model or a list of them")
					}
					if len(gpu.MIGProfiles(it.Value)) == 0 {
						return nil, bad("%s is no MIG-capable catalog model (A100-40GB, A100-80GB, H100-80GB, H200-141GB)", Quote(it.Value))
					}
					en.Models = append(en.Models, it.Value)
				}
			case "devices":
				devices = val
				if val.Kind == yaml.ScalarNode && val.Value == "all" {
					continue
				}
				if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
					return nil, bad("want all or a list of GPU indices")
				}
				for _, it := range val.Content {
					d, err := strconv.Atoi(it.Value)
					if it.Kind != yaml.ScalarNode || err != nil || d < 0 || d >= maxGPUsPerNode {
						return nil, bad("%s is not a GPU index 0..%d", Quote(it.Value), maxGPUsPerNode-1)
					}
					if containsInt(en.Devices, d) {
						// mig-parted takes it; it is a typo here.
						return nil, fmt.Errorf("%s:%d: %s.%s: GPU %d listed twice", file, it.Line, p, k.Value, d)
					}
					en.Devices = append(en.Devices, d)
				}
			case "mig-enabled":
				if val.Kind != yaml.ScalarNode || (val.Value != "true" && val.Value != "false") {
					return nil, bad("want true or false")
				}
				en.Enabled = val.Value == "true"
			case "mig-devices":
				if val.Kind != yaml.MappingNode {
					return nil, bad("want a mapping of MIG profile names to counts")
				}
				for m := 0; m+1 < len(val.Content); m += 2 {
					pk, pv := val.Content[m], val.Content[m+1]
					n, err := strconv.Atoi(pv.Value)
					if pv.Kind != yaml.ScalarNode || err != nil || n < 0 || n > 7 {
						return nil, fmt.Errorf("%s:%d: %s.mig-devices.%s: want a count 0..7", file, pv.Line, p, Quote(pk.Value))
					}
					for range n {
						en.Layout = append(en.Layout, pk.Value)
					}
				}
			default:
				return nil, fmt.Errorf("%s:%d: %s: unknown field %s (want %s)", file, k.Line, p, Quote(k.Value), strings.Join(migEntryKeys, ", "))
			}
		}
		switch {
		case devices == nil:
			return nil, fmt.Errorf("%s:%d: %s.devices: missing", file, e.Line, p)
		case !seen["mig-enabled"]:
			return nil, fmt.Errorf("%s:%d: %s.mig-enabled: missing", file, e.Line, p)
		case !en.Enabled && len(en.Layout) > 0:
			return nil, fmt.Errorf("%s:%d: %s.mig-devices: given with mig-enabled: false", file, e.Line, p)
		case en.Enabled && len(en.Layout) == 0:
			// mig-parted accepts MIG mode without instances; such a GPU
			// serves no pod at all.
			return nil, fmt.Errorf("%s:%d: %s.mig-devices: no MIG device with mig-enabled: true (a MIG-enabled GPU without instances serves no pod); give profiles such as \"3g.40gb\": 2, or mig-enabled: false", file, e.Line, p)
		}
		for _, m := range en.Models {
			if _, err := gpu.PlaceMIG(m, en.Layout); err != nil && len(en.Layout) > 0 {
				return nil, fmt.Errorf("%s:%d: %s.mig-devices: %v", file, e.Line, p, err)
			}
		}
		c.Entries = append(c.Entries, en)
	}
	return c, nil
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
