// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"regexp"
	"strings"
)

// selectorClause matches one clause of a CEL selector comparing an
// attribute of a driver with a string: device.attributes['DRIVER'].NAME
// == 'VALUE', either quote.
var selectorClause = regexp.MustCompile(`^device\.attributes\[["']([\w.-]+)["']\]\.(\w+)\s*==\s*["']([^"']*)["']$`)

// ParseSelectorClause reads one clause of a claim's CEL selector (a part
// between &&, spaces around it ignored) of the form
// device.attributes['gpu.nvidia.com'].NAME == 'VALUE' (either quote): the
// attribute's name and the value. ok is false for any other clause.
func ParseSelectorClause(clause string) (attr, value string, ok bool) {
	return ParseDriverClause(DriverName, clause)
}

// ParseDriverClause is ParseSelectorClause for the attributes of driver
// (gpu.amd.com's productName, gaudi.intel.com's model, ...).
func ParseDriverClause(driver, clause string) (attr, value string, ok bool) {
	m := selectorClause.FindStringSubmatch(strings.TrimSpace(clause))
	if m == nil || m[1] != driver {
		return "", "", false
	}
	return m[2], m[3], true
}

// MIGProfileSelector reads the selector of a MIG profile in a claim of
// class MIGDeviceClass, as docs/dra.md writes it: the whole expression is
// device.attributes['gpu.nvidia.com'].profile == '1g.10gb'. ok is false
// for any other expression.
func MIGProfileSelector(expr string) (profile string, ok bool) {
	attr, v, ok := ParseSelectorClause(expr)
	if !ok || attr != AttrProfile || v == "" {
		return "", false
	}
	return v, true
}
