// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command probe is the one program of the test image that a test kubelet
// node with real containers (kube.KubeletOptions.Containerd) imports into
// containerd: a static binary, /probe, the image's entrypoint.
//
//	probe pause    the image's default: waits for SIGTERM or SIGINT and
//	               exits 0 (the pod sandbox's container, as
//	               registry.k8s.io/pause does)
//	probe devices  prints what the container was given, one line each,
//	               sorted, and exits 0:
//	                 device <path> <c|b> <major>:<minor>   every device
//	                   node under /dev but those every container gets
//	                 env <NAME>=<value>                   the environment
//
// Tests read the container's log (kube.KubeletNode.ContainerLog).
package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: probe pause|devices")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pause":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
		<-c
	case "devices":
		lines, err := devices("/dev")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		env := os.Environ()
		sort.Strings(env)
		for _, e := range env {
			lines = append(lines, "env "+e)
		}
		fmt.Print(strings.Join(lines, "\n") + "\n")
	default:
		fmt.Fprintf(os.Stderr, "probe: unknown mode %q (pause or devices)\n", os.Args[1])
		os.Exit(2)
	}
}

// defaultDevices are the device nodes the OCI runtime spec makes in every
// Linux container (opencontainers/runtime-spec config-linux.md, "Default
// Devices"), with /dev/console and the pty multiplexer.
var defaultDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true,
	"/dev/urandom": true, "/dev/tty": true, "/dev/console": true, "/dev/ptmx": true,
}

// devices lists the device nodes under root (not following links), the
// defaults and the pseudo-terminals (/dev/pts) left out, as
// "device <path> <c|b> <major>:<minor>", sorted by path.
func devices(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(root, "pts") {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeDevice == 0 || defaultDevices[p] {
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		kind := "b"
		if d.Type()&fs.ModeCharDevice != 0 {
			kind = "c"
		}
		// Linux's dev_t encoding (include/uapi/linux/kdev_t.h, glibc's
		// gnu_dev_major/minor).
		major := (st.Rdev>>8)&0xfff | (st.Rdev>>32)&^0xfff
		minor := st.Rdev&0xff | (st.Rdev>>12)&^0xff
		out = append(out, fmt.Sprintf("device %s %s %d:%d", p, kind, major, minor))
		return nil
	})
	return out, err
}
