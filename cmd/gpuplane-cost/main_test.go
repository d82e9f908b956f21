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
		cmd := newCostCmd()
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
