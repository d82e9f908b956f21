// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// fact is what the agent reads of one GPU, for hack/gpu-check.sh to
// compare with nvidia-smi: the SM count and one frame-buffer sample (MiB,
// DCGM_FI_DEV_FB_USED, _FREE, _RESERVED; -1 where the backend has none).
type fact struct {
	UUID            string  `json:"uuid"`
	Product         string  `json:"product"`
	Multiprocessors int     `json:"multiprocessors"`
	MemoryMiB       int64   `json:"memoryMiB"`
	FBUsedMiB       float64 `json:"fbUsedMiB"`
	FBFreeMiB       float64 `json:"fbFreeMiB"`
	FBReservedMiB   float64 `json:"fbReservedMiB"`
}

// facts samples b once and returns the facts of node n's GPUs (MIG
// devices are not listed: nvidia-smi's --query-gpu has whole GPUs only).
func facts(ctx context.Context, b device.Backend, n device.Node) ([]fact, error) {
	ss, err := b.Sample(ctx)
	if err != nil {
		return nil, err
	}
	byUUID := map[string]device.Sample{}
	for _, s := range ss {
		byUUID[s.UUID] = s
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	var out []fact
	for _, g := range n.GPUs {
		s := byUUID[g.UUID]
		out = append(out, fact{UUID: g.UUID, Product: g.ProductName, Multiprocessors: g.Multiprocessors, MemoryMiB: g.MemoryMiB,
			FBUsedMiB: val(s.FBUsedMiB), FBFreeMiB: val(s.FBFreeMiB), FBReservedMiB: val(s.FBReservedMiB)})
	}
	return out, nil
}

// writeFacts writes the facts as JSON to path and prints a PASS or FAIL
// line per GPU for its SM count: known (not 0) for every GPU of a product
// NVML or the catalog knows.
func writeFacts(w io.Writer, path string, fs []fact) error {
	data, err := json.MarshalIndent(fs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	for _, f := range fs {
		verdict := "PASS"
		if f.Multiprocessors <= 0 {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s sm-count %s (%s): %d multiprocessors\n", verdict, f.UUID, f.Product, f.Multiprocessors)
	}
	return nil
}
