// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

// --rightsize-threshold 0 and --step 0 are refused, not taken as the
// defaults (findings 11); the flags' defaults run.
func TestRightsizeThresholdZero(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rightsize-threshold", "0"}, "--rightsize-threshold 0: want a fraction in (0, 1]"},
		{[]string{"--rightsize-threshold", "1.5"}, "--rightsize-threshold 1.5: want a fraction in (0, 1]"},
		// --step 0 meant the default, unsaid.
		{[]string{"--step", "0"}, "--step 0: want a positive step (leave --step out for the default)"},
		{nil, ""},
	} {
		cmd := newCostCmd(name)
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"--openmetrics", "../../examples/cost/day.om"}, c.args...))
		err := cmd.Execute()
		if c.want == "" {
			if err != nil || !strings.Contains(out.String(), "818.16") {
				t.Errorf("%v: error %v, stdout %q", c.args, err, out.String())
			}
			continue
		}
		if err == nil || err.Error() != c.want || out.Len() != 0 {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// TestProgName: run by gpuplane (argv[0] "gpuplane cost") the command
// says "gpuplane cost", in errors (main) and usage; run under any other
// name or path, "gpuplane-cost".
func TestProgName(t *testing.T) {
	for argv0, want := range map[string]string{"gpuplane cost": "gpuplane cost", "/usr/local/bin/gpuplane-cost": "gpuplane-cost", "gpc": "gpuplane-cost", "": "gpuplane-cost"} {
		if got := progName(argv0); got != want {
			t.Errorf("progName(%q) = %q, want %q", argv0, got, want)
		}
	}
	if u := newCostCmd(viaGpuplane).UseLine(); !strings.HasPrefix(u, "gpuplane cost (--prometheus URL | --openmetrics FILE)") {
		t.Errorf("usage %q", u)
	}
}
