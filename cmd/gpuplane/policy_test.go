// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

func TestPolicyCheck(t *testing.T) {
	var out, errb bytes.Buffer
	code := execute([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml", "-f", "../../internal/webhook/policy/testdata/manifests/pods.yaml"}, &out, &errb)
	want := "../../internal/webhook/policy/testdata/manifests/pods.yaml:23: Pod research/llama-worker-0: training-on-shared: container pytorch:"
	if code != 1 || !strings.HasPrefix(out.String(), want) || strings.Count(out.String(), "\n") != 1 || errb.String() != "gpuplane: 1 violation in 2 pods and pod templates\n" {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := execute([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml"}, &out, &errb); code != 2 || errb.String() != "gpuplane: policy check needs --policy FILE and -f FILE|DIR\n" {
		t.Errorf("no -f: exit %d, %q", code, errb.String())
	}
	// An empty manifest is an error, not "0 pods, no violation".
	empty := t.TempDir() + "/empty.yaml"
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := execute([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml", "-f", empty}, &out, &errb); code != 2 || out.String() != "" || errb.String() != "gpuplane: no objects in "+empty+"\n" {
		t.Errorf("empty file: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := execute([]string{"policy"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "Flags:\n") || !strings.Contains(errb.String(), "\n  -f FILE|DIR|-") {
		t.Errorf("no subcommand: exit %d, usage without its flags: %q", code, errb.String())
	}
}

// TestPolicyVAP: gpuplane policy vap prints Policy.AdmissionPolicies' YAML
// for the policy file, named and scoped by its flags.
func TestPolicyVAP(t *testing.T) {
	const file = "../../internal/webhook/policy/testdata/policy.yaml"
	var out, errb bytes.Buffer
	if code := execute([]string{"policy", "vap", "--policy", file, "--name", "gpu-policy", "--exclude-namespace", "gpu-system", "--exclude-namespace", "ops"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pol.AdmissionPolicies(policy.AdmissionPolicyOptions{Name: "gpu-policy", ExcludeNamespaces: []string{"gpu-system", "ops"}, Mutating: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(out.String(), "values: [kube-system, gpu-system, ops]") || !strings.Contains(out.String(), "policyName: gpu-policy\n") {
		t.Errorf("binding not named or scoped by the flags:\n%s", out.String())
	}
	out.Reset()
	if code := execute([]string{"policy", "vap", "--policy", file, "--mutating=false"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n---\n") != 3 || strings.Contains(out.String(), "kind: Mutating") || !strings.Contains(out.String(), "name: gpuplane-gpu-policy-claims\n") {
		t.Errorf("--mutating=false: exit %d, %s", code, out.String())
	}
	errb.Reset()
	if code := execute([]string{"policy", "vap"}, &out, &errb); code != 2 || errb.String() != "gpuplane: policy vap needs --policy FILE\n" {
		t.Errorf("no --policy: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := execute([]string{"policy", "vap", "--policy", "nope.yaml"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "nope.yaml") {
		t.Errorf("missing file: exit %d, %q", code, errb.String())
	}
}

// TestPolicyCheckAudit runs the documented audit, kubectl get pods -A -o
// yaml piped into policy check, on internal/webhook/policy's
// testdata/audit/pods.yaml (its findings there: TestCheckExemptions). The
// node agent's and NVIDIA's DaemonSet pods are never flagged; with the
// release namespace and gpu-operator exempted by --exclude-namespace, as
// at admission, only research's ETL pod is.
func TestPolicyCheckAudit(t *testing.T) {
	in, err := os.ReadFile("../../internal/webhook/policy/testdata/audit/pods.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		lines []string
	}{
		{nil, []string{"<stdin>:127: Pod gpu-operator/nvidia-device-plugin-validator-8r2lz: team:", "<stdin>:152: Pod gpu-system/gpuplane-webhook-6d8f9b7c5-q4w7e: gpu-taint-toleration:", "<stdin>:196: Pod research/etl-5c7d9f8b6-z8x2k: gpu-taint-toleration:"}},
		{[]string{"--exclude-namespace", "gpu-system", "--exclude-namespace", "gpu-operator"}, []string{"<stdin>:196: Pod research/etl-5c7d9f8b6-z8x2k: gpu-taint-toleration:"}},
	} {
		cmd := exec.Command(binary, append([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml", "-f", "-"}, c.flags...)...)
		cmd.Stdin = bytes.NewReader(in)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		wantErr := fmt.Sprintf("gpuplane: %d violations in 7 pods and pod templates\n", len(c.lines))
		if len(c.lines) == 1 {
			wantErr = "gpuplane: 1 violation in 7 pods and pod templates\n"
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || errb.String() != wantErr || len(got) != len(c.lines) {
			t.Errorf("%v: %v, stderr %q, stdout:\n%s", c.flags, err, errb.String(), out.String())
			continue
		}
		for i, l := range got {
			if !strings.HasPrefix(l, c.lines[i]) {
				t.Errorf("%v: line %d %q, want %q...", c.flags, i, l, c.lines[i])
			}
		}
	}
}

// TestPolicyCheckDRA: issue 34's case on the command line. Team ml-train
// allows 8 GPUs a pod: ml-train.yaml's train-16 claims 16 through a
// template, 1 violation, exit 1. NVIDIA's quickstart pod without its
// template (only the pod given) is a note, not a violation: exit 0.
func TestPolicyCheckDRA(t *testing.T) {
	const dir = "../../internal/webhook/policy/testdata/dra/"
	var out, errb bytes.Buffer
	code := execute([]string{"policy", "check", "--policy", dir + "policy.yaml", "-f", dir + "ml-train.yaml"}, &out, &errb)
	want := dir + "ml-train.yaml:33: Pod ml-train/train-16: max-gpus-per-pod: the pod asks for 16 GPUs, team ml-train allows at most 8 per pod; ask for fewer or split the work\n"
	if code != 1 || out.String() != want || errb.String() != "gpuplane: 1 violation in 2 pods and pod templates\n" {
		t.Errorf("ml-train.yaml: exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	data, err := os.ReadFile(dir + "gpu-test1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pod := t.TempDir() + "/pod.yaml"
	if err := os.WriteFile(pod, data[bytes.Index(data, []byte("apiVersion: v1\nkind: Pod")):], 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	code = execute([]string{"policy", "check", "--policy", dir + "policy.yaml", "-f", pod}, &out, &errb)
	want = pod + ":1: Pod gpu-test1/pod1: note: claim gpu: ResourceClaimTemplate single-gpu not found: its devices are not counted\n1 pods and pod templates, no violation\n"
	if code != 0 || out.String() != want || errb.String() != "" {
		t.Errorf("pod without its template: exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
}
