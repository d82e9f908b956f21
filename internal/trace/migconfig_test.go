package trace

import (
	"reflect"
	"strings"
	"testing"
)

// A config in NVIDIA mig-parted's format (examples/config.yaml of
// github.com/NVIDIA/mig-parted: version v1, mig-configs, entries with
// devices, mig-enabled, mig-devices), with a catalog model as
// device-filter.
const migParted = `version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  mixed:
    - devices: all
      mig-enabled: true
      mig-devices:
        "1g.10gb": 7
    - device-filter: A100-80GB
      devices: [2, 3]
      mig-enabled: true
      mig-devices:
        "3g.40gb": 2
    - devices: [7]
      mig-enabled: false
`

func TestReadMIGConfig(t *testing.T) {
	c, err := ReadMIGConfig("m.yaml", strings.NewReader(migParted), "mixed")
	if err != nil {
		t.Fatal(err)
	}
	seven := []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}
	for _, tc := range []struct {
		model string
		g     int
		want  []string
		line  int
	}{
		{"A100-80GB", 0, seven, 7},
		{"A100-80GB", 2, []string{"3g.40gb", "3g.40gb"}, 11}, // the later entry counts
		{"H100-80GB", 2, seven, 7},                           // filtered out
		{"A100-80GB", 7, nil, 16},                            // left whole
	} {
		got, line := c.Layout(tc.model, tc.g)
		if !reflect.DeepEqual(got, tc.want) || line != tc.line {
			t.Errorf("Layout(%s, %d) = %v, line %d; want %v, line %d", tc.model, tc.g, got, line, tc.want, tc.line)
		}
	}
	if c, err := ReadMIGConfig("m.yaml", strings.NewReader(migParted), "all-disabled"); err != nil || len(c.Entries) != 1 || c.Entries[0].Enabled {
		t.Errorf("all-disabled: %+v, %v", c, err)
	}
}

func TestReadMIGConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		yaml, name, err string
	}{
		{migParted, "", `m.yaml: 2 configurations ("all-disabled, mixed"): name one`},
		{migParted, "x", `m.yaml: no configuration "x"`},
		{"version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}\n", "", "m.yaml:1: version: want v1"},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enable: true\n", "", `m.yaml:4: mig-configs."a"[0]: unknown field "mig-enable"`},
		{"mig-configs:\n  a:\n    - devices: [0, 99]\n      mig-enabled: true\n", "", `m.yaml:3: mig-configs."a"[0].devices: "99" is not a GPU index 0..63`},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {1g.10gb: x}\n", "", `m.yaml:5: mig-configs."a"[0].mig-devices."1g.10gb": want a count 0..7`},
		{"mig-configs:\n  a:\n    - devices: all\n      device-filter: T4\n      mig-enabled: true\n", "", `m.yaml:4: mig-configs."a"[0].device-filter: "T4" is no MIG-capable`},
		{"mig-configs:\n  a:\n    - devices: all\n      device-filter: A100-80GB\n      mig-enabled: true\n      mig-devices: {4g.40gb: 2}\n", "", `m.yaml:3: mig-configs."a"[0].mig-devices: model A100-80GB allows at most 1`},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: false\n      mig-devices: {1g.10gb: 1}\n", "", `m.yaml:3: mig-configs."a"[0].mig-devices: given with mig-enabled: false`},
		{"mig-configs:\n  a:\n    - mig-enabled: false\n", "", `m.yaml:3: mig-configs."a"[0].devices: missing`},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {}\n", "", `m.yaml:3: mig-configs."a"[0].mig-devices: no MIG device with mig-enabled: true`},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {3g.40gb: 0}\n", "", `m.yaml:3: mig-configs."a"[0].mig-devices: no MIG device with mig-enabled: true`},
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n", "", `m.yaml:3: mig-configs."a"[0].mig-devices: no MIG device with mig-enabled: true`},
		{"mig-configs:\n  a: []\n", "", `m.yaml:2: mig-configs."a": want a non-empty list`},
		// mig-parted api/spec/v1/spec.go: "unable to parse with missing 'version' field".
		{"mig-configs:\n  a:\n    - devices: all\n      mig-enabled: false\n", "", `m.yaml:1: field version: missing (mig-parted wants version: v1)`},
		{"version: v1\nmig-configs:\n  a:\n    - devices: [0, 0, 1]\n      mig-enabled: false\n", "", `m.yaml:4: mig-configs."a"[0].devices: GPU 0 listed twice`},
		{"", "", "m.yaml:1: empty file"},
		{"mig-configs: [\n", "", "m.yaml:"},
	} {
		_, err := ReadMIGConfig("m.yaml", strings.NewReader(tc.yaml), tc.name)
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%q: err = %v, want prefix %q", tc.yaml, err, tc.err)
		}
	}
}

func FuzzReadMIGConfig(f *testing.F) {
	f.Add([]byte(migParted), "mixed")
	f.Add([]byte("mig-configs: {a: [{devices: [0], mig-enabled: true, mig-devices: {7g.80gb: 1}}]}\n"), "")
	f.Add([]byte("mig-configs: &a {b: *a}\n"), "b")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		c, err := ReadMIGConfig("f.yaml", strings.NewReader(string(data)), name)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, e := range c.Entries {
			if e.Line < 1 || (!e.Enabled && len(e.Layout) > 0) {
				t.Fatalf("accepted an invalid entry %+v", e)
			}
			for _, d := range e.Devices {
				if d < 0 || d >= maxGPUsPerNode {
					t.Fatalf("accepted GPU index %d", d)
				}
			}
		}
		for g := range 8 {
			c.Layout("A100-80GB", g)
		}
	})
}
