// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// schedulerName is the supervisor's own component beside kube's.
const schedulerName = "gpuplane-scheduler"

// The control socket: one request line ("restart NAME", "restart-kill
// NAME", "kill NAME", "start NAME", "status"), answered with lines of
// text and a last line "ok" or "error: ...". A Unix socket in the
// cluster's directory: no port, and only its owner can connect (0600).
func socketPath(dir string) string { return filepath.Join(dir, "control.sock") }

// listenControl serves the control socket until ctx ends; the returned
// function closes it and removes the socket.
func listenControl(ctx context.Context, dir string, c *kube.Cluster, sched *schedulerProc) (func(), error) {
	path := socketPath(dir)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		if len(path) > 107 { // sun_path holds 108 bytes with the NUL
			return nil, fmt.Errorf("control socket %s: %w (a Unix socket path holds 107 bytes: use a shorter --dir)", path, err)
		}
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return // closed
			}
			// One request at a time: a restart finishes before the next.
			handle(ctx, conn, c, sched)
		}
	}()
	return func() { l.Close(); _ = os.Remove(path) }, nil
}

func handle(ctx context.Context, conn net.Conn, c *kube.Cluster, sched *schedulerProc) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	f := strings.Fields(line)
	say := func(format string, a ...any) { fmt.Fprintf(conn, format+"\n", a...) }
	if err := do(ctx, f, c, sched, say); err != nil {
		say("error: %v", err)
		return
	}
	say("ok")
}

// do carries out one request, reporting progress with say (to the client)
// and in the supervisor's log.
func do(ctx context.Context, f []string, c *kube.Cluster, sched *schedulerProc, say func(string, ...any)) error {
	if len(f) == 1 && f[0] == "status" {
		for _, name := range c.Components() {
			pid, running, _ := c.Pid(name)
			say("%-20s pid %-8d %s", name, pid, state(running))
		}
		if sched != nil {
			pid, running := sched.pid()
			say("%-20s pid %-8d %s", schedulerName, pid, state(running))
		}
		return nil
	}
	if len(f) != 2 {
		return fmt.Errorf("bad request %q", strings.Join(f, " "))
	}
	req, name := f[0], f[1]
	if name == schedulerName && sched == nil {
		return errors.New("this cluster runs no gpuplane-scheduler (make cluster starts one)")
	}
	if name != schedulerName {
		if _, _, err := c.Pid(name); err != nil {
			return err
		}
	}
	logf := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		fmt.Printf("%s: %s\n", time.Now().Format(time.RFC3339), msg)
		say("%s", msg)
	}
	start := time.Now()
	if req == "restart" || req == "restart-kill" || req == "kill" {
		how := "SIGTERM"
		if req != "restart" {
			how = "SIGKILL"
		}
		logf("stopping %s (%s)", name, how)
		switch {
		case name == schedulerName && how == "SIGKILL":
			sched.kill()
		case name == schedulerName:
			sched.stop()
		case how == "SIGKILL":
			if err := c.Kill(name); err != nil {
				return err
			}
		default:
			killed, err := c.StopComponent(name, 0)
			if err != nil {
				return err
			}
			if killed {
				logf("%s did not stop within the grace after SIGTERM and was killed", name)
			}
		}
		logf("%s stopped in %v", name, time.Since(start).Round(time.Millisecond))
	}
	if req == "restart" || req == "restart-kill" || req == "start" {
		t := time.Now()
		var err error
		if name == schedulerName {
			err = sched.start()
		} else {
			err = c.StartComponent(ctx, name)
		}
		if err != nil {
			return err
		}
		what := "started again"
		if name == kube.Etcd || name == kube.APIServer {
			what = "started again and ready"
		}
		logf("%s %s in %v", name, what, time.Since(t).Round(time.Millisecond))
		return nil
	}
	if req != "kill" {
		return fmt.Errorf("bad request %q", req)
	}
	return nil
}

func state(running bool) string {
	if running {
		return "running"
	}
	return "exited"
}

// control sends one request to the supervisor and prints its answer.
func control(dir, req string) error {
	if _, ok := running(dir); !ok {
		return errors.New("no cluster running (make cluster)")
	}
	conn, err := net.Dial("unix", socketPath(dir))
	if err != nil {
		return err
	}
	defer conn.Close()
	// Bounded: a restart takes the component's grace and its start (2
	// minutes at most) in the supervisor.
	_ = conn.SetDeadline(time.Now().Add(5 * time.Minute))
	if _, err := fmt.Fprintln(conn, req); err != nil {
		return err
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ok":
			return nil
		case strings.HasPrefix(line, "error: "):
			return errors.New(strings.TrimPrefix(line, "error: "))
		}
		if req == "status" {
			fmt.Println(line)
		} else {
			fmt.Fprintln(os.Stderr, "cluster:", line)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the supervisor closed the connection without an answer; see its log")
}
