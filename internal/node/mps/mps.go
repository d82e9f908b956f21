// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package mps runs NVIDIA's MPS control daemons (nvidia-cuda-mps-control)
// for the node agent, on both of its paths: the DRA plugin's claims under
// an MPS configuration (internal/node/dra) and the device plugin's
// sharing.mps replicas (internal/node/deviceplugin). A daemon has a
// directory of its own, <dir>/<ID>, holding its pipe and log directories
// and two marks: launched (the control program's -d ran, or was cut
// short, so a daemon may run: it must be told to quit) and started
// (launched and configured). The marks let a restarted agent find and
// stop what an earlier one started.
package mps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
)

const (
	// DefaultControl is NVIDIA's MPS control program, looked up on PATH.
	DefaultControl = "nvidia-cuda-mps-control"
	// launchedMark and startedMark are the daemon's marks in its
	// directory.
	launchedMark = "launched"
	startedMark  = "started"
	// timeout bounds one run of the control program.
	timeout = 30 * time.Second
)

// Daemon is one MPS control daemon.
type Daemon struct {
	// ID names the daemon and its directory.
	ID string
	// Root is the daemon's directory; PipeDir and LogDir are in it.
	Root, PipeDir, LogDir string
	// UUIDs are the GPUs or MIG devices it serves (CUDA_VISIBLE_DEVICES).
	UUIDs []string
}

// New returns daemon id of directory dir (its Root is dir/id) serving
// uuids; uuids may be nil for a daemon only to be stopped.
func New(dir, id string, uuids []string) Daemon {
	root := filepath.Join(dir, id)
	return Daemon{ID: id, Root: root, PipeDir: filepath.Join(root, "pipe"), LogDir: filepath.Join(root, "log"), UUIDs: uuids}
}

// Settings are what a daemon is told once launched.
type Settings struct {
	// ActiveThreadPercentage, when set, is the default active thread
	// percentage of each client (set_default_active_thread_percentage),
	// 1..100.
	ActiveThreadPercentage *int
	// PinnedMemLimits are the default pinned device memory limits of each
	// client, by device UUID, as the control program takes them, "<MiB>M"
	// (set_default_device_pinned_mem_limit); a device missing has none.
	PinnedMemLimits map[string]string
}

// commands are the control commands of s for daemon m, in order.
func (s Settings) commands(m Daemon) []string {
	var cmds []string
	if s.ActiveThreadPercentage != nil {
		cmds = append(cmds, fmt.Sprintf("set_default_active_thread_percentage %d", *s.ActiveThreadPercentage))
	}
	for _, u := range m.UUIDs {
		if v, ok := s.PinnedMemLimits[u]; ok {
			cmds = append(cmds, fmt.Sprintf("set_default_device_pinned_mem_limit %s %s", u, v))
		}
	}
	return cmds
}

// Control runs the control program. The zero value runs DefaultControl.
type Control struct {
	// Program is the control program (a name looked up on PATH, or a
	// path); empty: DefaultControl.
	Program string
}

// Name is the program run: c.Program, else DefaultControl.
func (c Control) Name() string { return c.program() }

// program is c.Program, else DefaultControl.
func (c Control) program() string {
	if c.Program != "" {
		return c.Program
	}
	return DefaultControl
}

// Find reports exec.LookPath's error when the control program cannot be
// found.
func (c Control) Find() error {
	_, err := exec.LookPath(c.program())
	return err
}

// Started reports whether daemon m was started and configured (its mark).
func Started(m Daemon) bool {
	_, err := os.Stat(filepath.Join(m.Root, startedMark))
	return err == nil
}

