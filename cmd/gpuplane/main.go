// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpuplane is gpuplane's offline tool, the one a user runs on a
// laptop: simulate (internal/sim/cli), quota (internal/quota), policy
// check and version; `gpuplane cost` runs the gpuplane-cost binary
// (cost.go). It links no go-nvml, Kubernetes, gRPC or Prometheus package,
// and parses its flags with the standard library's flag package rather
// than cobra (cobra's pflag brings in net and with it cgo): a first `go run ./cmd/gpuplane simulate`
// compiles in seconds, not minutes. The in-cluster roles are separate
// binaries (cmd/gpuplane-node-agent).
//
// This file wires the command line only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/gpuplane/gpuplane/internal/hint"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
	"github.com/gpuplane/gpuplane/internal/version"
)

const usage = `gpuplane is the offline tool of gpuplane, a GPU platform for Kubernetes.

Usage:
  gpuplane simulate [flags]   simulate a GPU cluster under placement policies (gpuplane simulate --help)
  gpuplane quota [flags]      turn a teams file into Kueue quota objects (gpuplane quota --help)
  gpuplane policy check       apply a GPU admission policy to manifests offline (gpuplane policy check --help)
  gpuplane policy vap         the policy's CEL rules as a ValidatingAdmissionPolicy (gpuplane policy vap --help)
  gpuplane cost [flags]       GPU cost per pod, job, team from Prometheus; runs gpuplane-cost (gpuplane cost --help)
  gpuplane completion SHELL   print a completion script for bash, zsh or fish
  gpuplane version            print the version, commit and Go version (also: gpuplane --version)
`

func main() { os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr)) }

// execute runs the command line args and returns the exit status: 0; 2
// on a usage error or bad input (a flag refused, an input file missing or
// refused: cli.IsBadInput); 1 when a run that read its inputs failed (a
// report not written); 130 when interrupted.
func execute(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "simulate":
		err = runSimulate(args[1:], stdout, stderr)
	case "quota":
		err = runQuota(args[1:], stdout, stderr)
	case "policy":
		err = runPolicy(args[1:], stdout, stderr)
	case "cost":
		return runCost(args[1:], stdout, stderr)
	case "completion":
		err = runCompletion(args[1:], stdout)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version.Get().String("gpuplane"))
	case "help", "--help", "-help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		msg := fmt.Sprintf("gpuplane: unknown command %q", args[0])
		if strings.HasPrefix(args[0], "-") {
			msg = fmt.Sprintf("gpuplane: unknown flag %s before a command", args[0])
		}
		best, bestD := "", 3
		for _, c := range commands {
			if d := hint.Distance(strings.ToLower(strings.TrimLeft(args[0], "-")), c); d < bestD {
				best, bestD = c, d
			}
		}
		if best != "" {
			msg += fmt.Sprintf("; did you mean %q?", best)
		}
		fmt.Fprintln(stderr, msg+" (gpuplane help lists the commands)")
		return 2
	}
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2 // command.parse has printed the error in one line
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "gpuplane: interrupted")
		return 130
	case cli.IsBadInput(err):
		fmt.Fprintln(stderr, "gpuplane:", err)
		return 2
	}
	fmt.Fprintln(stderr, "gpuplane:", err)
	return 1
}

// errUsage marks a command line the flag package refused.
var errUsage = errors.New("usage error")

// runSimulate runs gpuplane simulate with args; Ctrl-C cancels the run.
func runSimulate(args []string, stdout, stderr io.Writer) error {
	c, o := newSimulateCmd()
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	fs := c.fs
	if fs.NArg() > 0 {
		return cli.BadInput(fmt.Errorf("simulate takes no arguments, got %q", fs.Args()))
	}
	fs.Visit(func(f *flag.Flag) { o.InflateSet = o.InflateSet || f.Name == "inflate" })
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return cli.Run(ctx, *o, stdout, stderr)
}
