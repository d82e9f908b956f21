// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command image builds gpuplane's container image without a container
// runtime or daemon, with go-containerregistry, and writes it as an OCI
// image layout archive (`make image`: bin/gpuplane-image.tar). Same
// source, Go toolchain, debian.lock and epoch give the same digest.
// docs/image.md says what is in it and why this tool.
//
//	go run ./hack/image [--platform linux/amd64,linux/arm64] [--out FILE]
//
// It prints the archive's path and the image's name@digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hack/image:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "bin/gpuplane-image.tar", "archive to write")
	plats := flag.String("platform", "linux/"+runtime.GOARCH, "comma-separated platforms (linux/amd64, linux/arm64); more than one writes an image index; a cross build of the node agent needs CC_linux_<arch>")
	repo := flag.String("repository", "", "image repository (default: the chart's image.repository)")
	commit := flag.String("commit", "", "VCS commit for --version and the revision label (default: git rev-parse HEAD)")
	flag.Parse()
	ps, err := parsePlatforms(*plats)
	if err != nil {
		return err
	}
	s, err := defaultSpec(".")
	if err != nil {
		return err
	}
	if *repo != "" {
		s.Repository = *repo
	}
	if *commit != "" {
		s.Commit = *commit
	}
	d, err := s.build(context.Background(), ps, *out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s@%s\n", *out, s.ref(), d)
	return nil
}

// defaultSpec is the build of the checkout at root: the chart's
// repository and appVersion, HEAD's commit, the epoch SOURCE_DATE_EPOCH
// says or else HEAD's commit time, hack/image/debian.lock, and the .deb
// cache ${GPUPLANE_CACHE:-$HOME/.cache/gpuplane}/debs.
func defaultSpec(root string) (spec, error) {
	s := spec{Root: root, Log: os.Stderr}
	var err error
	if s.Repository, s.Version, err = chartImage(root); err != nil {
		return s, err
	}
	if s.Debs, err = readLock(filepath.Join(root, "hack/image/debian.lock")); err != nil {
		return s, err
	}
	s.Commit = gitOutput(root, "rev-parse", "HEAD")
	if s.Commit == "" {
		s.Commit = "unknown"
	}
	if s.Epoch, err = epoch(root); err != nil {
		return s, err
	}
	cache := os.Getenv("GPUPLANE_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return s, err
		}
		cache = filepath.Join(home, ".cache/gpuplane")
	}
	s.CacheDir = filepath.Join(cache, "debs")
	return s, nil
}

// epoch is SOURCE_DATE_EPOCH (seconds since 1970, the reproducible-builds
// convention) when set, else the commit time of HEAD, else 0.
func epoch(root string) (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	src := "SOURCE_DATE_EPOCH"
	if v == "" {
		v, src = gitOutput(root, "log", "-1", "--format=%ct"), "git log -1 --format=%ct"
	}
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("%s=%q: want seconds since 1970", src, v)
	}
	return time.Unix(n, 0).UTC(), nil
}

func gitOutput(root string, args ...string) string {
	b, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parsePlatforms reads "linux/amd64,linux/arm64".
func parsePlatforms(v string) ([]platform, error) {
	var ps []platform
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "linux/amd64", "linux/arm64":
			ps = append(ps, platform{OS: "linux", Arch: strings.TrimPrefix(f, "linux/")})
		default:
			return nil, fmt.Errorf("--platform %q: want linux/amd64 or linux/arm64 (Debian's libc6 is locked for those)", f)
		}
	}
	return ps, nil
}

// build writes the archive of the platforms' images to out: one image, or
// an index of one image per platform. It returns the digest of what
// index.json names (the image, or the index).
func (s spec) build(ctx context.Context, ps []platform, out string) (string, error) {
	var a *archive
	var err error
	if len(ps) == 1 {
		img, ierr := s.image(ctx, ps[0])
		if ierr != nil {
			return "", ierr
		}
		a, err = newArchive(img, s.ref())
	} else {
		idx, ierr := s.index(ctx, ps)
		if ierr != nil {
			return "", ierr
		}
		a, err = newArchive(idx, s.ref())
	}
	if err != nil {
		return "", err
	}
	if err := a.writeFile(out, s.Epoch); err != nil {
		return "", err
	}
	return a.digest, nil
}
