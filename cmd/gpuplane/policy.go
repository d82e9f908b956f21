// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/cli"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

const policyDoc = `Usage: gpuplane policy check --policy FILE -f FILE|DIR [-f ...] [--exclude-namespace NS ...]
       gpuplane policy vap --policy FILE    (the rules as CEL; gpuplane policy vap -h)

Applies a GPUPolicy file (docs/webhook.md) offline to the pods and workload
pod templates (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob;
Kubeflow and KubeRay training jobs) of manifests, as gpuplane-webhook would
at admission, and lists each
violation as FILE:LINE: KIND NAMESPACE/NAME: RULE: what to change. Namespaces
in the manifests give their labels for namespaceSelector. To audit what runs
now: kubectl get pods,deployments,jobs -A -o yaml > now.yaml. Exit status 1
when there is a violation, or when a -f holds no object.

Namespaces are exempt as at admission: kube-system, the policy's
excludeNamespaces, and each --exclude-namespace (the chart's release
namespace, which the chart adds to its policy; gpuplane policy vap takes
the same flag). Pods of a DaemonSet may tolerate the GPU taint.

GPUs claimed through DRA count as the webhook counts them (docs/webhook.md,
"DRA claims"): a pod's ResourceClaimTemplates and ResourceClaims are read
from the manifests given (kubectl get resourceclaimtemplates,resourceclaims
-A -o yaml for what runs now). What cannot be known (a claim not among
them, allocationMode All, a selector not modelled) is printed as
FILE:LINE: KIND NAMESPACE/NAME: note: ..., which is no violation.

Flags:
`

// files is a repeatable -f flag.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// runPolicy runs gpuplane policy with args.
func runPolicy(args []string, stdout, stderr io.Writer) error {
	c, pf, pp, exclude := newPolicyCmd()
	fs := c.fs
	if len(args) > 0 && args[0] == "vap" {
		return runPolicyVAP(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		c.help(stdout)
		return flag.ErrHelp
	}
	if len(args) == 0 || args[0] != "check" {
		c.help(stderr) // with the flags, which "Flags:" announces
		return errUsage
	}
	if err := c.parse(args[1:], stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.BadInput(fmt.Errorf("policy check takes no arguments, got %q", fs.Args()))
	}
	if *pf == "" || len(*pp) == 0 {
		return cli.BadInput(errors.New("policy check needs --policy FILE and -f FILE|DIR"))
	}
	data, err := os.ReadFile(*pf)
	if err != nil {
		return cli.BadInput(err)
	}
	pol, err := policy.Parse(*pf, data)
	if err != nil {
		return cli.BadInput(err)
	}
	pol.ExcludeNamespaces = pol.ExcludedNamespaces(*exclude...)
	findings, n, err := pol.Check(*pp, os.Stdin)
	if err != nil {
		return cli.BadInput(err)
	}
	violations := 0
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
		if f.Note == "" {
			violations++
		}
	}
	if violations > 0 {
		v := "violations"
		if violations == 1 {
			v = "violation"
		}
		return fmt.Errorf("%d %s in %d pods and pod templates", violations, v, n) // exit status 1: a check that found violations
	}
	fmt.Fprintf(stdout, "%d pods and pod templates, no violation\n", n)
	return nil
}

const policyVAPDoc = `Usage: gpuplane policy vap --policy FILE [--name NAME] [--exclude-namespace NS ...] [--mutating=false]

Prints the ValidatingAdmissionPolicy and its binding (YAML, for kubectl
apply -f -) that check in the API server, with CEL, the rules of a GPUPolicy
file that CEL can say (docs/webhook.md, "In the API server"): they hold when
gpuplane-webhook is down. Then a MutatingAdmissionPolicy and its binding
that add what the webhook adds (Kubernetes 1.36 or later; --mutating=false
before). Last, the claim policy NAME-claims and its binding: each
ResourceClaimTemplate and ResourceClaim of more GPUs than its team allows a
pod is refused (docs/webhook.md, "DRA claims"). The chart installs the same
objects from webhook.policy.
kube-system, the policy's excludeNamespaces and each --exclude-namespace
are not checked, as by gpuplane policy check.

Flags:
`

// runPolicyVAP runs gpuplane policy vap with args.
func runPolicyVAP(args []string, stdout, stderr io.Writer) error {
	c, policyFile, o, exclude := newPolicyVAPCmd()
	fs := c.fs
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.BadInput(fmt.Errorf("policy vap takes no arguments, got %q", fs.Args()))
	}
	if *policyFile == "" {
		return cli.BadInput(errors.New("policy vap needs --policy FILE"))
	}
	data, err := os.ReadFile(*policyFile)
	if err != nil {
		return cli.BadInput(err)
	}
	pol, err := policy.Parse(*policyFile, data)
	if err != nil {
		return cli.BadInput(err)
	}
	o.ExcludeNamespaces = *exclude
	out, err := pol.AdmissionPolicies(*o)
	if err != nil {
		return cli.BadInput(err)
	}
	_, err = stdout.Write(out)
	return err
}

// newPolicyCmd returns the policy check command and its flags' values.
func newPolicyCmd() (*command, *string, *files, *files) {
	c := newCommand("gpuplane policy check", policyDoc)
	var policyFile string
	var paths, exclude files
	c.fs.StringVar(&policyFile, "policy", "", "GPUPolicy file (YAML, apiVersion gpuplane.io/v1alpha1)")
	c.fs.Var(&paths, "f", "manifest file or directory (*.yaml, *.yml, *.json), or - for stdin; repeatable")
	c.fs.Var(&exclude, "exclude-namespace", excludeUsage)
	c.args["policy"], c.args["f"], c.args["exclude-namespace"] = "FILE", "FILE|DIR|-", "NS"
	return c, &policyFile, &paths, &exclude
}

// excludeUsage is the --exclude-namespace flag's, the same in check and vap.
const excludeUsage = "a namespace not checked besides kube-system and the policy's excludeNamespaces, e.g. gpuplane's release namespace; repeatable"

// newPolicyVAPCmd returns the policy vap command and its flags' values.
func newPolicyVAPCmd() (*command, *string, *policy.AdmissionPolicyOptions, *files) {
	c := newCommand("gpuplane policy vap", policyVAPDoc)
	var policyFile string
	var o policy.AdmissionPolicyOptions
	var exclude files
	c.fs.StringVar(&policyFile, "policy", "", "GPUPolicy file (YAML, apiVersion gpuplane.io/v1alpha1)")
	c.fs.StringVar(&o.Name, "name", "gpuplane-gpu-policy", "name of the policy and its binding")
	c.fs.BoolVar(&o.Mutating, "mutating", true, "also the MutatingAdmissionPolicy and its binding (Kubernetes 1.36 or later)")
	c.fs.Var(&exclude, "exclude-namespace", excludeUsage)
	c.args["policy"], c.args["name"], c.args["exclude-namespace"] = "FILE", "NAME", "NS"
	return c, &policyFile, &o, &exclude
}
