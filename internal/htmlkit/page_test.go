// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package htmlkit

import (
	"strings"
	"testing"
)

func TestHead(t *testing.T) {
	h := Head("a <b>", ".x{color:red}")
	for _, want := range []string{"<!DOCTYPE html>", "<title>a &lt;b&gt;</title>", "<style>" + CSS + ".x{color:red}</style>"} {
		if !strings.Contains(h, want) {
			t.Errorf("Head lacks %q:\n%s", want, h)
		}
	}
	if !strings.HasSuffix(h, "<body>") {
		t.Errorf("Head does not end at <body>: %s", h)
	}
}
