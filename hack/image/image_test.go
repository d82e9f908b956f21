// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const root = "../.."

var (
	buildOnce sync.Once
	built     string // the archive of the host's platform
	builtErr  error
)

// archivePath builds the image of the host's platform once for every test
// of the package (about a minute, most of it go build) and returns the
// archive. The .debs come from deb.debian.org: offline, the tests skip,
// unless CI is set (CI has the network), when they fail.
func archivePath(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the image is built for linux/amd64 and linux/arm64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpuplane-image-test-")
		if err != nil {
			builtErr = err
			return
		}
		built = filepath.Join(dir, "gpuplane-image.tar")
		builtErr = buildArchive(built)
	})
	if errors.Is(builtErr, errOffline) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but the image's .debs cannot be fetched: %v", builtErr)
		}
		t.Skipf("offline: %v", builtErr)
	}
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return built
}

// buildArchive builds the checkout's image for the host's platform to out,
// as make image does.
func buildArchive(out string) error {
	s, err := defaultSpec(root)
	if err != nil {
		return err
	}
	s.Log = io.Discard
	_, err = s.build(context.Background(), []platform{{OS: "linux", Arch: runtime.GOARCH}}, out)
	return err
}

// readArchive unpacks the archive into a directory and reads it back with
// go-containerregistry's OCI layout reader, as crane does for a layout
// directory; it returns the directory and the one image index.json names.
func readArchive(t *testing.T, path string) (string, v1.Image) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xf", path, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf %s: %v\n%s", path, err, out)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want 1", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return dir, img
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestReproducible builds the image a second time, from a fresh spec, and
// expects the same bytes, so the same digest.
func TestReproducible(t *testing.T) {
	first := archivePath(t)
	second := filepath.Join(t.TempDir(), "again.tar")
	if err := buildArchive(second); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		_, i1 := readArchive(t, first)
		_, i2 := readArchive(t, second)
		d1, _ := i1.Digest()
		d2, _ := i2.Digest()
		t.Fatalf("two builds of one checkout differ: %s and %s", d1, d2)
	}
}

// TestConfig checks the image's config against what the chart and git
// say: entrypoint, user, platform, and the org.opencontainers.image.*
// labels with the chart's appVersion (as helm renders it), HEAD's commit
// and HEAD's commit time (SOURCE_DATE_EPOCH when set).
func TestConfig(t *testing.T) {
	_, img := readArchive(t, archivePath(t))
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/bin/gpuplane-node-agent" {
		t.Errorf("entrypoint %q, want /usr/bin/gpuplane-node-agent", got)
	}
	if cf.Config.User != "0:0" {
		t.Errorf("user %q, want 0:0 (root, as NVIDIA's device plugin runs)", cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	_, tag := renderedImage(t)
	secs := os.Getenv("SOURCE_DATE_EPOCH")
	if secs == "" {
		secs = git(t, "log", "-1", "--format=%ct")
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(n, 0).UTC()
	want := map[string]string{
		"org.opencontainers.image.title":    "gpuplane",
		"org.opencontainers.image.source":   "https://github.com/gpuplane/gpuplane",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  tag,
		"org.opencontainers.image.revision": git(t, "rev-parse", "HEAD"),
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
	}
	for k, v := range want {
		if got := cf.Config.Labels[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	if !cf.Created.Time.Equal(created) {
		t.Errorf("created %s, want %s", cf.Created.Time, created)
	}
}

// renderedImage renders the chart as a user would (helm template, the
// kube version the tests run) and returns its one image reference and
// that reference's tag.
func renderedImage(t *testing.T) (ref, tag string) {
	t.Helper()
	helm, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but helm is not installed (.ci/run installs it)")
		}
		t.Skip("helm is not installed")
	}
	out, err := exec.Command(helm, "template", "gpuplane", filepath.Join(root, chartDir), "--kube-version", "1.37.2").CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	refs := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "image: "); ok {
			refs[strings.Trim(v, `"`)] = true
		}
	}
	if len(refs) != 1 {
		t.Fatalf("the rendered chart has %d image references %v, want 1", len(refs), refs)
	}
	for r := range refs {
		ref = r
	}
	return ref, ref[strings.LastIndex(ref, ":")+1:]
}

// TestChartReference: the name containerd imports the archive as
// (index.json), Docker's RepoTags (manifest.json), and what the chart's
// pods pull are one reference; the Docker form names the same image.
func TestChartReference(t *testing.T) {
	path := archivePath(t)
	dir, img := readArchive(t, path)
	want, _ := renderedImage(t)
	var index v1.IndexManifest
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	a := index.Manifests[0].Annotations
	if a["io.containerd.image.name"] != want {
		t.Errorf("index.json io.containerd.image.name %q, the chart pulls %q", a["io.containerd.image.name"], want)
	}
	if tag := want[strings.LastIndex(want, ":")+1:]; a["org.opencontainers.image.ref.name"] != tag {
		t.Errorf("index.json org.opencontainers.image.ref.name %q, want %q", a["org.opencontainers.image.ref.name"], tag)
	}
	var docker []struct{ RepoTags []string }
	readJSON(t, filepath.Join(dir, "manifest.json"), &docker)
	if len(docker) != 1 || len(docker[0].RepoTags) != 1 || docker[0].RepoTags[0] != want {
		t.Errorf("manifest.json %+v, want one image tagged %q", docker, want)
	}
	dimg, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Docker's form has no manifest of its own: a reader makes one with
	// Docker's media types, so the config and the layers are compared.
	if got, want := blobDigests(t, dimg), blobDigests(t, img); got != want {
		t.Errorf("Docker's form reads as config and layers %s, the OCI layout as %s", got, want)
	}
}

