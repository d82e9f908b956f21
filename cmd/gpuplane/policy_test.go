package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	var out, errb bytes.Buffer
	code := execute([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml", "-f", "../../internal/webhook/policy/testdata/manifests/pods.yaml"}, &out, &errb)
	want := "../../internal/webhook/policy/testdata/manifests/pods.yaml:23: Pod research/llama-worker-0: training-on-shared: container pytorch:"
	if code != 1 || !strings.HasPrefix(out.String(), want) || strings.Count(out.String(), "\n") != 1 || errb.String() != "gpuplane: 1 violations in 2 pods and pod templates\n" {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := execute([]string{"policy", "check", "--policy", "../../internal/webhook/policy/testdata/policy.yaml"}, &out, &errb); code != 1 || errb.String() != "gpuplane: policy check needs --policy FILE and -f FILE|DIR\n" {
		t.Errorf("no -f: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := execute([]string{"policy"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "Flags:\n  -f value") {
		t.Errorf("no subcommand: exit %d, usage without its flags: %q", code, errb.String())
	}
}
