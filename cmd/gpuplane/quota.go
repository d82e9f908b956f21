// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
)

const quotaDoc = `quota turns a teams file into Kueue objects (kueue.x-k8s.io/v1beta2):
one ResourceFlavor per GPU model, one ClusterQueue per team in one Cohort,
a LocalQueue and a ResourceQuota in each team namespace (docs/quota.md).
It refuses a plan whose nominal quotas exceed the cluster's GPUs of a model.

The ClusterQueues cover nvidia.com/gpu only: Kueue admits their workloads
only with resources.excludeResourcePrefixes in its Configuration leaving
cpu, memory, ephemeral-storage and hugepages- out of quota; --kueue-config
writes that Configuration (docs/quota.md).

--nodes takes what gpuplane simulate --nodes takes: an openb node list CSV
(sn,cpu_milli,memory_mib,gpu,model), a cluster YAML file or a short spec
such as 'T4 x 200'; docs/quota.md shows how to write the CSV from a cluster
with kubectl.

Usage: gpuplane quota --teams teams.yaml --nodes nodes.csv > kueue.yaml

Flags:
`

// runQuota runs gpuplane quota with args, writing the YAML to stdout.
func runQuota(args []string, stdout, stderr io.Writer) error {
	c, teamsFile, nodesFile, kubeconfig, kueueConfig := newQuotaCmd()
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	objs, err := quotaPlan(c, *teamsFile, *nodesFile, *kubeconfig)
	if err != nil {
		return cli.BadInput(err)
	}
	if *kueueConfig != "" {
		var buf bytes.Buffer
		if err := quota.WriteYAML(&buf, []any{quota.KueueConfig()}); err != nil {
			return err
		}
		// A new file only: the path may be the teams file or Kueue's own
		// configuration, which the output is to be merged into.
		f, err := os.OpenFile(*kueueConfig, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return cli.BadInput(fmt.Errorf("quota: --kueue-config %s exists: not overwritten (give a new path)", *kueueConfig))
		}
		if err != nil {
			return fmt.Errorf("quota: --kueue-config: %w", err)
		}
		_, err = f.Write(buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("quota: --kueue-config: %w", err)
		}
	}
	return quota.WriteYAML(stdout, objs)
}

// newQuotaCmd returns the quota command and its flags' values.
// quotaPlan checks quota's arguments and reads its inputs into the Kueue
// objects; every error is bad input.
func quotaPlan(c *command, teamsFile, nodesFile, kubeconfig string) ([]any, error) {
	switch {
	case c.fs.NArg() > 0:
		return nil, fmt.Errorf("quota takes no arguments, got %q", c.fs.Args())
	case kubeconfig != "":
		return nil, errors.New("quota: --kubeconfig is not supported (the offline tool links no Kubernetes client); write the node list with kubectl as docs/quota.md shows and pass --nodes")
	case teamsFile == "" || nodesFile == "":
		return nil, errors.New("quota: --teams and --nodes are required")
	}
	nodes, err := cli.ReadNodes(nodesFile)
	if err != nil {
		return nil, err
	}
	teams, err := quota.LoadTeamsOn(teamsFile, nodes) // as simulate --teams reads it
	if err != nil {
		return nil, err
	}
	return quota.Plan(teamsFile, teams, quota.Capacity(nodes))
}

func newQuotaCmd() (c *command, teamsFile, nodesFile, kubeconfig, kueueConfig *string) {
	c = newCommand("gpuplane quota", quotaDoc)
	f := c.fs
	teamsFile = f.String("teams", "", "teams file (YAML, docs/quota.md)")
	nodesFile = f.String("nodes", "", "node list: openb CSV, cluster YAML (.yaml, .yml) or a spec 'MODEL x COUNT, ...'")
	kubeconfig = f.String("kubeconfig", "", "not supported: gpuplane links no Kubernetes client; write --nodes with kubectl (docs/quota.md)")
	kueueConfig = f.String("kueue-config", "", "also write the Kueue Configuration the objects need (resources.excludeResourcePrefixes) to FILE")
	c.args["teams"], c.args["nodes"], c.args["kubeconfig"], c.args["kueue-config"] = "FILE", "NODES", "FILE", "FILE"
	return c, teamsFile, nodesFile, kubeconfig, kueueConfig
}
