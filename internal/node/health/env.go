// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package health

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The environment variables of NVIDIA's device plugin that change which
// XIDs are critical (k8s-device-plugin internal/rm/health.go).
const (
	// EnvDisableHealthChecks is "all" or "xids" (no XID is critical) or a
	// comma-separated list of XIDs to ignore besides the configured ones.
	EnvDisableHealthChecks = "DP_DISABLE_HEALTHCHECKS"
	// EnvEnableHealthChecks is "all" (every XID is critical, application
	// XIDs included) or a comma-separated list of XIDs that are critical
	// even when ignored.
	EnvEnableHealthChecks = "DP_ENABLE_HEALTHCHECKS"
)

// AllXIDs in a list of ignored XIDs stands for every XID, as the key 0
// does in NVIDIA's plugin (allXIDs in internal/rm/health.go); 0 is no
// XID's number.
const AllXIDs = 0

// IgnoredXIDs returns the XIDs ignored under NVIDIA's environment
// variables, from the configured ignored XIDs (gpuplane.ignoredXIDs, whose
// default is NVIDIA's hard-coded list) and the values of
// EnvDisableHealthChecks and EnvEnableHealthChecks, by NVIDIA's rule
// (getDisabledHealthCheckXids, checkHealth):
//
//   - disable "all" or "xids" (any case, anywhere in the list) ignores every
//     XID (the result is [AllXIDs]); a list of XIDs adds them;
//   - enable "all" makes every XID critical (the result is empty); a list
//     of XIDs takes them out of the ignored ones, but not when every XID is
//     ignored: NVIDIA's checkHealth stops before looking at them;
//   - a malformed entry is ignored with a warning, an empty one silently.
//
// The result is sorted.
func IgnoredXIDs(configured []uint64, disable, enable string) (ignored []uint64, warnings []string) {
	dis, disAll, w1 := parseXIDs(EnvDisableHealthChecks, disable)
	en, enAll, w2 := parseXIDs(EnvEnableHealthChecks, enable)
	warnings = append(w1, w2...)
	switch {
	case enAll:
		return nil, warnings
	case disAll || dis[AllXIDs]:
		if len(en) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s=%s: no effect while %s disables every XID, as in NVIDIA's plugin", EnvEnableHealthChecks, enable, EnvDisableHealthChecks))
		}
		return []uint64{AllXIDs}, warnings
	}
	set := map[uint64]bool{}
	for _, x := range configured {
		set[x] = true
	}
	for x := range dis {
		set[x] = true
	}
	for x := range en {
		delete(set, x)
	}
	for x := range set {
		ignored = append(ignored, x)
	}
	sort.Slice(ignored, func(i, j int) bool { return ignored[i] < ignored[j] })
	return ignored, warnings
}

// parseXIDs reads one of NVIDIA's variables as newHealthCheckXIDs does:
// lower-cased, comma-separated, entries trimmed; "all" or "xids" means
// every XID.
func parseXIDs(name, value string) (xids map[uint64]bool, all bool, warnings []string) {
	xids = map[uint64]bool{}
	for _, e := range strings.Split(strings.ToLower(value), ",") {
		e = strings.TrimSpace(e)
		switch e {
		case "all", "xids":
			return nil, true, warnings
		case "":
			continue
		}
		x, err := strconv.ParseUint(e, 10, 64)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: ignoring malformed XID %q", name, e))
			continue
		}
		xids[x] = true
	}
	return xids, false, warnings
}
