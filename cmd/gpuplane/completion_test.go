// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletion: the bash script completes subcommands, flags and their
// values, in bash itself when it is installed; zsh's wraps it; fish's names
// every flag.
func TestCompletion(t *testing.T) {
	script, errOut, code := run(t, "completion", "bash")
	if code != 0 || errOut != "" || !strings.Contains(script, "complete -o default -F _gpuplane gpuplane") {
		t.Fatalf("completion bash: exit %d, stderr %q", code, errOut)
	}
	if z, _, code := run(t, "completion", "zsh"); code != 0 || !strings.Contains(z, "bashcompinit") || !strings.Contains(z, script) {
		t.Errorf("completion zsh: exit %d", code)
	}
	fish, _, code := run(t, "completion", "fish")
	for _, want := range []string{"-n '__fish_seen_subcommand_from simulate' -l mode -x -a 'fill replay'",
		"-n '__fish_seen_subcommand_from simulate' -s o -x -a 'table json values'", "-n '__fish_seen_subcommand_from simulate' -l force\n",
		"-n '__fish_seen_subcommand_from quota' -l teams -r -F", "-n '__fish_seen_subcommand_from policy' -s f -r -F"} {
		if code != 0 || !strings.Contains(fish, want) {
			t.Errorf("fish script lacks %q", want)
		}
	}
	if _, errOut, code := run(t, "completion", "tcsh"); code != 2 || !strings.Contains(errOut, `unknown shell "tcsh"`) {
		t.Errorf("tcsh: exit %d, %q", code, errOut)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	file := filepath.Join(t.TempDir(), "gpuplane.bash")
	os.WriteFile(file, []byte(script), 0o644)
	for words, want := range map[string]string{
		"gpuplane si":                  "simulate",
		"gpuplane simulate --mo":       "--mode",
		"gpuplane simulate --mode ":    "fill replay",
		"gpuplane simulate -o ":        "table json values",
		"gpuplane simulate --tie-b":    "--tie-break",
		"gpuplane simulate --sharing ": "exclusive fractional mig timeslice:2 timeslice:4",
		"gpuplane quota --te":          "--teams",
		"gpuplane policy ":             "check vap",
		"gpuplane policy vap --exc":    "--exclude-namespace",
		"gpuplane completion ":         "bash zsh fish",
	} {
		w := strings.Split(words, " ")
		cmd := exec.Command(bash, "--norc", "-c", `source "$0"; COMP_WORDS=(`+strings.Join(quoteAll(w), " ")+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _gpuplane; echo "${COMPREPLY[*]}"`, file)
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%q: %q (%v), want %q", words, got, err, want)
		}
	}
}

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = "'" + w + "'"
	}
	return out
}