// blobDigests is an image's config digest and layer digests, in order.
func blobDigests(t *testing.T, img v1.Image) string {
	t.Helper()
	c, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	s := []string{c.String()}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, d.String())
	}
	return strings.Join(s, " ")
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestBinariesRun unpacks the image's layers and runs every binary's
// --version from them: in a chroot of the unpacked image when root (the
// node agent then loads the image's glibc through its own
// /lib64/ld-linux-x86-64.so.2, as in a container), else the agent through
// the image's dynamic loader with the image's library directory.
func TestBinariesRun(t *testing.T) {
	_, img := readArchive(t, archivePath(t))
	rootfs := unpack(t, img)
	commit := git(t, "rev-parse", "HEAD")
	_, tag := renderedImage(t)
	for _, b := range binaries {
		t.Run(b.Name, func(t *testing.T) {
			bin := filepath.Join(rootfs, "usr/bin", b.Name)
			checkLinking(t, rootfs, bin, b.Cgo)
			var cmd *exec.Cmd
			switch {
			case os.Geteuid() == 0:
				cmd = exec.Command("/usr/bin/"+b.Name, "--version")
				cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
				cmd.Dir = "/"
			case b.Cgo:
				ld, libdir := loader(rootfs)
				cmd = exec.Command(ld, "--library-path", libdir, bin, "--version")
			default:
				cmd = exec.Command(bin, "--version")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
			}
			want := b.Name + " version " + tag + ", commit " + commit + ", "
			if !strings.HasPrefix(string(out), want) {
				t.Errorf("%s --version printed %q, want it to start with %q", b.Name, out, want)
			}
		})
	}
}

// loader is the image's dynamic loader and library directory for the
// host's architecture (Debian's multiarch paths).
func loader(rootfs string) (ld, libdir string) {
	if runtime.GOARCH == "arm64" {
		libdir = filepath.Join(rootfs, "usr/lib/aarch64-linux-gnu")
		return filepath.Join(libdir, "ld-linux-aarch64.so.1"), libdir
	}
	libdir = filepath.Join(rootfs, "usr/lib/x86_64-linux-gnu")
	return filepath.Join(libdir, "ld-linux-x86-64.so.2"), libdir
}

// checkLinking: a cgo binary asks for an interpreter that the image has
// (through its /lib64 or /lib link into /usr) and every library it needs
// is in the image's library directory; any other binary is static.
func checkLinking(t *testing.T, rootfs, bin string, cgo bool) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				t.Fatal(err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if !cgo {
		if interp != "" {
			t.Errorf("%s asks for interpreter %s, want a static binary", bin, interp)
		}
		return
	}
	if _, err := os.Stat(inRoot(t, rootfs, interp)); err != nil {
		t.Errorf("interpreter %s is not in the image: %v", interp, err)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	_, libdir := loader(rootfs)
	for _, l := range libs {
		if _, err := os.Stat(filepath.Join(libdir, l)); err != nil {
			t.Errorf("needed library %s is not in the image: %v", l, err)
		}
	}
}

// inRoot resolves an absolute path inside rootfs, following the image's
// symbolic links (relative or absolute) as the kernel would after chroot.
func inRoot(t *testing.T, rootfs, p string) string {
	t.Helper()
	cur := ""
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for hops := 0; len(parts) > 0; {
		next := filepath.Join(cur, parts[0])
		parts = parts[1:]
		target, err := os.Readlink(filepath.Join(rootfs, next))
		if err != nil {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			t.Fatalf("%s: too many links", p)
		}
		if filepath.IsAbs(target) {
			cur = ""
		}
		parts = append(strings.Split(strings.Trim(target, "/"), "/"), parts...)
	}
	return filepath.Join(rootfs, cur)
}

// unpack applies the image's layers in order to a new directory.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	dir := t.TempDir()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			extract(t, dir, h, tr)
		}
		rc.Close()
	}
	return dir
}

func extract(t *testing.T, dir string, h *tar.Header, r io.Reader) {
	t.Helper()
	p := filepath.Join(dir, h.Name)
	var err error
	switch h.Typeflag {
	case tar.TypeDir:
		err = os.MkdirAll(p, os.FileMode(h.Mode).Perm())
	case tar.TypeReg:
		var b []byte
		if b, err = io.ReadAll(r); err == nil {
			err = os.WriteFile(p, b, os.FileMode(h.Mode).Perm())
		}
	case tar.TypeSymlink:
		err = os.Symlink(h.Linkname, p)
	case tar.TypeLink:
		err = os.Link(filepath.Join(dir, h.Linkname), p)
	default:
		t.Fatalf("%s: unexpected tar type %q", h.Name, h.Typeflag)
	}
	if err != nil && !(h.Typeflag == tar.TypeDir && os.IsExist(err)) {
		t.Fatalf("%s: %v", h.Name, err)
	}
}

// TestCABundle: the image's /etc/ssl/certs/ca-certificates.crt holds one
// certificate per file of ca-certificates' /usr/share/ca-certificates/mozilla,
// and each parses.
func TestCABundle(t *testing.T) {
	_, img := readArchive(t, archivePath(t))
	rootfs := unpack(t, img)
	crts, err := filepath.Glob(filepath.Join(rootfs, "usr/share/ca-certificates/mozilla/*.crt"))
	if err != nil || len(crts) == 0 {
		t.Fatalf("no mozilla certificates in the image (%v)", err)
	}
	b, err := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rest := b; ; n++ {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			t.Errorf("certificate %d of the bundle: %v", n+1, err)
		}
	}
	if n != len(crts) {
		t.Errorf("the bundle holds %d certificates, mozilla/ has %d files", n, len(crts))
	}
}
