// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package mock is the mock device backend: GPUs described by a profile file
// (YAML) or a built-in profile name, with health events injected at run time
// through a faults file, and deterministic telemetry.
package mock

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// Profile is a mock node as written in a profile file. See
// docs/node-agent.md for the format and profiles/*.yaml for examples.
type Profile struct {
	// Name names the profile; it seeds the generated UUIDs.
	Name string `json:"name"`
	// DriverVersion is the reported driver version (default "550.54.15").
	DriverVersion string `json:"driverVersion,omitempty"`
	// CUDADriverVersion is the CUDA version the driver supports, "MAJOR.MINOR"
	// (default "12.4").
	CUDADriverVersion string `json:"cudaDriverVersion,omitempty"`
	// GPUs lists the GPUs; an entry with Count > 1 stands for that many
	// identical GPUs with consecutive indices.
	GPUs []GPUSpec `json:"gpus"`
	// Links is the interconnect; when empty, GPUs on one NUMA node are
	// linked by NODE and GPUs on different ones by SYS.
	Links LinksSpec `json:"links,omitempty"`
}

// GPUSpec describes one GPU, or Count identical GPUs.
type GPUSpec struct {
	// Count repeats the entry (default 1).
	Count int `json:"count,omitempty"`
	// ProductName is the NVML product name, e.g. "NVIDIA H100 80GB HBM3";
	// the catalog model, memory and compute capability follow from it.
	ProductName string `json:"productName"`
	// Brand is NVML's brand as go-nvlib names it (default "Nvidia", what
	// NVML reports for the data-center GPUs of the catalog).
	Brand string `json:"brand,omitempty"`
	// UUID overrides the generated UUID (only with Count 1).
	UUID string `json:"uuid,omitempty"`
	// MemoryMiB overrides the catalog memory, in MiB.
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
	// NUMANode is the GPU's NUMA node (default 0; -1 for unknown).
	NUMANode *int `json:"numaNode,omitempty"`
	// Multiprocessors is the SM count (default: the count gpu.Multiprocessors
	// cites for the product name; 0 where it has none).
	Multiprocessors int `json:"multiprocessors,omitempty"`
	// MIG lists the GPU instances (e.g. ["3g.40gb", "1g.10gb"], or
	// objects, see MIGSpec); a non-empty list turns MIG mode on. It must be
	// a valid placement for the model.
	MIG []MIGSpec `json:"mig,omitempty"`
	// MIGEnabled turns MIG mode on with no MIG devices when MIG is empty.
	MIGEnabled bool `json:"migEnabled,omitempty"`
	// Telemetry is what Sample reports.
	Telemetry Telemetry `json:"telemetry,omitempty"`
}

// MIGSpec is one GPU instance of a MIG layout, written as its profile
// name ("1g.10gb") or as an object:
//
//	{profile: 7g.40gb, computeInstances: [1, 1, 1, 1, 1, 1, 1]}
//	{profile: 1g.10gb, memoryMiB: 11008}
//
// Its MIG devices (one per compute instance) are named by NVIDIA's rule
// from their memory and the GPU's (device.MIGProfileName), as on real
// GPUs: a 1g instance of 11008 MiB on a 95830 MiB GPU is "1g.12gb"
// whatever Profile says; seven 1-slice compute instances of a 7g.40gb
// instance are seven "1c.7g.40gb".
type MIGSpec struct {
	// Profile is the GPU instance profile in the catalog model's MIG table
	// (internal/gpu), e.g. "3g.40gb" or "1g.10gb+me": it sets the
	// placement, the SMs and the default memory.
	Profile string `json:"profile"`
	// MemoryMiB is the instance's memory as NVML reports it, MiB
	// (default: the table's).
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
	// ComputeInstances lists the compute slices of each compute instance
	// (default: one spanning the GPU instance); their sum is at most the
	// instance's slices. SMs are shared out in proportion.
	ComputeInstances []int `json:"computeInstances,omitempty"`
}

// UnmarshalJSON reads a profile name or an object; unknown fields are
// rejected.
func (m *MIGSpec) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*m = MIGSpec{}
		return json.Unmarshal(b, &m.Profile)
	}
	type plain MIGSpec
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*m = MIGSpec(p)
	return nil
}

