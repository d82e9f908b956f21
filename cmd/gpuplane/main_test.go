// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestOfflineDeps keeps the offline tool light: it must link no go-nvml
// (cgo), Kubernetes, gRPC or Prometheus package, which the in-cluster
// binaries need and which made a first `go run ./cmd/gpuplane simulate`
// compile for minutes, and no cgo or net at all (cobra's pflag
// would bring both: they cost about 40% of the cold build), nor NVIDIA's
// CDI generator (nvidia-container-toolkit's nvcdi, the node agent's).
func TestOfflineDeps(t *testing.T) {
	testenv.NoDeps(t, "k8s.io", "sigs.k8s.io", "google.golang.org/grpc", "github.com/NVIDIA/go-nvml", "github.com/NVIDIA/nvidia-container-toolkit", "tags.cncf.io", "github.com/prometheus", "github.com/spf13", "runtime/cgo", "net")
}

// TestCommandLine: help with two dashes that fits a screen, -o for
// --format, -h, and a refused flag answered in one line with the nearest.
func TestCommandLine(t *testing.T) {
	help, errOut, code := run(t, "simulate", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(help, "\n"), "\n")
	if len(lines) > 50 {
		t.Errorf("simulate --help is %d lines, more than a screen of 50", len(lines))
	}
	for _, l := range lines {
		if len([]rune(l)) > 100 {
			t.Errorf("help line of %d columns: %q", len([]rune(l)), l)
		}
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "-") && !strings.HasPrefix(f[0], "--") && f[0] != "-o," {
			t.Errorf("help names a flag with one dash: %q", l)
		}
	}
	for _, want := range []string{"  -o, --format FORMAT", "table, json or values", "      --nodes NODES", "frag %", "high\n                at the end of a fill, whatever the policy", "never started"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if h, _, code := run(t, "simulate", "-h"); code != 0 || h != help {
		t.Errorf("-h: exit %d, not the --help text", code)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--foramt", "json"}, "gpuplane simulate: unknown flag --foramt; did you mean --format? (gpuplane simulate --help lists the flags)"},
		{[]string{"simulate", "-sharin", "mig"}, "unknown flag --sharin; did you mean --sharing?"},
		{[]string{"simulate", "--seeds", "x"}, `invalid value "x" for --seeds: parse error`},
		{[]string{"simulate", "--nodes"}, "--nodes needs a value"},
		// A forgotten value must not swallow the next flag.
		{[]string{"simulate", "--out", "--force"}, "gpuplane simulate: --out needs a value"},
		{[]string{"simulate", "--gpu-api", "--seeds", "1"}, "--gpu-api needs a value"},
		{[]string{"quota", "--teams", "--nodes=x"}, "gpuplane quota: --teams needs a value"},
		// An empty value would silently turn the option off.
		{[]string{"simulate", "--teams", ""}, "gpuplane simulate: --teams: empty value; give one, or leave the flag out"},
		{[]string{"simulate", "--sharing", "mig", "--mig-config="}, "gpuplane simulate: --mig-config: empty value"},
		{[]string{"simulate", "--nodes", " "}, "--nodes: empty value"},
		{[]string{"quota", "--teams", "", "--nodes", "T4 x 1"}, "gpuplane quota: --teams: empty value"},
		{[]string{"simulte"}, `gpuplane: unknown command "simulte"; did you mean "simulate"? (gpuplane help lists the commands)`},
		{[]string{"quota", "--team", "t.yaml"}, "gpuplane quota: unknown flag --team; did you mean --teams?"},
		{[]string{"policy", "check", "--polcy", "p.yaml"}, "gpuplane policy check: unknown flag --polcy; did you mean --policy?"},
	} {
		out, errOut, code := run(t, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
	out, _, code := run(t, "simulate", "-o", "json", "--policies", "fgd", "--seeds", "1")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("-o json: exit %d, %.40q", code, out)
	}
}

// failWriter refuses every write: a report that cannot be written.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestExitStatus: the one rule, 2 for a usage error or bad input, 1 for a
// run that read its inputs and then failed.
func TestExitStatus(t *testing.T) {
	var errb strings.Builder
	for _, args := range [][]string{
		{"simulate", "--nodes", "A100 x", "--pods", "p.csv"},            // a malformed node spec
		{"simulate", "--nodes", "no-such.csv", "--pods", "no-such.csv"}, // a missing file
		{"simulate", "--mode", "warp"},                                  // an option refused
		{"simulate", "extra"},                                           // an argument
		{"quota", "--teams", "no-such.yaml", "--nodes", "T4 x 1"},
		{"completion", "tcsh"},
	} {
		errb.Reset()
		if code := execute(args, io.Discard, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, errb.String())
		}
	}
	errb.Reset()
	code := execute([]string{"simulate", "--policies", "fgd", "--seeds", "1"}, failWriter{}, &errb)
	if code != 1 || !strings.HasSuffix(errb.String(), "gpuplane: disk full\n") {
		t.Errorf("report not written: exit %d, stderr %q; want 1 and the error", code, errb.String())
	}
}
