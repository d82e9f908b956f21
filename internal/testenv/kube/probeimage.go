// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ProbeImage is the name of the test image that a real-container node
// imports (KubeletOptions.Containerd): one layer holding /probe (package
// probe, a static Go program), entrypoint /probe, default argument
// "pause", so that it is the pod sandbox's image too. A container that
// runs it with the argument "devices" prints its device nodes and
// environment (KubeletNode.ContainerLog reads them).
const ProbeImage = "gpuplane.test/probe:1"

// writeProbeImage builds package probe (CGO_ENABLED=0) and writes the
// probe image as an OCI image archive (an OCI image layout in a tar, the
// image named in index.json's io.containerd.image.name and
// org.opencontainers.image.ref.name annotations, as hack/image's `make
// image` does) to dir/probe.tar, which it returns.
func writeProbeImage(dir string) (string, error) {
	bin := filepath.Join(dir, "probe")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/gpuplane/gpuplane/internal/testenv/kube/probe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the probe: %w: %s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: "probe", Mode: 0o755, Size: int64(len(prog)), Typeflag: tar.TypeReg}); err != nil {
		return "", err
	}
	if _, err := tw.Write(prog); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint, cf.Config.Cmd = []string{"/probe"}, []string{"pause"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	lp := filepath.Join(dir, "probe-layout")
	p, err := layout.Write(lp, empty.Index)
	if err != nil {
		return "", err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          ProbeImage,
		"org.opencontainers.image.ref.name": "1",
	}), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH})); err != nil {
		return "", err
	}
	archive := filepath.Join(dir, "probe.tar")
	return archive, tarDir(lp, archive)
}

// tarDir writes the files under dir (paths relative to it) as a tar.
func tarDir(dir, archive string) error {
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
