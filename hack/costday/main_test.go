// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"os"
	"testing"
)

// TestReproducible: the bundled examples/cost/day.om is what this program
// writes; regenerate it with `go run ./hack/costday > examples/cost/day.om`.
func TestReproducible(t *testing.T) {
	var b bytes.Buffer
	if err := Write(bufio.NewWriter(&b), Script()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../examples/cost/day.om")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatal("examples/cost/day.om differs from go run ./hack/costday; regenerate it")
	}
	if b.Len() > 200_000 {
		t.Errorf("day.om is %d bytes, over 200 KB", b.Len())
	}
}
