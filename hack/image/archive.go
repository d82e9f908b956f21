// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of index.json's one entry that name the image for the tools
// that import the archive: containerd's `ctr import` takes the full name
// from io.containerd.image.name, OCI tools the tag from
// org.opencontainers.image.ref.name.
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// archive is what writeArchive puts in the tar: the OCI image layout
// (oci-layout, index.json, blobs/sha256/<hex>) and, for a single image,
// Docker's manifest.json beside it, the layout `docker save` writes since
// Docker 25, so `docker load`, `crane push FILE` (Docker's form) and
// containerd's `ctr import` (the OCI form) read the one file.
type archive struct {
	files  map[string][]byte // path in the tar -> content
	digest string            // index.json's entry, "sha256:<hex>"
}

// newArchive lays out top (a v1.Image or a v1.ImageIndex) as an archive,
// with ref (repository:tag) in index.json's annotations and
// manifest.json's RepoTags.
func newArchive(top partial.Describable, ref string) (*archive, error) {
	a := &archive{files: map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
	}}
	desc, err := a.add(top)
	if err != nil {
		return nil, err
	}
	a.digest = desc.Digest.String()
	desc.ArtifactType = "" // an image, not an artifact: partial.Descriptor sets it from the config
	desc.Annotations = map[string]string{
		annotationContainerdName: ref,
		annotationRefName:        ref[strings.LastIndex(ref, ":")+1:],
	}
	index, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{*desc}})
	if err != nil {
		return nil, err
	}
	a.files["index.json"] = index
	if img, ok := top.(v1.Image); ok {
		m, err := dockerManifest(img, ref)
		if err != nil {
			return nil, err
		}
		a.files["manifest.json"] = m
	}
	return a, nil
}

// add puts the blobs of an image (manifest, config, layers) or of an
// index (its manifest and each image's) in the archive and returns its
// descriptor.
func (a *archive) add(d partial.Describable) (*v1.Descriptor, error) {
	switch x := d.(type) {
	case v1.Image:
		if err := a.blob(x.RawConfigFile); err != nil {
			return nil, err
		}
		layers, err := x.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range layers {
			if err := a.blob(func() ([]byte, error) { return readAll(l.Compressed) }); err != nil {
				return nil, err
			}
		}
		if err := a.blob(x.RawManifest); err != nil {
			return nil, err
		}
		return partial.Descriptor(x)
	case v1.ImageIndex:
		m, err := x.IndexManifest()
		if err != nil {
			return nil, err
		}
		for _, child := range m.Manifests {
			img, err := x.Image(child.Digest)
			if err != nil {
				return nil, err
			}
			if _, err := a.add(img); err != nil {
				return nil, err
			}
		}
		if err := a.blob(x.RawManifest); err != nil {
			return nil, err
		}
		return partial.Descriptor(x)
	}
	return nil, fmt.Errorf("%T is neither an image nor an index", d)
}

// blob stores content as blobs/sha256/<its sha256>.
func (a *archive) blob(content func() ([]byte, error)) error {
	b, err := content()
	if err != nil {
		return err
	}
	a.files[blobPath(v1.Hash{Algorithm: "sha256", Hex: sumHex(b)})] = b
	return nil
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

func readAll(open func() (io.ReadCloser, error)) ([]byte, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// dockerManifest is Docker's manifest.json for one image, its paths those
// of the OCI blobs.
func dockerManifest(img v1.Image, ref string) ([]byte, error) {
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return nil, err
		}
		paths = append(paths, blobPath(h))
	}
	return json.Marshal([]struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blobPath(cfg), RepoTags: []string{ref}, Layers: paths}})
}

// write writes the archive as a tar: directories first by path, files in
// byte order of their paths, owner 0:0, every time the epoch.
func (a *archive) write(w io.Writer, epoch time.Time) error {
	tw := tar.NewWriter(w)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(a.files))
	for n := range a.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := a.files[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeFile writes the archive to path through a temporary file beside
// it, so a failed build leaves no half archive.
func (a *archive) writeFile(path string, epoch time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".gpuplane-image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := a.write(f, epoch); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
