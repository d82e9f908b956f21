// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// proc is one control-plane process with its output in a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	// bin, args, env and attr are what it was started with, to start it
	// again.
	bin       string
	args, env []string
	attr      *syscall.SysProcAttr
	// asked is set before Stop, StopComponent or Kill signal it: its exit
	// was asked for, not a crash.
	asked atomic.Bool
	// done is closed when the process has exited; err is then Wait's result.
	done chan struct{}
	err  error
}

// startProc starts bin with args and env added to this process's
// environment, stdout and stderr appended to logFile.
// onExit runs once the process has exited. The process is killed if the
// thread that started it dies, so a crashed test leaves nothing running.
func startProc(name, bin string, args, env []string, logFile string, onExit func(*proc)) (*proc, error) {
	return startProcAttr(name, bin, args, env, logFile, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}, onExit)
}

// startProcAttr is startProc with the process attributes given (they
// should include Pdeathsig).
func startProcAttr(name, bin string, args, env []string, logFile string, attr *syscall.SysProcAttr, onExit func(*proc)) (*proc, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logFile, bin: bin, args: args, env: env, attr: attr, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
		onExit(p)
	}()
	return p, nil
}

// exitError describes a process that exited, with the tail of its log.
func (p *proc) exitError() error {
	status := "exited"
	if p.err != nil {
		status = p.err.Error()
	}
	return fmt.Errorf("%s (pid %d) %s; last lines of %s:\n%s", p.name, p.cmd.Process.Pid, status, p.log, tail(p.log, 15))
}

// stop sends SIGTERM and waits for the process to exit, killing it after
// grace. It returns an error only when the process had to be killed.
func (p *proc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	p.asked.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM and was killed; last lines of %s:\n%s", p.name, p.cmd.Process.Pid, grace, p.log, tail(p.log, 15))
}

// kill sends SIGKILL (a crash, no shutdown) and waits for the exit.
func (p *proc) kill() {
	p.asked.Store(true)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tail returns the last n lines of a file (at most 8 KiB of it).
func tail(file string, n int) string {
	f, err := os.Open(file)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	const max = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
