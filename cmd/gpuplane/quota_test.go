// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuota: 2 teams of 3 and 1 T4 on a node list of 4 T4 (2 nodes of 2)
// is accepted; 3 + 2 = 5 is refused, over by 1.
func TestQuota(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodes := write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,T4\nn1,16000,65536,2,T4\nc0,8000,4096,0,\n")
	teams := func(name string, second int) string {
		return write(name, "cohort: c\nteams:\n- name: a\n  namespaces: [a]\n  quotas: [{model: T4, product: Tesla-T4, nominal: 3}]\n"+
			"- name: b\n  namespaces: [b]\n  quotas: [{model: T4, nominal: "+string(rune('0'+second))+"}]\n")
	}
	out, errOut, code := run(t, "quota", "--teams", teams("ok.yaml", 1), "--nodes", nodes)
	if code != 0 || !strings.Contains(out, "kind: ClusterQueue\nmetadata:\n  name: b\n") || !strings.Contains(out, "nvidia.com/gpu.product: Tesla-T4") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	out, errOut, code = run(t, "quota", "--teams", teams("over.yaml", 2), "--nodes", nodes)
	if code != 2 || out != "" || !strings.Contains(errOut, "over.yaml:5: model T4: nominal quotas sum to 5 GPUs (a 3, b 2) but the nodes have 4: over by 1 GPU\n") {
		t.Errorf("over capacity: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// --nodes takes simulate's short spec too: 2 T4 nodes of the typical
	// openb T4 server, 2 GPUs each (internal/gpu TypicalServer), are 4 T4.
	if _, errOut, code := run(t, "quota", "--teams", teams("ok.yaml", 1), "--nodes", "T4 x 2"); code != 0 {
		t.Errorf("node spec: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := run(t, "quota", "--teams", teams("over.yaml", 2), "--nodes", "T4 x 2"); code != 2 || !strings.Contains(errOut, "but the nodes have 4: over by 1 GPU\n") {
		t.Errorf("node spec over capacity: exit %d, stderr %q", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", nodes}, "--teams and --nodes are required"},
		{[]string{"--teams", teams("ok.yaml", 1), "--kubeconfig", "kc"}, "--kubeconfig is not supported"},
		{[]string{"--teams", write("bad.yaml", "cohort: c\nteams:\n- nam: a\n"), "--nodes", nodes}, `bad.yaml:3: teams[0].nam: unknown field; did you mean "name"?`},
	} {
		out, errOut, code := run(t, append([]string{"quota"}, c.args...)...)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestQuotaKueueConfig: --kueue-config writes the Kueue Configuration the
// objects need (docs/quota.md), byte for byte; a path that cannot be
// written, or an existing file, is an error naming the flag.
func TestQuotaKueueConfig(t *testing.T) {
	dir := t.TempDir()
	teams := filepath.Join(dir, "teams.yaml")
	if err := os.WriteFile(teams, []byte("cohort: c\nteams:\n- name: a\n  namespaces: [a]\n  quotas: [{model: T4, product: Tesla-T4, nominal: 2}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "kueue-config.yaml")
	if _, errOut, code := run(t, "quota", "--teams", teams, "--nodes", "T4 x 1", "--kueue-config", conf); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  excludeResourcePrefixes:\n    - cpu\n    - memory\n    - ephemeral-storage\n    - hugepages-\n"
	if string(got) != want {
		t.Errorf("--kueue-config wrote\n%s\nwant\n%s", got, want)
	}
	if _, errOut, code := run(t, "quota", "--teams", teams, "--nodes", "T4 x 1", "--kueue-config", filepath.Join(dir, "no", "such", "dir", "c.yaml")); code == 0 || !strings.Contains(errOut, "--kueue-config") {
		t.Errorf("unwritable path: exit %d, stderr %q", code, errOut)
	}
	// An existing file (here the teams file itself) is never overwritten.
	before, _ := os.ReadFile(teams)
	if _, errOut, code := run(t, "quota", "--teams", teams, "--nodes", "T4 x 1", "--kueue-config", teams); code == 0 || !strings.Contains(errOut, "--kueue-config "+teams+" exists: not overwritten") {
		t.Errorf("existing file: exit %d, stderr %q", code, errOut)
	}
	if after, _ := os.ReadFile(teams); string(after) != string(before) {
		t.Errorf("the teams file changed:\n%s", after)
	}
	// --gpu-api dra: Kueue's DRA form (internal/quota TestKueueConfigFor
	// has its bytes); an unknown API is refused before anything is written.
	dra := filepath.Join(dir, "kueue-dra.yaml")
	out, errOut, code := run(t, "quota", "--teams", teams, "--nodes", "T4 x 1", "--gpu-api", "dra", "--kueue-config", dra)
	got, _ = os.ReadFile(dra)
	if code != 0 || !strings.Contains(string(got), "deviceClassMappings:\n    - name: nvidia.com/gpu\n      deviceClassNames:\n        - gpu.nvidia.com\n") ||
		!strings.Contains(out, "gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 2\n") {
		t.Errorf("--gpu-api dra: exit %d, stderr %q, config:\n%s\nstdout:\n%s", code, errOut, got, out)
	}
	bad := filepath.Join(dir, "kueue-csi.yaml")
	if out, errOut, code := run(t, "quota", "--teams", teams, "--nodes", "T4 x 1", "--gpu-api", "csi", "--kueue-config", bad); code != 2 || out != "" ||
		!strings.Contains(errOut, `quota: --gpu-api: unknown GPU API "csi" (device-plugin or dra)`) {
		t.Errorf("--gpu-api csi: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("--gpu-api csi wrote its --kueue-config")
	}
}

// TestTeamsSameCheck: quota and simulate --teams read one teams file the
// same way (quota.LoadTeamsOn). Team ml's A100-80GB nominal of 300 on one
// A100-80GB node of the typical server, 8 GPUs (internal/gpu
// TypicalServer), is over by 300 - 8 = 292: both refuse it, with the same
// message, and write nothing. A nominal of 8 is taken by both.
func TestTeamsSameCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	teams := func(name string, nominal string) string {
		return write(name, "cohort: lab\nteams:\n- name: ml\n  namespaces: [ml]\n  quotas:\n  - {model: A100-80GB, product: NVIDIA-A100-SXM4-80GB, nominal: "+nominal+"}\n")
	}
	pods := write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,scheduled_time,deletion_time\n"+
		"p1,1000,1024,1,1000,A100-80GB,0,0,100\n")
	const nodes = "A100-80GB x 1"
	over := teams("over.yaml", "300")
	want := "gpuplane: " + over + ":6: model A100-80GB: nominal quotas sum to 300 GPUs (ml 300) but the nodes have 8: over by 292 GPUs\n"
	for _, args := range [][]string{
		{"quota", "--teams", over, "--nodes", nodes},
		{"simulate", "--mode", "replay", "--teams", over, "--nodes", nodes, "--pods", pods},
	} {
		out, errOut, code := run(t, args...)
		if code != 2 || out != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q, want %q", args[0], code, out, errOut, want)
		}
	}
	fits := teams("fits.yaml", "8")
	for _, args := range [][]string{
		{"quota", "--teams", fits, "--nodes", nodes},
		{"simulate", "--mode", "replay", "--teams", fits, "--nodes", nodes, "--pods", pods, "--seeds", "1", "--policies", "bestfit"},
	} {
		if _, errOut, code := run(t, args...); code != 0 {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, errOut)
		}
	}
}
