// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// podTeams reads the optional team column of the pod list: the team of
// each pod (an index in the teams file), by the pods' order. A pod with an
// empty team, or a pod list without the column, gets engine.TeamOf its name;
// nil when the column is absent. An unknown team is an error naming file,
// line and column.
func podTeams(path, teamsFile string, f *quota.Teams, pods []trace.PodSpec) ([]int, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	r := csv.NewReader(file)
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", path, err)
	}
	name, team := -1, -1
	for i, h := range header {
		switch strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) {
		case "name":
			name = i
		case "team":
			team = i
		}
	}
	if team < 0 || name < 0 {
		return nil, nil
	}
	index := map[string]int{}
	for k, t := range f.Teams {
		index[t.Name] = k
	}
	byName := make(map[string]int, len(pods))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		v := strings.TrimSpace(rec[team])
		if v == "" {
			continue
		}
		k, ok := index[v]
		if !ok {
			line, _ := r.FieldPos(team)
			return nil, fmt.Errorf("%s:%d: column team: team %s is not in %s", path, line, trace.Quote(v), teamsFile)
		}
		byName[strings.TrimSpace(rec[name])] = k
	}
	out := make([]int, len(pods))
	for i, p := range pods {
		k, ok := byName[p.Name]
		if !ok {
			k = engine.TeamOf(p.Name, len(f.Teams))
		}
		out[i] = k
	}
	return out, nil
}
