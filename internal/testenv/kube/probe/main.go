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
//	probe devices DIR...
//	               the same, and first, for each file under each DIR
//	               (not following links; a DIR missing is none):
//	                 file <path> <sha256 of its content, hex>
//
// Tests read the container's log (kube.KubeletNode.ContainerLog).
package main

import (
	"crypto/sha256"
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
	if len(os.Args) < 2 || (len(os.Args) > 2 && os.Args[1] != "devices") {
		fmt.Fprintln(os.Stderr, "usage: probe pause|devices [DIR...]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pause":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
		<-c
	case "devices":
		lines, err := files(os.Args[2:])
		if err == nil {
			var devs []string
			devs, err = devices("/dev")
			lines = append(lines, devs...)
		}
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

// files lists the regular files under dirs (not following links), as
// "file <path> <sha256 hex>", sorted by path within each dir; a dir that
// does not exist gives none.
func files(dirs []string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("file %s %x", p, sha256.Sum256(b)))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
