// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpucdi

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DefaultMIGMinorsPath is the NVIDIA driver's table of MIG capability
// minors: one line "<capability> <minor>" for each capability, e.g.
// "gpu0/gi1/access 12" and "gpu0/gi1/ci0/access 13", where gpu<N> is the
// GPU's device minor (/dev/nvidia<N>). A process sees a MIG device only
// when it can open the capability's device node,
// /dev/nvidia-caps/nvidia-cap<minor>, for its GPU instance and its
// compute instance (NVIDIA MIG user guide, "Device Nodes and
// Capabilities"; nvidia-container-toolkit internal/nvcaps reads the same
// table for the same nodes).
const DefaultMIGMinorsPath = "/proc/driver/nvidia-caps/mig-minors"

// MIGCapDir is where the driver's capability device nodes live.
const MIGCapDir = "/dev/nvidia-caps"

// MIGMinors maps a capability name ("gpu0/gi1/ci0/access") to its minor.
type MIGMinors map[string]uint32

// ParseMIGMinors reads a MIG minors table; name names the input in
// errors. Every line must be "<capability> <minor>" with a minor in
// 0..2^32-1; capability names not of the GPU and compute instance forms
// ("config", "monitor", or any a later driver adds) are kept and never
// looked up.
func ParseMIGMinors(r io.Reader, name string) (MIGMinors, error) {
	m := MIGMinors{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"<capability> <minor>\", got %q", name, line, text)
		}
		minor, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: minor of %s: %q is not a number in 0..4294967295", name, line, f[0], f[1])
		}
		m[f[0]] = uint32(minor)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// ReadMIGMinors reads the table at path.
func ReadMIGMinors(path string) (MIGMinors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("MIG minors table: %w", err)
	}
	defer f.Close()
	return ParseMIGMinors(f, path)
}

// CapNodes returns the capability device nodes of the MIG device with
// GPU instance gi and compute instance ci on the GPU of device minor
// gpuMinor: the GPU instance's access node, then the compute instance's.
// A capability missing from the table is an error: without its node the
// container would not see the device.
func (m MIGMinors) CapNodes(gpuMinor, gi, ci int) ([]string, error) {
	names := []string{
		fmt.Sprintf("gpu%d/gi%d/access", gpuMinor, gi),
		fmt.Sprintf("gpu%d/gi%d/ci%d/access", gpuMinor, gi, ci),
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		minor, ok := m[n]
		if !ok {
			return nil, fmt.Errorf("MIG capability %s is not in the MIG minors table", n)
		}
		out = append(out, fmt.Sprintf("%s/nvidia-cap%d", MIGCapDir, minor))
	}
	return out, nil
}
