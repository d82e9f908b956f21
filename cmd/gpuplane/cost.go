// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// costBinary is the binary `gpuplane cost` runs: it links Prometheus's
// client, which the offline tool must not (TestOfflineDeps).
const costBinary = "gpuplane-cost"

// costArgv0 is the argv[0] gpuplane-cost is run with: it says "gpuplane
// cost:" in its errors when it sees it, "gpuplane-cost:" otherwise.
const costArgv0 = "gpuplane cost"

// runCost runs gpuplane-cost with args, as git and kubectl run their
// plugins: the binary beside this executable, else the first on PATH, with
// this process's standard input and the given outputs. It returns the
// exit status of gpuplane-cost, or 1 when there is none to run.
func runCost(args []string, stdout, stderr io.Writer) int {
	path := ""
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), costBinary); isExecutable(p) {
			path = p
		}
	}
	if path == "" {
		p, err := exec.LookPath(costBinary)
		if err != nil {
			fmt.Fprintf(stderr, "gpuplane: cost runs %[1]s, which is neither beside gpuplane nor on PATH; build it with `make cost` (bin/%[1]s; `make build` builds every binary) or `go build -o bin/ ./cmd/%[1]s`\n", costBinary)
			return 1
		}
		path = p
	}
	cmd := exec.Command(path, args...)
	// argv[0] "gpuplane cost": gpuplane-cost's errors and usage then name
	// the command the user typed (cmd/gpuplane-cost, progName).
	cmd.Args[0] = costArgv0
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	// Ctrl-C reaches gpuplane-cost too (same process group): let it
	// decide, and pass on a SIGTERM sent to this process alone.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "gpuplane: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGTERM {
				_ = cmd.Process.Signal(s)
			}
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &ee) && ee.ExitCode() > 0:
				return ee.ExitCode()
			case errors.As(err, &ee):
				return 1 // killed by a signal
			}
			fmt.Fprintf(stderr, "gpuplane: %v\n", err)
			return 1
		}
	}
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
