// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ulikunitz/xz"
)

// debianMirror is where a lock line's path is fetched from.
const debianMirror = "https://deb.debian.org/debian/"

// debPkg is one line of debian.lock: a Debian binary package pinned by
// version and by the SHA256 of its .deb.
type debPkg struct {
	Name, Version, Arch string
	// SHA256 is the .deb's, lowercase hex (apt-cache show's SHA256 field).
	SHA256 string
	// Path is the .deb's path under the mirror (apt-cache show's Filename).
	Path string
}

// readLock reads debian.lock: one package a line as "name version
// architecture sha256 path"; blank lines and lines starting with # are
// skipped. An error names the file, the line and the field.
func readLock(path string) ([]debPkg, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pkgs []debPkg
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 5: name version architecture sha256 path", path, n, len(f))
		}
		p := debPkg{Name: f[0], Version: f[1], Arch: f[2], SHA256: f[3], Path: f[4]}
		if h, err := hex.DecodeString(p.SHA256); err != nil || len(h) != sha256.Size || p.SHA256 != strings.ToLower(p.SHA256) {
			return nil, fmt.Errorf("%s:%d: sha256 %q: want 64 lowercase hex digits", path, n, p.SHA256)
		}
		if !strings.HasPrefix(p.Path, "pool/") || !strings.HasSuffix(p.Path, ".deb") || strings.Contains(p.Path, "..") {
			return nil, fmt.Errorf("%s:%d: path %q: want pool/.../<name>.deb", path, n, p.Path)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, sc.Err()
}

// forArch returns the locked packages an image of the Debian architecture
// arch (amd64, arm64) installs: those of arch and of "all". It is an error
// when a package has no line for arch.
func forArch(pkgs []debPkg, arch string) ([]debPkg, error) {
	var out []debPkg
	names := map[string]bool{}
	found := map[string]bool{}
	for _, p := range pkgs {
		names[p.Name] = true
		if p.Arch == arch || p.Arch == "all" {
			out = append(out, p)
			found[p.Name] = true
		}
	}
	for n := range names {
		if !found[n] {
			return nil, fmt.Errorf("debian.lock: %s has no line for architecture %s", n, arch)
		}
	}
	return out, nil
}

// debClient fetches the .debs; a stalled mirror fails the build instead
// of hanging it.
var debClient = &http.Client{Timeout: 5 * time.Minute}

// errOffline is wrapped by fetchDeb when the mirror cannot be reached.
var errOffline = errors.New("deb.debian.org unreachable")

// fetchDeb returns the .deb of p: from cacheDir (as <sha256>.deb) when it
// is there and its SHA256 matches, else downloaded from the mirror,
// checked and cached. A download whose SHA256 differs is refused.
func fetchDeb(ctx context.Context, cacheDir string, p debPkg) ([]byte, error) {
	cached := filepath.Join(cacheDir, p.SHA256+".deb")
	if b, err := os.ReadFile(cached); err == nil && sumHex(b) == p.SHA256 {
		return b, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, debianMirror+p.Path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := debClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %v", p.Name, p.Version, errOffline, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: GET %s: %s (a version Debian's mirror no longer serves: update hack/image/debian.lock)", p.Name, p.Version, req.URL, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: GET %s: %w", p.Name, p.Version, req.URL, err)
	}
	if got := sumHex(b); got != p.SHA256 {
		return nil, fmt.Errorf("%s %s: %s has SHA256 %s, debian.lock says %s", p.Name, p.Version, req.URL, got, p.SHA256)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	tmp := cached + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return nil, err
	}
	return b, os.Rename(tmp, cached)
}

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// arMembers returns the members of an ar archive (a .deb) by name. Only
// the common format (names up to 16 bytes, Debian's) is read.
func arMembers(b []byte) (map[string][]byte, error) {
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("not an ar archive (no !<arch> magic)")
	}
	out := map[string][]byte{}
	for off := len(magic); off < len(b); {
		if off+60 > len(b) {
			return nil, fmt.Errorf("ar: truncated header at byte %d", off)
		}
		h := b[off : off+60]
		if string(h[58:60]) != "`\n" {
			return nil, fmt.Errorf("ar: bad header at byte %d", off)
		}
		name := strings.TrimSuffix(strings.TrimRight(string(h[0:16]), " "), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(h[48:58])))
		if err != nil || size < 0 || off+60+size > len(b) {
			return nil, fmt.Errorf("ar: member %q: bad size %q", name, h[48:58])
		}
		out[name] = b[off+60 : off+60+size]
		off += 60 + size + size%2
	}
	return out, nil
}

// debContents returns a .deb's control file (the package's stanza as
// dpkg's status database keeps it) and calls fn for each entry of its
// data.tar.xz, the files it installs.
func debContents(deb []byte, fn func(h *tar.Header, r io.Reader) error) (control []byte, err error) {
	m, err := arMembers(deb)
	if err != nil {
		return nil, err
	}
	for _, want := range []string{"control.tar.xz", "data.tar.xz"} {
		if _, ok := m[want]; !ok {
			return nil, fmt.Errorf("no %s member (only .deb files compressed with xz are read)", want)
		}
	}
	err = walkTarXZ(m["control.tar.xz"], func(h *tar.Header, r io.Reader) error {
		if filepath.Clean(h.Name) == "control" {
			control, err = io.ReadAll(r)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("control.tar.xz: %w", err)
	}
	if control == nil {
		return nil, errors.New("control.tar.xz has no control file")
	}
	if err := walkTarXZ(m["data.tar.xz"], fn); err != nil {
		return nil, fmt.Errorf("data.tar.xz: %w", err)
	}
	return control, nil
}

// walkTarXZ calls fn for each entry of an xz-compressed tar.
func walkTarXZ(b []byte, fn func(h *tar.Header, r io.Reader) error) error {
	zr, err := xz.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}
