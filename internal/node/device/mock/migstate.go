// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// The MIG state file (Options.MIGStateFile) keeps the live MIG layouts
// past the process, as a GPU keeps its MIG devices when the agent
// restarts: JSON, by GPU UUID, each layout's instances and the count of
// devices created on it (which seeds new UUIDs).

type migStateFile struct {
	GPUs map[string]migStateGPU `json:"gpus"`
}

type migStateGPU struct {
	Instances []device.MIGInstance `json:"instances"`
	Created   int                  `json:"created"`
}

// loadMIGState reads the state file into b.migs; a missing file is an
// empty state. An error names the file.
func (b *Backend) loadMIGState() error {
	data, err := os.ReadFile(b.migStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mock MIG state file: %w", err)
	}
	var f migStateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("mock MIG state file %s: %w", b.migStateFile, err)
	}
	b.migs = map[string]*migState{}
	for uuid, g := range f.GPUs {
		if _, err := b.gpuIndex(uuid); err != nil {
			return fmt.Errorf("mock MIG state file %s: %w", b.migStateFile, err)
		}
		b.migs[uuid] = &migState{insts: g.Instances, created: g.Created}
	}
	return nil
}

// saveMIGState writes b.migs to the state file, if there is one,
// atomically and durably (internal/atomicfile). b.migMu is held.
func (b *Backend) saveMIGState() error {
	if b.migStateFile == "" {
		return nil
	}
	f := migStateFile{GPUs: map[string]migStateGPU{}}
	for uuid, st := range b.migs {
		f.GPUs[uuid] = migStateGPU{Instances: st.insts, Created: st.created}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(b.migStateFile, data, 0o600); err != nil {
		return fmt.Errorf("mock MIG state file: %w", err)
	}
	return nil
}