// devices returns the MIG devices of GPU instance j (GPU instance ID j+1)
// of GPU g, whose catalog profile is mp; field names the spec in errors.
func (m MIGSpec) devices(field string, g device.GPU, j int, mp gpu.MIGProfile) ([]device.MIGDevice, error) {
	mem := mp.MemoryMiB
	if m.MemoryMiB != 0 {
		if m.MemoryMiB < 0 || m.MemoryMiB > g.MemoryMiB {
			return nil, fmt.Errorf("%s.memoryMiB: %d is out of range (1..%d, the GPU's memory)", field, m.MemoryMiB, g.MemoryMiB)
		}
		mem = m.MemoryMiB
	}
	cis := m.ComputeInstances
	if len(cis) == 0 {
		cis = []int{mp.ComputeSlices}
	}
	sum := 0
	for k, c := range cis {
		if _, ok := device.CIProfiles[c]; !ok || c > mp.ComputeSlices {
			return nil, fmt.Errorf("%s.computeInstances[%d]: %d compute slices; want 1, 2, 3, 4, 6, 7 or 8, at most the %d of %s", field, k, c, mp.ComputeSlices, mp.Name)
		}
		sum += c
	}
	if sum > mp.ComputeSlices {
		return nil, fmt.Errorf("%s.computeInstances: %v need %d compute slices; %s has %d", field, cis, sum, mp.Name, mp.ComputeSlices)
	}
	var out []device.MIGDevice
	for k, c := range cis {
		name, err := device.MIGProfileName(mp.GIProfileID, device.CIProfiles[c], mem, g.MemoryMiB)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		seed := fmt.Sprintf("%s/%d", g.UUID, j)
		if k > 0 {
			seed = fmt.Sprintf("%s/%d/%d", g.UUID, j, k)
		}
		out = append(out, device.MIGDevice{
			UUID:              "MIG-" + uuidFrom(seed),
			Profile:           name,
			GPUInstanceID:     j + 1,
			ComputeInstanceID: k,
			MemoryMiB:         mem,
			Multiprocessors:   mp.Multiprocessors * c / mp.ComputeSlices,
		})
	}
	return out, nil
}

// Telemetry is a GPU's mock telemetry. Utilisation steps through
// UtilizationPct, one value per Sample call; the other values are fixed;
// energy is the integral of PowerW over time since the backend started.
type Telemetry struct {
	// UtilizationPct is the GPU utilisation curve in percent (default [0]).
	UtilizationPct []float64 `json:"utilizationPct,omitempty"`
	// MemCopyUtilPct is the memory copy utilisation, percent.
	MemCopyUtilPct float64 `json:"memCopyUtilPct,omitempty"`
	// MemoryUsedMiB is the frame buffer in use, MiB.
	MemoryUsedMiB float64 `json:"memoryUsedMiB,omitempty"`
	// TemperatureC and MemoryTemperatureC are degrees Celsius (default 40, 45).
	TemperatureC       float64 `json:"temperatureC,omitempty"`
	MemoryTemperatureC float64 `json:"memoryTemperatureC,omitempty"`
	// PowerW is the power draw in watts (default 100).
	PowerW float64 `json:"powerW,omitempty"`
	// SMClockMHz and MemClockMHz are clocks in MHz (default 1410, 1215).
	SMClockMHz  float64 `json:"smClockMHz,omitempty"`
	MemClockMHz float64 `json:"memClockMHz,omitempty"`
	// PCIeReplay is the PCIe replay counter.
	PCIeReplay float64 `json:"pcieReplay,omitempty"`
	// ECCSBE and ECCDBE are the volatile single- and double-bit ECC error
	// counts; the aggregate counters report the same values.
	ECCSBE float64 `json:"eccSBE,omitempty"`
	ECCDBE float64 `json:"eccDBE,omitempty"`
	// RowRemapCorrectable and RowRemapUncorrectable are row-remap counts.
	RowRemapCorrectable   float64 `json:"rowRemapCorrectable,omitempty"`
	RowRemapUncorrectable float64 `json:"rowRemapUncorrectable,omitempty"`
	// EncUtilPct and DecUtilPct are the video encoder and decoder
	// utilisation, percent.
	EncUtilPct float64 `json:"encUtilPct,omitempty"`
	DecUtilPct float64 `json:"decUtilPct,omitempty"`
	// MemoryReservedMiB is the frame buffer the driver reserves, MiB; it
	// counts neither as used nor as free.
	MemoryReservedMiB float64 `json:"memoryReservedMiB,omitempty"`
	// PCIeTxBytesPerSec and PCIeRxBytesPerSec are the PCIe throughput,
	// bytes per second.
	PCIeTxBytesPerSec float64 `json:"pcieTxBytesPerSec,omitempty"`
	PCIeRxBytesPerSec float64 `json:"pcieRxBytesPerSec,omitempty"`
	// NVLinkBandwidthPerSec is the rate of NVML's NVLink bandwidth counter
	// over all links, per second; the counter is served only on GPUs with
	// an NVLink to another GPU.
	NVLinkBandwidthPerSec float64 `json:"nvlinkBandwidthPerSec,omitempty"`
}

