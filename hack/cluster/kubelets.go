// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// kubeletNode is a real kubelet node (kube.StartKubeletNode) with a
// gpuplane-node-agent on a mock profile serving its device plugin.
type kubeletNode struct {
	k     *kube.KubeletNode
	agent *exec.Cmd
	done  chan struct{}
}

// startKubeletNodes starts n kubelet nodes named kubelet-<i>, each with a
// node agent (mock backend, the built-in or file profile) on the
// kubelet's device-plugin directory and pod-resources socket, labelling
// its Node and following gpuplane-scheduler's choices; it returns once
// every Node shows nvidia.com/gpu allocatable. stop stops the agents,
// then the kubelets.
func startKubeletNodes(ctx context.Context, c *kube.Cluster, dir string, n int, agentBin, profile string, grace time.Duration) (stop func(), err error) {
	var nodes []*kubeletNode
	stop = func() {
		for _, kn := range nodes {
			if kn.agent != nil {
				_ = kn.agent.Process.Signal(syscall.SIGTERM)
				select {
				case <-kn.done:
				case <-time.After(grace):
					_ = kn.agent.Process.Kill()
					<-kn.done
				}
			}
			if err := kn.k.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	for i := range n {
		name := fmt.Sprintf("kubelet-%d", i)
		k, err := c.StartKubeletNode(ctx, name, kube.KubeletOptions{})
		if err != nil {
			return stop, fmt.Errorf("kubelet node %s: %w", name, err)
		}
		kn := &kubeletNode{k: k, done: make(chan struct{})}
		nodes = append(nodes, kn)
		logf, err := os.Create(filepath.Join(dir, name+"-agent.log"))
		if err != nil {
			return stop, err
		}
		cmd := exec.Command(agentBin, "--backend", "mock", "--mock-profile", profile,
			"--device-plugin-dir", k.DevicePluginDir, "--pod-resources-socket", k.PodResourcesSocket,
			"--node-name", name, "--kubeconfig", c.Kubeconfig, "--label-node", "--scheduler-choice",
			"--metrics-addr", "127.0.0.1:0")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return stop, err
		}
		kn.agent = cmd
		go func() { _ = cmd.Wait(); logf.Close(); close(kn.done) }()
		fmt.Printf("%s: kubelet node %s: kubelet pid %d (log %s), node agent pid %d (log %s)\n",
			time.Now().Format(time.RFC3339), name, k.Pid(), k.Log, cmd.Process.Pid, logf.Name())
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, kn := range nodes {
		for {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, kn.k.Name, metav1.GetOptions{})
			if err == nil {
				if q := node.Status.Allocatable[gpuresource.GPU]; q.Value() > 0 {
					break
				}
			}
			select {
			case <-kn.done:
				return stop, fmt.Errorf("the node agent of %s exited (log %s)", kn.k.Name, filepath.Join(dir, kn.k.Name+"-agent.log"))
			case <-kn.k.Exited():
				return stop, fmt.Errorf("the kubelet of %s exited (log %s)", kn.k.Name, kn.k.Log)
			case <-ctx.Done():
				return stop, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return stop, fmt.Errorf("%s: no nvidia.com/gpu allocatable after 2 minutes (agent log %s)", kn.k.Name, filepath.Join(dir, kn.k.Name+"-agent.log"))
			}
		}
	}
	return stop, nil
}