// Start starts daemon m and tells it s, unless it was started before (its
// mark). A daemon launched but not configured (an interrupted start) is
// told to quit first. A failure after the launch leaves the daemon
// launched (its mark): Stop tells it to quit. Errors name the daemon.
func (c Control) Start(ctx context.Context, m Daemon, s Settings) error {
	if Started(m) {
		return nil
	}
	if err := c.Stop(ctx, New(filepath.Dir(m.Root), m.ID, nil)); err != nil {
		return err
	}
	for _, dir := range []string{m.PipeDir, m.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("MPS control daemon %s: %w", m.ID, err)
		}
	}
	if err := c.run(ctx, m, ""); err != nil {
		if mayHaveLaunched(err) {
			_ = os.WriteFile(filepath.Join(m.Root, launchedMark), nil, 0o644) // best effort: Stop tries quit
		}
		return err
	}
	if err := os.WriteFile(filepath.Join(m.Root, launchedMark), []byte(strings.Join(m.UUIDs, ",")+"\n"), 0o644); err != nil {
		_ = c.run(ctx, m, "quit") // without its mark nothing would stop it
		return fmt.Errorf("MPS control daemon %s: %w", m.ID, err)
	}
	cmds := s.commands(m)
	for _, cmd := range cmds {
		if err := c.run(ctx, m, cmd); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(filepath.Join(m.Root, startedMark), []byte(strings.Join(m.UUIDs, ",")+"\n"), 0o644); err != nil {
		return fmt.Errorf("MPS control daemon %s: %w", m.ID, err)
	}
	klog.FromContext(ctx).Info("Started an MPS control daemon", "daemon", m.ID, "devices", m.UUIDs, "commands", cmds)
	return nil
}

// mayHaveLaunched reports whether a failed run of the control program
// with -d may have left a daemon running: it was started and did not
// exit by itself (killed at the timeout or by a signal). A program that
// could not be run, or that exited with an error, started none.
func mayHaveLaunched(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && !ee.Exited()
}

// Stop stops daemon m: a launched daemon (either mark) is told to quit;
// then its directory is removed. A daemon never launched (no directory,
// or one without a mark: the control program could not run or failed)
// needs no quit and is no error.
func (c Control) Stop(ctx context.Context, m Daemon) error {
	if _, err := os.Stat(m.Root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	launched := false
	for _, mark := range []string{launchedMark, startedMark} {
		if _, err := os.Stat(filepath.Join(m.Root, mark)); err == nil {
			launched = true
		}
	}
	if launched {
		if err := c.run(ctx, m, "quit"); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(m.Root); err != nil {
		return fmt.Errorf("MPS control daemon %s: %w", m.ID, err)
	}
	if launched {
		klog.FromContext(ctx).Info("Stopped an MPS control daemon", "daemon", m.ID)
	}
	return nil
}

// run runs the control program for daemon m: with cmd empty it starts
// the daemon (-d; its output goes to start.log in the log directory,
// since the daemon keeps it open), else it sends cmd on its standard
// input, as `echo cmd | nvidia-cuda-mps-control` does. The environment
// names the daemon's devices (CUDA_VISIBLE_DEVICES), pipe and log
// directories, as NVIDIA's plugins set them.
func (c Control) run(ctx context.Context, m Daemon, cmd string) error {
	prog := c.program()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var x *exec.Cmd
	var out bytes.Buffer
	if cmd == "" {
		x = exec.CommandContext(ctx, prog, "-d")
		f, err := os.OpenFile(filepath.Join(m.LogDir, "start.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("MPS control daemon %s: %w", m.ID, err)
		}
		defer f.Close()
		x.Stdout, x.Stderr = f, f
	} else {
		x = exec.CommandContext(ctx, prog)
		x.Stdin = strings.NewReader(cmd + "\n")
		x.Stdout, x.Stderr = &out, &out
	}
	x.Env = append(os.Environ(),
		"CUDA_VISIBLE_DEVICES="+strings.Join(m.UUIDs, ","),
		"CUDA_MPS_PIPE_DIRECTORY="+m.PipeDir,
		"CUDA_MPS_LOG_DIRECTORY="+m.LogDir)
	if err := x.Run(); err != nil {
		what := "-d"
		if cmd != "" {
			what = strings.Fields(cmd)[0]
		}
		return fmt.Errorf("MPS control daemon %s: %s %s: %w: %s", m.ID, prog, what, err, strings.TrimSpace(out.String()))
	}
	return nil
}
