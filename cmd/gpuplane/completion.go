// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
)

// commands are gpuplane's subcommands, as completion offers them.
var commands = []string{"simulate", "quota", "policy", "cost", "completion", "version", "help"}

// completed is what completion knows of a subcommand: its flags and, per
// flag, the words its value takes ("" for a file name).
type completed struct {
	name   string
	flags  []string // without dashes, sorted
	values map[string]string
	bools  map[string]bool
}

// completions describes the subcommands with flags, from their own flag
// sets, so that a new flag is completed without a change here.
func completions() []completed {
	sim, _ := newSimulateCmd()
	quota, _ := newQuotaCmd()
	pol, _, _, _ := newPolicyCmd()
	vap, _, _, _ := newPolicyVAPCmd()
	word := map[string]string{
		"mode": "fill replay", "format": "table json values", "o": "table json values", "tie-break": "random first", "gpu-api": "device-plugin dra", "dra-mig-order": "table core stale",
		"policies": "all " + strings.Join(placement.Names, " "), "sharing": "exclusive fractional mig timeslice:2 timeslice:4", "pod-vendors": "nvidia amd intel",
	}
	var out []completed
	for _, c := range []struct {
		name string
		cmd  *command
	}{{"simulate", sim}, {"quota", quota}, {"policy", pol}, {"vap", vap}} {
		k := completed{name: c.name, values: map[string]string{}, bools: map[string]bool{}}
		c.cmd.fs.VisitAll(func(f *flag.Flag) {
			k.flags = append(k.flags, f.Name)
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				k.bools[f.Name] = true
			}
			if c.name == "simulate" {
				k.values[f.Name] = word[f.Name]
			}
		})
		sort.Strings(k.flags)
		out = append(out, k)
	}
	return out
}

// runCompletion writes the completion script for a shell: gpuplane
// completion bash|zsh|fish.
func runCompletion(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return cli.BadInput(errors.New("completion takes one shell: bash, zsh or fish (for example: source <(gpuplane completion bash))"))
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(stdout, bashCompletion())
	case "zsh":
		// zsh runs the bash function through bashcompinit.
		fmt.Fprint(stdout, "#compdef gpuplane\n# gpuplane completion for zsh: source <(gpuplane completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	case "fish":
		fmt.Fprint(stdout, fishCompletion())
	default:
		return cli.BadInput(fmt.Errorf("completion: unknown shell %q (bash, zsh or fish)", args[0]))
	}
	return nil
}

func dashed(flags []string) string {
	var out []string
	for _, f := range flags {
		out = append(out, dashes(f))
	}
	return strings.Join(out, " ")
}

// bashCompletion is a bash completion function for gpuplane.
func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# gpuplane completion for bash: source <(gpuplane completion bash)
_gpuplane() {
    local cur prev sub
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    sub="${COMP_WORDS[1]}"
    COMPREPLY=()
    if [[ ${COMP_CWORD} -eq 1 ]]; then
        COMPREPLY=($(compgen -W "` + strings.Join(commands, " ") + `" -- "$cur"))
        return
    fi
    case "$sub" in
        completion)
            COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
            return
            ;;
        policy)
            if [[ ${COMP_CWORD} -eq 2 ]]; then
                COMPREPLY=($(compgen -W "check vap" -- "$cur"))
                return
            fi
            ;;
    esac
    if [[ "$sub" == policy && "${COMP_WORDS[2]}" == vap ]]; then
        sub=vap
    fi
    case "$sub $prev" in
`)
	for _, c := range completions() {
		var files []string
		for _, f := range c.flags {
			if c.bools[f] {
				continue
			}
			if w := c.values[f]; w != "" {
				fmt.Fprintf(&b, "        \"%s %s\")\n            COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n            return\n            ;;\n", c.name, dashes(f), w)
				continue
			}
			files = append(files, fmt.Sprintf("\"%s %s\"", c.name, dashes(f)))
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, "        %s)\n            COMPREPLY=($(compgen -f -- \"$cur\"))\n            return\n            ;;\n", strings.Join(files, "|"))
		}
	}
	b.WriteString("    esac\n    case \"$sub\" in\n")
	for _, c := range completions() {
		fmt.Fprintf(&b, "        %s)\n            COMPREPLY=($(compgen -W \"%s --help\" -- \"$cur\"))\n            ;;\n", c.name, dashed(c.flags))
	}
	b.WriteString("    esac\n}\ncomplete -o default -F _gpuplane gpuplane\n")
	return b.String()
}

// fishCompletion is fish's completion of gpuplane.
func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# gpuplane completion for fish: gpuplane completion fish | source\ncomplete -c gpuplane -f\n")
	fmt.Fprintf(&b, "complete -c gpuplane -n __fish_use_subcommand -a '%s'\n", strings.Join(commands, " "))
	b.WriteString("complete -c gpuplane -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	b.WriteString("complete -c gpuplane -n '__fish_seen_subcommand_from policy; and not __fish_seen_subcommand_from check vap' -a 'check vap'\n")
	for _, c := range completions() {
		for _, f := range c.flags {
			opt := "-l " + f
			if len(f) == 1 {
				opt = "-s " + f
			}
			fmt.Fprintf(&b, "complete -c gpuplane -n '__fish_seen_subcommand_from %s' %s", c.name, opt)
			switch w := c.values[f]; {
			case c.bools[f]:
			case w != "":
				fmt.Fprintf(&b, " -x -a '%s'", w)
			default:
				b.WriteString(" -r -F")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
