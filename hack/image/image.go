// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// spec is what one build of the image is made of.
type spec struct {
	Root       string // the module's root: ./cmd, LICENSE, the chart
	Repository string // e.g. ghcr.io/gpuplane/gpuplane (the chart's image.repository)
	Version    string // the chart's appVersion: the tag, and every binary's --version
	Commit     string // VCS commit, for --version and the revision label
	Epoch      time.Time
	Debs       []debPkg // the lock; each platform takes its architecture's
	CacheDir   string   // where fetched .debs are kept, by SHA256
	Log        io.Writer
}

// ref is the image's name and tag, as the chart renders it.
func (s spec) ref() string { return s.Repository + ":" + s.Version }

// Entrypoint, user and PATH of the image. It runs as root, as NVIDIA's
// device plugin does: the agent creates sockets in the kubelet's
// root-owned device-plugin directory. The chart sets command: for each role.
const (
	entrypoint = "/usr/bin/gpuplane-node-agent"
	user       = "0:0"
	pathEnv    = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// labels are the image's org.opencontainers.image.* labels (the OCI image
// spec's annotations), set in the config and on the manifest.
func (s spec) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "gpuplane",
		"org.opencontainers.image.description": "gpuplane's in-cluster roles: gpuplane-node-agent, gpuplane-scheduler, gpuplane-webhook, gpuplane-cost, with the gpuplane tool",
		"org.opencontainers.image.source":      "https://github.com/gpuplane/gpuplane",
		"org.opencontainers.image.url":         "https://github.com/gpuplane/gpuplane",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.revision":    s.Commit,
		"org.opencontainers.image.created":     s.Epoch.UTC().Format(time.RFC3339),
	}
}

// image builds the image of one platform: a Debian layer (the filesystem
// skeleton, the locked packages, the CA bundle and dpkg's status entries)
// under a layer of gpuplane's binaries and licence.
func (s spec) image(ctx context.Context, p platform) (v1.Image, error) {
	debs, err := forArch(s.Debs, p.Arch)
	if err != nil {
		return nil, err
	}
	base, err := s.debianTree(ctx, debs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gpuplane-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := goBuild(ctx, s.Root, p, s.Version, s.Commit, dir, s.Log); err != nil {
		return nil, err
	}
	top, err := s.gpuplaneTree(dir)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = appendLayer(img, base, s.Epoch, "hack/image: Debian packages "+debNames(debs)); err != nil {
		return nil, err
	}
	if img, err = appendLayer(img, top, s.Epoch, "hack/image: go build -trimpath ./cmd/... ("+p.String()+")"); err != nil {
		return nil, err
	}
	return s.configure(img, p)
}

// appendLayer adds the tree as a gzip-compressed OCI layer, with a history
// entry saying what made it.
func appendLayer(img v1.Image, t tree, epoch time.Time, createdBy string) (v1.Image, error) {
	gz, err := t.gzipLayer(epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: createdBy},
	})
}

// configure sets the image's platform, creation time, entrypoint, user,
// PATH and labels, and the labels as the manifest's annotations.
func (s spec) configure(img v1.Image, p platform) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.OS, p.Arch
	if p.Arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: s.Epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{entrypoint},
		User:       user,
		Env:        []string{pathEnv},
		WorkingDir: "/",
		Labels:     s.labels(),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, s.labels()).(v1.Image), nil
}

func debNames(debs []debPkg) string {
	var n []string
	for _, d := range debs {
		n = append(n, d.Name+"="+d.Version)
	}
	return strings.Join(n, " ")
}

// index builds one image per platform under an OCI image index.
func (s spec) index(ctx context.Context, ps []platform) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range ps {
		img, err := s.image(ctx, p)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	return mutate.Annotations(idx, s.labels()).(v1.ImageIndex), nil
}

// debianTree is the Debian layer: a merged-/usr skeleton (/bin, /lib,
// /lib64, /sbin are links into /usr, as Debian 13's base-files makes
// them, so the agent's interpreter /lib64/ld-linux-x86-64.so.2 or
// /lib/ld-linux-aarch64.so.1 resolves), /tmp, root's passwd and group
// entries, every file of each package's data.tar, the CA bundle
// ca-certificates' postinst would write, and each package's control
// stanza in /var/lib/dpkg/status.d (as distroless images keep them) so
// SBOM and vulnerability scanners see the packages.
func (s spec) debianTree(ctx context.Context, debs []debPkg) (tree, error) {
	t := tree{}
	for _, l := range [][2]string{{"bin", "usr/bin"}, {"lib", "usr/lib"}, {"lib64", "usr/lib64"}, {"sbin", "usr/sbin"}} {
		if err := t.add(l[0], &node{typ: tar.TypeSymlink, mode: 0o777, link: l[1]}); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		path string
		mode int64
	}{{"tmp", 0o1777}, {"root", 0o700}, {"usr/bin", 0o755}, {"usr/sbin", 0o755}, {"usr/lib64", 0o755}, {"var/lib/dpkg/status.d", 0o755}} {
		if err := t.add(d.path, &node{typ: tar.TypeDir, mode: d.mode}); err != nil {
			return nil, err
		}
	}
	for _, f := range [][2]string{
		{"etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\n"},
		{"etc/group", "root:x:0:\n"},
		{"etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"},
		{"etc/os-release", "PRETTY_NAME=\"gpuplane (Debian GNU/Linux 13 packages)\"\nNAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_ID=\"13\"\nVERSION_CODENAME=trixie\n"},
	} {
		if err := t.addFile(f[0], 0o644, []byte(f[1])); err != nil {
			return nil, err
		}
	}
	for _, d := range debs {
		b, err := fetchDeb(ctx, s.CacheDir, d)
		if err != nil {
			return nil, err
		}
		control, err := debContents(b, t.addTar)
		if err != nil {
			return nil, fmt.Errorf("%s %s (%s): %w", d.Name, d.Version, d.Path, err)
		}
		if err := t.addFile("var/lib/dpkg/status.d/"+d.Name, 0o644, control); err != nil {
			return nil, err
		}
	}
	bundle, err := caBundle(t)
	if err != nil {
		return nil, err
	}
	return t, t.addFile("etc/ssl/certs/ca-certificates.crt", 0o644, bundle)
}

// caBundle concatenates /usr/share/ca-certificates/mozilla/*.crt in byte
// order of their names, each ending in a newline, as update-ca-certificates
// does for a fresh install (its /etc/ca-certificates.conf lists them
// sorted). It is an error when there are none.
func caBundle(t tree) ([]byte, error) {
	var names []string
	for p, n := range t {
		if n.typ == tar.TypeReg && strings.HasPrefix(p, "usr/share/ca-certificates/mozilla/") && strings.HasSuffix(p, ".crt") {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no /usr/share/ca-certificates/mozilla/*.crt: is ca-certificates in debian.lock?")
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, p := range names {
		b.Write(t[p].data)
		if !bytes.HasSuffix(t[p].data, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// gpuplaneTree is the top layer: /usr/bin/<binary> for each of binaries
// (from dir, where goBuild put them) and the licence.
func (s spec) gpuplaneTree(dir string) (tree, error) {
	t := tree{}
	for _, b := range binaries {
		data, err := os.ReadFile(filepath.Join(dir, b.Name))
		if err != nil {
			return nil, err
		}
		if err := t.addFile("usr/bin/"+b.Name, 0o755, data); err != nil {
			return nil, err
		}
	}
	lic, err := os.ReadFile(filepath.Join(s.Root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	return t, t.addFile("usr/share/doc/gpuplane/copyright", 0o644, lic)
}
