// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package atomicfile is gpuplane's one way to replace a file: all or
// nothing, and durable.
//
// Write and WriteFunc write into a temporary file in path's directory,
// set its mode, fsync it, rename it over path and fsync the directory.
// A reader sees the old file or the whole new one, never a part; a write
// that fails (the writer's error, a full disk) leaves the old file as it
// was and no temporary file behind; and once Write returns nil the new
// file survives a crash or power loss (the data and the rename are both
// on disk), on file systems that honour fsync.
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data, mode perm, all or nothing and durably
// (see the package doc).
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what write writes, mode perm, all or
// nothing and durably: when write (or the file system) fails, path is
// untouched, no temporary file is left and the error is returned. Once it
// returns nil, the new file survives a crash (see the package doc).
func WriteFunc(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // a second Close fails harmlessly
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs dir, so that a rename in it is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
