// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// tree is the files of one image layer, by path relative to / ("usr/bin/x",
// no leading slash). Only what a layer needs to be reproducible is kept:
// type, mode, link target and content; owner is root and every time is the
// build's epoch when the layer is written.
type tree map[string]*node

type node struct {
	typ  byte // tar.TypeReg, tar.TypeDir, tar.TypeSymlink or tar.TypeLink
	mode int64
	link string // target of a symlink, or path of a hard link's file
	data []byte
}

// cleanPath turns a tar or image path ("./usr/lib/", "/etc/x") into the
// tree's form; "" for the root itself. A path with a ".." element is
// refused: no package of the image ships one.
func cleanPath(p string) (string, error) {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return "", fmt.Errorf("path %q has a .. element", p)
		}
	}
	return strings.TrimPrefix(path.Clean("/"+p), "/"), nil
}

// add puts one entry in the tree, with its parent directories (mode 0755)
// when missing. A directory may be added twice; anything else twice is an
// error, as two packages that ship one file would be.
func (t tree) add(p string, n *node) error {
	c, err := cleanPath(p)
	if err != nil {
		return err
	}
	if c == "" {
		return nil // the root directory is implied
	}
	if old, ok := t[c]; ok {
		if old.typ == tar.TypeDir && n.typ == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("/%s added twice", c)
	}
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		if old, ok := t[d]; ok {
			if old.typ != tar.TypeDir {
				return fmt.Errorf("/%s: parent /%s is not a directory", c, d)
			}
			continue
		}
		t[d] = &node{typ: tar.TypeDir, mode: 0o755}
	}
	t[c] = n
	return nil
}

// addFile adds a regular file.
func (t tree) addFile(p string, mode int64, data []byte) error {
	return t.add(p, &node{typ: tar.TypeReg, mode: mode, data: data})
}

// addTar adds one entry read from a tar (a .deb's data.tar). Character and
// block devices, FIFOs and other types are refused: no package of the
// image ships one.
func (t tree) addTar(h *tar.Header, r io.Reader) error {
	n := &node{mode: h.Mode & 0o7777}
	switch h.Typeflag {
	case tar.TypeDir:
		n.typ = tar.TypeDir
	case tar.TypeReg:
		n.typ = tar.TypeReg
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		n.data = b
	case tar.TypeSymlink:
		n.typ, n.link = tar.TypeSymlink, h.Linkname
	case tar.TypeLink:
		target, err := cleanPath(h.Linkname)
		if err != nil {
			return err
		}
		n.typ, n.link = tar.TypeLink, target
	default:
		return fmt.Errorf("tar entry type %q not supported", h.Typeflag)
	}
	return t.add(h.Name, n)
}

// write writes the tree as a gzip-compressed tar: entries sorted by path
// (so a parent comes before its children), owner 0:0, every time the
// epoch, no other metadata. Same tree and epoch, same bytes.
func (t tree) write(w io.Writer, epoch time.Time) error {
	names := make([]string, 0, len(t))
	for p := range t {
		names = append(names, p)
	}
	sort.Strings(names)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, p := range names {
		n := t[p]
		h := &tar.Header{Typeflag: n.typ, Name: p, Mode: n.mode, ModTime: epoch, Format: tar.FormatPAX}
		switch n.typ {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeReg:
			h.Size = int64(len(n.data))
		case tar.TypeSymlink, tar.TypeLink:
			h.Linkname = n.link
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("/%s: %w", p, err)
		}
		if _, err := tw.Write(n.data); err != nil {
			return fmt.Errorf("/%s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// gzipLayer returns the tree written by write.
func (t tree) gzipLayer(epoch time.Time) ([]byte, error) {
	var b bytes.Buffer
	err := t.write(&b, epoch)
	return b.Bytes(), err
}
