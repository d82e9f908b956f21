// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/node/dra"
)

// TestDRAConsumableShares: --dra-consumable-shares takes NVIDIA's
// --consumable-shares modes (sigs.k8s.io/dra-driver-nvidia-gpu, commit
// 95932046, cmd/gpu-kubelet-plugin/main.go: memory, unlimited, a
// positive integer; gpuplane at most 1000), and only with the DRA API.
func TestDRAConsumableShares(t *testing.T) {
	for _, c := range []struct {
		val  string
		dra  bool
		want dra.ShareMode
		err  string
	}{
		{"", true, dra.ShareMode{}, ""},
		{"memory", true, dra.ShareMode{}, ""},
		{"unlimited", true, dra.ShareMode{Unlimited: true}, ""},
		{"4", true, dra.ShareMode{Shares: 4}, ""},
		{"0", true, dra.ShareMode{}, `--dra-consumable-shares: consumable shares "0"`},
		{"unlimited", false, dra.ShareMode{}, "need --kubelet-api=dra"},
	} {
		o := DRAOptions{ConsumableShares: c.val}
		err := o.check(c.dra)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q (dra %v): error %v, want %q", c.val, c.dra, err, c.err)
			}
			continue
		}
		m, merr := o.shareMode()
		if err != nil || merr != nil || m != c.want {
			t.Errorf("%q: %+v, %v %v; want %+v", c.val, m, err, merr, c.want)
		}
	}
}
