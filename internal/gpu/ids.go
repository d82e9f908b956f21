// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"strings"
	"sync"
)

// MaxModels is how many GPU models one process can tell apart: model sets
// (a pod's allowed models) are 64-bit masks over model IDs.
const MaxModels = 64

// ids is the process-wide table of GPU model identities. The catalog's
// models hold IDs 0..len(catalog)-1 in catalog order; other names get the
// next free ID when first seen.
var ids = newIDTable()

type idTable struct {
	mu    sync.RWMutex
	names []string       // by ID, spelled as first seen (catalog spelling for catalog models)
	byKey map[string]int // lower-case name -> ID
}

func newIDTable() *idTable {
	t := &idTable{byKey: make(map[string]int, MaxModels)}
	for _, m := range catalog {
		t.byKey[strings.ToLower(m.Name)] = len(t.names)
		t.names = append(t.names, m.Name)
	}
	return t
}

// ModelID returns the process-wide ID (0..63) of the GPU model called name,
// compared case-insensitively. Catalog models have fixed IDs in catalog
// order; any other name (a user's node list may name any model) gets the
// next free ID the first time it is seen. Once 64 models are known a new
// name is an error. Safe for concurrent use.
func ModelID(name string) (int, error) {
	if name == "" {
		return 0, fmt.Errorf("empty GPU model name")
	}
	key := strings.ToLower(name)
	ids.mu.RLock()
	id, ok := ids.byKey[key]
	ids.mu.RUnlock()
	if ok {
		return id, nil
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if id, ok := ids.byKey[key]; ok {
		return id, nil
	}
	if len(ids.names) == MaxModels {
		return 0, fmt.Errorf("GPU model %q: more than %d GPU models", name, MaxModels)
	}
	id = len(ids.names)
	ids.byKey[key] = id
	ids.names = append(ids.names, name)
	return id, nil
}

// ModelName returns the name of model ID id, in the catalog's spelling for a
// catalog model and as first seen otherwise; "" for an ID never given out.
func ModelName(id int) string {
	ids.mu.RLock()
	defer ids.mu.RUnlock()
	if id < 0 || id >= len(ids.names) {
		return ""
	}
	return ids.names[id]
}

// ParseModels returns the set of models named by spec, model names joined
// by '|' as in the openb trace's gpu_spec column ("V100M16|V100M32"), as a
// mask with bit ModelID(name) set for each; an empty spec gives 0, meaning
// any model.
func ParseModels(spec string) (uint64, error) {
	var s uint64
	for _, m := range strings.Split(spec, "|") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		id, err := ModelID(m)
		if err != nil {
			return 0, err
		}
		s |= 1 << uint(id)
	}
	return s, nil
}

// FormatModels returns the names of the models in set, joined by '|' in ID
// order: the inverse of ParseModels.
func FormatModels(set uint64) string {
	var b strings.Builder
	for id := 0; id < MaxModels; id++ {
		if set&(1<<uint(id)) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		name := ModelName(id)
		if name == "" {
			name = fmt.Sprintf("model#%d", id)
		}
		b.WriteString(name)
	}
	return b.String()
}
