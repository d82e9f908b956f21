// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// TestRunTeams: teams a (1 T4 GPU, borrowingLimit 0) and b (1 T4). p1 and
// p2 are a's by the team column; p4 has an empty team, so its team is
// FNV-1a 64 of "p4" (0x08d59407b575e5a1, worked out apart) modulo 2 = 1,
// b. p2 waits for a's quota until p1 ends at 100: a's waits 0 and 100,
// mean 50 s; b gets p4 at once.
func TestRunTeams(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Mode, o.Seeds, o.Policies, o.Format = "replay", 1, "bestfit", "json"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,4,T4\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,scheduled_time,deletion_time,team\n"+
		"p1,1000,1024,1,1000,T4,0,0,100,a\np2,1000,1024,1,1000,T4,0,500,600,a\np4,1000,1024,1,1000,T4,0,0,100,\n")
	o.TeamsFile = write("teams.yaml", "cohort: c\nteams:\n- {name: a, namespaces: [a], quotas: [{model: T4, nominal: 1, borrowingLimit: 0}]}\n- {name: b, namespaces: [b], quotas: [{model: T4, nominal: 1}]}\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	got := rep.Results[0].Teams
	if len(got) != 2 || got[0].Team != "a" || got[0].Pods != 2 || got[0].WaitMeanSeconds != 50 || got[1].Team != "b" || got[1].Pods != 1 || got[1].WaitMeanSeconds != 0 {
		t.Errorf("teams %+v", got)
	}

	o.PodsFile = write("bad.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,scheduled_time,deletion_time,team\n"+
		"p1,1000,1024,1,1000,T4,0,0,100,a\np2,1000,1024,1,1000,T4,0,0,100,zz\n")
	err := Run(context.Background(), o, &stdout, &stderr)
	if want := o.PodsFile + ":3: column team: team \"zz\" is not in " + o.TeamsFile; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}

	o.Mode = "fill"
	if _, _, err := o.check(); err == nil || !strings.Contains(err.Error(), "--teams applies to --mode replay only") {
		t.Errorf("fill with --teams: %v", err)
	}
}
