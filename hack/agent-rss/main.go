// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command agent-rss measures gpuplane-node-agent's resident memory and CPU
// time on the node of the exporter's benchmarks (internal/node/exporter
// bench_test.go): 8 H100 80GB GPUs with seven 1g.10gb MIG devices each
// (56), and 64 pods from a test pod-resources server (48 MIG devices with
// one pod, 8 shared by two through time-slicing). It runs the agent with
// the mock backend, scrapes /metrics with gzip every second, as Prometheus
// does, for --duration, and prints VmRSS and VmHWM (/proc/PID/status, MiB)
// and the CPU time (/proc/PID/stat). Linux only.
//
//	go build -o /tmp/agent ./cmd/gpuplane-node-agent
//	go run ./hack/agent-rss --agent /tmp/agent --duration 60s
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/podresources/podresourcestest"
)

const profile = `name: rss-8x7mig
gpus:
  - count: 8
    productName: NVIDIA H100 80GB HBM3
    mig: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]
    telemetry: {utilizationPct: [25, 75], powerW: 300, smClockMHz: 1980, memClockMHz: 2619}
`

const config = `version: v1
flags: {migStrategy: mixed}
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/mig-1g.10gb
      replicas: 2
`

var podRE = regexp.MustCompile(`pod="([^"]+)"`)

var servingRE = regexp.MustCompile(`"Serving GPU metrics" address="([^"]+)"`)

func main() {
	agent := flag.String("agent", "", "gpuplane-node-agent binary")
	duration := flag.Duration("duration", 60*time.Second, "how long to scrape")
	flag.Parse()
	if err := run(*agent, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "agent-rss:", err)
		os.Exit(1)
	}
}

func run(agent string, duration time.Duration) error {
	if agent == "" {
		return fmt.Errorf("--agent is required")
	}
	dir, err := os.MkdirTemp("", "rss")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prof, cfg, err := writeInputs(dir)
	if err != nil {
		return err
	}
	node, err := discover(prof)
	if err != nil {
		return err
	}
	srv, err := podresourcestest.Start(filepath.Join(dir, "pr.sock"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	pods := migPods(node)
	srv.SetPods(pods...)

	cmd, addr, err := startAgent(agent, prof, cfg, dir, srv.Path())
	if err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	a, ok := <-addr // closed when the agent exits
	if !ok {
		return fmt.Errorf("the agent exited before serving metrics")
	}
	url := "http://" + a + "/metrics"
	tr := &http.Transport{DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	scrapes, bytes, pdu, err := scrape(client, url, duration)
	if err != nil {
		return err
	}
	attributed, err := attributedPods(client, url)
	if err != nil {
		return err
	}
	rss, hwm, cpu, err := usage(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("GPUs %d, MIG devices %d, pods %d (%d in the metrics), scrapes %d (gzip, %d bytes each), mean scrape %.1f ms\n",
		len(node.GPUs), len(node.GPUs)*7, len(pods), attributed, scrapes, bytes/scrapes, float64(pdu.Microseconds())/float64(scrapes)/1000)
	fmt.Printf("VmRSS %.1f MiB, VmHWM %.1f MiB, CPU %.2f s over %s\n", rss, hwm, cpu, duration)
	return nil
}

// writeInputs writes the mock profile and the agent configuration into dir
// and returns their paths.
func writeInputs(dir string) (prof, cfg string, err error) {
	prof, cfg = filepath.Join(dir, "profile.yaml"), filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(prof, []byte(profile), 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		return "", "", err
	}
	return prof, cfg, nil
}

// discover returns the node of the mock profile prof.
func discover(prof string) (device.Node, error) {
	b, err := mock.Open(prof, mock.Options{})
	if err != nil {
		return device.Node{}, err
	}
	node, err := b.Discover(context.Background())
	b.Close()
	return node, err
}

// migPods are the pods on the node's MIG devices: one on each of the first
// six of a GPU, two sharing the seventh.
func migPods(node device.Node) []*v1.PodResources {
	var pods []*v1.PodResources
	for _, g := range node.GPUs {
		for m, mig := range g.MIG {
			shares := 1
			if m == 6 {
				shares = 2
			}
			for k := range shares {
				id := fmt.Sprintf("%s::%d", mig.UUID, k)
				pods = append(pods, podresourcestest.Pod("team-a", fmt.Sprintf("job-%d", len(pods)),
					podresourcestest.Container("main", resource.MIGResource("1g.10gb"), id)))
			}
		}
	}
	return pods
}

// startAgent starts the agent on the mock profile prof with its
// configuration cfg, and returns it and the address it serves metrics on
// (closed when it exits).
func startAgent(agent, prof, cfg, dir, socket string) (*exec.Cmd, <-chan string, error) {
	cmd := exec.Command(agent, "--backend", "mock", "--mock-profile", prof, "--config", cfg,
		"--device-plugin-dir", dir, "--node-name", "rss", "--metrics-addr", "127.0.0.1:0",
		"--pod-resources-socket", socket)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, servingAddr(stderr), nil
}

// servingAddr reads the agent's log and sends the metrics address it
// serves on; the channel is closed when the log ends.
func servingAddr(stderr io.Reader) <-chan string {
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	return addr
}

// scrape scrapes url with gzip every second for duration and returns the
// scrapes, the bytes they read and the time they took.
func scrape(client *http.Client, url string, duration time.Duration) (scrapes, bytes int, pdu time.Duration, err error) {
	for deadline := time.Now().Add(duration); time.Now().Before(deadline); {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, 0, err
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		pdu += time.Since(start)
		scrapes++
		bytes += int(n)
		time.Sleep(time.Second)
	}
	return scrapes, bytes, pdu, nil
}

// attributedPods scrapes url once, plain, and returns how many pods the
// series are attributed to.
func attributedPods(client *http.Client, url string) (int, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	attributed := map[string]bool{}
	for _, m := range podRE.FindAllStringSubmatch(string(text), -1) {
		attributed[m[1]] = true
	}
	return len(attributed), nil
}

// usage returns VmRSS and VmHWM of pid in MiB, and its CPU time in
// seconds.
func usage(pid int) (rss, hwm, cpu float64, err error) {
	if rss, hwm, err = memory(pid); err != nil {
		return 0, 0, 0, err
	}
	if cpu, err = cpuSeconds(pid); err != nil {
		return 0, 0, 0, err
	}
	return rss, hwm, cpu, nil
}

// memory returns VmRSS and VmHWM of pid in MiB.
func memory(pid int) (rss, hwm float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm, nil
}

// cpuSeconds returns the user and system CPU time of pid (fields 14 and
// 15 of /proc/PID/stat, in clock ticks of 1/100 s).
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100, nil
}
