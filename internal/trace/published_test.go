// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestPublishedHashes: each published result's SHA-256 is that of the
// public file it names.
func TestPublishedHashes(t *testing.T) {
	for _, p := range PublishedResults {
		data, err := os.ReadFile(testenv.Openb(t, p.File))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != p.SHA256 {
			t.Errorf("%s: SHA-256 %s, table has %s", p.File, got, p.SHA256)
		}
	}
}
