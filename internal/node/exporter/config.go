// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// LoadFields reads a metrics file (see ParseFields) and returns the fields it
// selects and a warning for each field skipped. Errors name the file and line.
func LoadFields(path string) ([]Field, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err // *fs.PathError names the file
	}
	return ParseFields(path, data)
}

// ParseFields parses a metrics file in dcgm-exporter's counters format, one
// metric a line:
//
//	# comment
//	DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).
//	DCGM_FI_DRIVER_VERSION, label, Driver Version
//
// The first column is a DCGM field name, the second its type (gauge,
// counter, or label for a field served as a label on every series), which
// for a field gpuplane serves must be the type gpuplane serves it as, and
// the optional third the help text (it may contain commas; empty keeps
// gpuplane's own). Blank lines and lines starting with '#' are skipped. A
// field gpuplane does not serve (see AllFields), e.g.
// DCGM_FI_DEV_VGPU_LICENSE_STATUS of dcgm-exporter's default-counters.csv, is
// skipped with one warning, "file:line: ...", so that dcgm-exporter's files
// work unchanged. The result keeps the file's order. name is the file name
// used in errors and warnings.
func ParseFields(name string, data []byte) (out []Field, warnings []string, err error) {
	seen := make(map[string]int)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.SplitN(text, ",", 3)
		fieldName := strings.TrimSpace(cols[0])
		if len(cols) < 2 {
			return nil, nil, fmt.Errorf("%s:%d: %q: want \"NAME, TYPE[, HELP]\"", name, line, fieldName)
		}
		if prev, dup := seen[fieldName]; dup {
			return nil, nil, fmt.Errorf("%s:%d: %s is listed twice (first on line %d)", name, line, fieldName, prev)
		}
		seen[fieldName] = line
		typ := Type(strings.TrimSpace(cols[1]))
		if typ != Gauge && typ != Counter && typ != Label {
			return nil, nil, fmt.Errorf("%s:%d: %s: type %q; want gauge, counter or label", name, line, fieldName, typ)
		}
		f, ok := lookupField(fieldName)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s is not a field gpuplane serves; skipped (see docs/metrics.md)", name, line, fieldName))
			continue
		}
		if typ != f.Type {
			return nil, nil, fmt.Errorf("%s:%d: %s: type %q, but gpuplane serves it as a %s", name, line, fieldName, typ, f.Type)
		}
		if len(cols) == 3 {
			if help := strings.TrimSpace(cols[2]); help != "" {
				if !utf8.ValidString(help) {
					return nil, nil, fmt.Errorf("%s:%d: %s: help is not valid UTF-8", name, line, fieldName)
				}
				f.Help = help
			}
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: no field gpuplane serves is listed", name)
	}
	return out, warnings, nil
}