// LinksSpec is the interconnect matrix.
type LinksSpec struct {
	// All is one nvidia-smi topo -m cell (e.g. "NV18") for every pair.
	All string `json:"all,omitempty"`
	// Matrix has one row per GPU, cells separated by spaces, as nvidia-smi
	// topo -m prints them: "X" on the diagonal, NV<n>, PIX, PXB, PHB, NODE or
	// SYS elsewhere. It must be symmetric.
	Matrix []string `json:"matrix,omitempty"`
}

//go:embed profiles/*.yaml
var builtinFS embed.FS

// Builtins returns the names of the built-in profiles, sorted.
func Builtins() []string {
	ents, _ := builtinFS.ReadDir("profiles")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// LoadProfile loads a built-in profile by name, or else a profile file.
// Errors name the file and the field.
func LoadProfile(nameOrFile string) (*Profile, error) {
	if data, err := builtinFS.ReadFile("profiles/" + nameOrFile + ".yaml"); err == nil {
		return ParseProfile("builtin:"+nameOrFile, data)
	}
	data, err := os.ReadFile(nameOrFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrFile, "/.") {
			return nil, fmt.Errorf("mock profile %q is neither a built-in profile (%s) nor a file", nameOrFile, strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("mock profile: %w", err)
	}
	return ParseProfile(nameOrFile, data)
}

// maxGPUs bounds the GPU count of a profile; a node has far fewer.
const maxGPUs = 1024

// ParseProfile parses and validates a profile file's content; file is used in
// errors, with the line of the field (internal/yamlx). Unknown fields are
// rejected.
func ParseProfile(file string, data []byte) (*Profile, error) {
	var p Profile
	chk, err := decodeStrict(file, data, &p)
	if err != nil {
		return nil, err
	}
	if _, err := p.node(); err != nil {
		return nil, chk.Locate(file, err)
	}
	return &p, nil
}

// decodeStrict checks data's keys against the JSON fields of v's type
// with yamlx (unknown keys with their path and line, fractions for
// integers) and decodes it as sigs.k8s.io/yaml does, so that the
// types' UnmarshalJSON methods apply.
func decodeStrict(file string, data []byte, v any) (yamlx.Checked, error) {
	top, err := yamlx.Parse(file, bytes.NewReader(data))
	if err != nil {
		return yamlx.Checked{}, err
	}
	chk := yamlx.Check(file, top, yamlx.SchemaOf(v, "json"))
	if err := chk.Err(); err != nil {
		return chk, err
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		return chk, yamlError(file, err)
	}
	return chk, nil
}

// Node builds the discovered node the profile describes.
func (p *Profile) Node() (device.Node, error) { return p.node() }

func (p *Profile) node() (device.Node, error) {
	n := device.Node{DriverVersion: p.DriverVersion, CUDADriverMajor: 12, CUDADriverMinor: 4}
	if n.DriverVersion == "" {
		n.DriverVersion = "550.54.15"
	}
	if p.CUDADriverVersion != "" {
		if _, err := fmt.Sscanf(p.CUDADriverVersion, "%d.%d", &n.CUDADriverMajor, &n.CUDADriverMinor); err != nil || n.CUDADriverMajor < 1 || n.CUDADriverMinor < 0 {
			return n, fmt.Errorf("cudaDriverVersion: %q is not MAJOR.MINOR", p.CUDADriverVersion)
		}
	}
	if len(p.GPUs) == 0 {
		return n, fmt.Errorf("gpus: at least one GPU is required")
	}
	seen := map[string]string{}
	for i, s := range p.GPUs {
		gpus, err := s.gpus(fmt.Sprintf("gpus[%d]", i), p.Name, len(n.GPUs), seen)
		if err != nil {
			return n, err
		}
		n.GPUs = append(n.GPUs, gpus...)
	}
	links, err := p.Links.matrix(n.GPUs)
	if err != nil {
		return n, err
	}
	n.Links = links
	return n, nil
}

// gpus checks the entry (field names it in errors) and returns its GPUs,
// indexed from first; seen maps the UUIDs used so far to their entries.
func (s GPUSpec) gpus(field, profile string, first int, seen map[string]string) ([]device.GPU, error) {
	count := s.Count
	if count == 0 {
		count = 1
	}
	if count < 0 || first+count > maxGPUs {
		return nil, fmt.Errorf("%s.count: %d is out of range (1..%d GPUs in all)", field, s.Count, maxGPUs)
	}
	m, numa, err := s.check(field, count)
	if err != nil {
		return nil, err
	}
	mem := s.MemoryMiB
	if mem == 0 {
		mem = m.MemoryMiB
	}
	var out []device.GPU
	for c := 0; c < count; c++ {
		idx := first + c
		g := device.GPU{
			Index:           idx,
			UUID:            s.UUID,
			ProductName:     s.ProductName,
			Brand:           s.Brand,
			Model:           m.Name,
			MemoryMiB:       mem,
			PCIBusID:        fmt.Sprintf("00000000:%02X:00.0", idx+1),
			Minor:           idx,
			NUMANode:        numa,
			ComputeMajor:    m.ComputeMajor,
			ComputeMinor:    m.ComputeMinor,
			Multiprocessors: cmp.Or(s.Multiprocessors, gpu.Multiprocessors(s.ProductName)),
			MIGEnabled:      len(s.MIG) > 0 || s.MIGEnabled,
		}
		if g.UUID == "" {
			g.UUID = "GPU-" + uuidFrom(fmt.Sprintf("%s/%d", profile, idx))
		}
		if g.Brand == "" {
			g.Brand = "Nvidia"
		}
		if prev, dup := seen[g.UUID]; dup {
			return nil, fmt.Errorf("%s.uuid: %q is also used by %s", field, g.UUID, prev)
		}
		seen[g.UUID] = field
		for j, x := range s.MIG {
			mp, _ := gpu.LookupMIGProfile(m.Name, x.Profile)
			devs, err := x.devices(fmt.Sprintf("%s.mig[%d]", field, j), g, j, mp)
			if err != nil {
				return nil, err
			}
			g.MIG = append(g.MIG, devs...)
		}
		out = append(out, g)
	}
	return out, nil
}

// check validates the entry's fields and returns its catalog model (zero
// for a product outside the catalog) and NUMA node.
func (s GPUSpec) check(field string, count int) (gpu.Model, int, error) {
	if s.ProductName == "" {
		return gpu.Model{}, 0, fmt.Errorf("%s.productName: required", field)
	}
	if s.UUID != "" && count != 1 {
		return gpu.Model{}, 0, fmt.Errorf("%s.uuid: only allowed with count 1", field)
	}
	if s.MemoryMiB < 0 {
		return gpu.Model{}, 0, fmt.Errorf("%s.memoryMiB: %d is negative", field, s.MemoryMiB)
	}
	if s.Multiprocessors < 0 {
		return gpu.Model{}, 0, fmt.Errorf("%s.multiprocessors: %d is negative", field, s.Multiprocessors)
	}
	numa := 0
	if s.NUMANode != nil {
		numa = *s.NUMANode
		if numa < -1 || numa > 1023 {
			return gpu.Model{}, 0, fmt.Errorf("%s.numaNode: %d is out of range (-1..1023)", field, numa)
		}
	}
	if err := s.Telemetry.validate(); err != nil {
		return gpu.Model{}, 0, fmt.Errorf("%s.telemetry.%w", field, err)
	}
	m, ok := gpu.Default().FromProductName(s.ProductName)
	if s.MemoryMiB == 0 && m.MemoryMiB == 0 {
		return m, 0, fmt.Errorf("%s.memoryMiB: required, since product %q is not in the GPU catalog", field, s.ProductName)
	}
	if len(s.MIG) > 0 || s.MIGEnabled {
		if !ok || !m.MIGCapable {
			return m, 0, fmt.Errorf("%s.mig: product %q does not support MIG", field, s.ProductName)
		}
		names := make([]string, len(s.MIG))
		for j, x := range s.MIG {
			names[j] = x.Profile
		}
		if _, err := gpu.PlaceMIG(m.Name, names); err != nil {
			return m, 0, fmt.Errorf("%s.mig: %w", field, err)
		}
	}
	return m, numa, nil
}

func (t Telemetry) validate() error {
	check := func(name string, v, hi float64) error {
		if v != v || v < 0 || v > hi {
			return fmt.Errorf("%s: %v is out of range (0..%v)", name, v, hi)
		}
		return nil
	}
	if len(t.UtilizationPct) > 100000 {
		return fmt.Errorf("utilizationPct: more than 100000 values")
	}
	for i, u := range t.UtilizationPct {
		if err := check(fmt.Sprintf("utilizationPct[%d]", i), u, 100); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name  string
		v, hi float64
	}{
		{"memCopyUtilPct", t.MemCopyUtilPct, 100},
		{"memoryUsedMiB", t.MemoryUsedMiB, 1 << 30},
		{"temperatureC", t.TemperatureC, 200},
		{"memoryTemperatureC", t.MemoryTemperatureC, 200},
		{"powerW", t.PowerW, 10000},
		{"smClockMHz", t.SMClockMHz, 100000},
		{"memClockMHz", t.MemClockMHz, 100000},
		{"pcieReplay", t.PCIeReplay, 1e15},
		{"eccSBE", t.ECCSBE, 1e15},
		{"eccDBE", t.ECCDBE, 1e15},
		{"rowRemapCorrectable", t.RowRemapCorrectable, 1e15},
		{"rowRemapUncorrectable", t.RowRemapUncorrectable, 1e15},
	} {
		if err := check(c.name, c.v, c.hi); err != nil {
			return err
		}
	}
	return nil
}

func (l LinksSpec) matrix(gpus []device.GPU) ([][]device.Link, error) {
	n := len(gpus)
	if l.All != "" && len(l.Matrix) > 0 {
		return nil, fmt.Errorf("links: give either all or matrix, not both")
	}
	m := make([][]device.Link, n)
	for i := range m {
		m[i] = make([]device.Link, n)
	}
	switch {
	case l.All != "":
		lk, err := device.ParseLink(l.All)
		if err != nil {
			return nil, fmt.Errorf("links.all: %w", err)
		}
		for i := range m {
			for j := range m[i] {
				if i != j {
					m[i][j] = lk
				}
			}
		}
	case len(l.Matrix) > 0:
		if len(l.Matrix) != n {
			return nil, fmt.Errorf("links.matrix: %d rows for %d GPUs", len(l.Matrix), n)
		}
		for i, row := range l.Matrix {
			cells := strings.Fields(row)
			if len(cells) != n {
				return nil, fmt.Errorf("links.matrix[%d]: %d cells for %d GPUs", i, len(cells), n)
			}
			for j, c := range cells {
				if i == j {
					if c != "X" {
						return nil, fmt.Errorf("links.matrix[%d][%d]: diagonal cell must be X, got %q", i, j, c)
					}
					continue
				}
				lk, err := device.ParseLink(c)
				if err != nil {
					return nil, fmt.Errorf("links.matrix[%d][%d]: %w", i, j, err)
				}
				m[i][j] = lk
			}
		}
		for i := range m {
			for j := 0; j < i; j++ {
				if m[i][j] != m[j][i] {
					return nil, fmt.Errorf("links.matrix[%d][%d]: %s differs from links.matrix[%d][%d]: %s (the matrix must be symmetric)", i, j, m[i][j], j, i, m[j][i])
				}
			}
		}
	default:
		for i := range m {
			for j := range m[i] {
				if i == j {
					continue
				}
				if gpus[i].NUMANode == gpus[j].NUMANode && gpus[i].NUMANode >= 0 {
					m[i][j] = device.Link{Type: device.LinkSameSocket}
				} else {
					m[i][j] = device.Link{Type: device.LinkCrossSocket}
				}
			}
		}
	}
	return m, nil
}

// uuidFrom derives a stable UUID-formatted string (8-4-4-4-12 hex) from seed.
func uuidFrom(seed string) string {
	h := sha256.Sum256([]byte(seed))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// yamlError names the file in a sigs.k8s.io/yaml decoding error and drops
// the JSON-decoder prefixes ("error unmarshaling JSON: while decoding JSON:
// json: "), leaving e.g. `unknown field "colour"` or the YAML syntax error.
func yamlError(file string, err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, "json: "); i >= 0 {
		msg = msg[i+len("json: "):]
	}
	return fmt.Errorf("%s: %s", file, msg)
}
