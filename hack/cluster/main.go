// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command cluster brings a local control plane with fake GPU nodes up and
// down for demos (make cluster, make cluster-down; docs/cluster.md):
//
//	cluster up [--nodes FILE] [--dir DIR] [--ordered-names] [--scheduler BIN] [--kubelet-nodes N --node-agent BIN [--gpu-api dra]] [--kueue]   prints export KUBECONFIG=...
//	cluster down [--dir DIR]
//	cluster restart [--dir DIR] [--kill] COMPONENT   etcd, kube-apiserver, kube-controller-manager, kwok or gpuplane-scheduler
//	cluster kill|start [--dir DIR] COMPONENT
//	cluster status [--dir DIR]
//
// up starts a background supervisor (cluster serve) that runs
// internal/testenv/kube's control plane, and gpuplane-scheduler when
// --scheduler names its binary, until down sends it SIGTERM. A component
// that exits is reported in the log and the others keep running;
// restart, kill, start and status ask the supervisor over a Unix socket in
// DIR (control.go).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down|restart|kill|start|status [flags] [COMPONENT]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("cluster "+os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".cache/cluster", "working directory: pid file, logs, kubeconfig, etcd data")
	nodes := fs.String("nodes", "hack/cluster/nodes.yaml", "fake nodes: openb node CSV or cluster YAML (docs/simulate.md)")
	ordered := fs.Bool("ordered-names", false, "prefix node names with their position so that name order is file order")
	gates := fs.String("feature-gates", kube.WorkloadFeatureGates, "kube-apiserver --feature-gates")
	runtimeConfig := fs.String("runtime-config", kube.WorkloadRuntimeConfig, "kube-apiserver --runtime-config")
	scheduler := fs.String("scheduler", "", "gpuplane-scheduler binary to run against the cluster (empty: none)")
	schedulerConfig := fs.String("scheduler-config", "deploy/scheduler/config.yaml", "its KubeSchedulerConfiguration; the kubeconfig is set and leader election turned off")
	grace := fs.Duration("stop-grace", 10*time.Second, "how long a stopping component gets after SIGTERM before SIGKILL")
	kubeletNodes := fs.Int("kubelet-nodes", 0, "real kubelet nodes (kubelet-0 ...), each with a gpuplane-node-agent on --kubelet-profile; needs root and a built kubelet")
	nodeAgent := fs.String("node-agent", "", "gpuplane-node-agent binary for --kubelet-nodes")
	kubeletProfile := fs.String("kubelet-profile", "dgx-h100", "the node agents' mock profile: a built-in name or a profile file")
	gpuAPI := fs.String("gpu-api", gpuAPIDevicePlugin, "how the kubelet nodes' agents serve the GPUs: device-plugin, or dra (DRA driver gpu.nvidia.com, the chart's DeviceClasses installed, a default-scheduler profile added)")
	deviceClasses := fs.String("device-classes", kube.DeviceClassTemplate, "with --gpu-api=dra: the chart's DeviceClass template")
	kill := fs.Bool("kill", false, "restart: SIGKILL the component (a crash) rather than SIGTERM")
	withKueue := fs.Bool("kueue", false, "also run Kueue (internal/testenv/kube StartKueue: its CRDs, webhooks, the Configuration gpuplane quota --kueue-config writes); needs root and a built kueue")
	_ = fs.Parse(os.Args[2:])
	var err error
	if *dir, err = filepath.Abs(*dir); err == nil {
		switch os.Args[1] {
		case "up":
			err = up(*dir, *nodes, os.Args[2:])
		case "serve":
			err = serve(*dir, *nodes, *ordered, *gates, *runtimeConfig, *scheduler, *schedulerConfig, *grace, kubeletSpec{*kubeletNodes, *nodeAgent, *kubeletProfile, *gpuAPI, *deviceClasses}, *withKueue)
		case "down":
			err = down(*dir)
		case "restart", "kill", "start", "status":
			req := os.Args[1]
			if req == "restart" && *kill {
				req = "restart-kill"
			}
			if (req == "status") != (fs.NArg() == 0) || fs.NArg() > 1 {
				err = fmt.Errorf("usage: cluster %s [--dir DIR] COMPONENT (etcd, kube-apiserver, kube-controller-manager, kwok, gpuplane-scheduler)", os.Args[1])
				if req == "status" {
					err = errors.New("usage: cluster status [--dir DIR]")
				}
				break
			}
			err = control(*dir, strings.TrimSpace(req+" "+fs.Arg(0)))
		default:
			err = fmt.Errorf("unknown command %q (want up, down, restart, kill, start or status)", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// running returns the supervisor's pid when one is running: its pid file
// names a live process (not a zombie, whose cmdline is empty) that is a
// "cluster serve".
func running(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "cluster.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return pid, err == nil && strings.Contains(string(cmdline), "\x00serve\x00")
}

// up checks the node file, starts the supervisor in its own session and
// waits for its "ok" (or its error) on a pipe.
func up(dir, nodesFile string, args []string) error {
	if pid, ok := running(dir); ok {
		return fmt.Errorf("a cluster is already running (pid %d); make cluster-down first", pid)
	}
	if _, err := kube.ReadNodesFile(nodesFile); err != nil {
		return err
	}
	if err := checkGPUAPI(args); err != nil {
		return err
	}
	need := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}
	if n := flagValue(args, "kubelet-nodes"); n != "" && n != "0" {
		need = append(need, "kubelet")
		if os.Geteuid() != 0 {
			return errors.New("--kubelet-nodes needs root (the kubelet's cgroups and mounts)")
		}
		if flagValue(args, "node-agent") == "" {
			return errors.New("--kubelet-nodes needs --node-agent")
		}
	}
	if boolFlag(args, "kueue") {
		need = append(need, kube.Kueue)
		if os.Geteuid() != 0 {
			return errors.New("--kueue needs root (Kueue's private mount namespace; internal/testenv/kube StartKueue)")
		}
	}
	for _, name := range need {
		if _, err := kube.Find(name); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "run")); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "cluster.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(self, append([]string{"serve"}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	w.Close()
	what := "etcd, kube-apiserver, kube-controller-manager and kwok"
	if scheduler := flagValue(args, "scheduler"); scheduler != "" {
		what = "etcd, kube-apiserver, kube-controller-manager, kwok and gpuplane-scheduler"
	}
	if boolFlag(args, "kueue") {
		what += ", then Kueue"
	}
	fmt.Fprintf(os.Stderr, "cluster: starting %s ...\n", what)
	line, _ := bufio.NewReader(r).ReadString('\n')
	if strings.TrimSpace(line) != "ok" {
		_ = cmd.Wait()
		b, _ := os.ReadFile(logPath)
		return fmt.Errorf("the cluster did not start (log %s):\n%s", logPath, b)
	}
	_ = cmd.Process.Release()
	kubeconfig := filepath.Join(dir, "run", "kubeconfig")
	fmt.Fprintf(os.Stderr, "cluster: up; logs in %s; stop it with make cluster-down\n", filepath.Join(dir, "run"))
	fmt.Printf("export KUBECONFIG=%s\n", kubeconfig)
	// kubectl of the cluster's version, as plain "kubectl" on PATH.
	if kubectl, err := kube.Find("kubectl"); err == nil {
		bin := filepath.Join(dir, "bin")
		link := filepath.Join(bin, "kubectl")
		_ = os.Remove(link)
		if err := os.MkdirAll(bin, 0o755); err == nil && os.Symlink(kubectl, link) == nil {
			fmt.Printf("export PATH=%s:$PATH\n", bin)
			fmt.Fprintf(os.Stderr, "cluster: kubectl is %s (on PATH after the eval)\n", kubectl)
		}
	}
	return nil
}

// serve runs the control plane until SIGTERM or SIGINT. A process that
// exits is reported and the others keep running; the control socket
// restarts it. It reports readiness on file descriptor 3.
func serve(dir, nodesFile string, ordered bool, gates, runtimeConfig, scheduler, schedulerConfig string, grace time.Duration, kl kubeletSpec, withKueue bool) error {
	ready := os.NewFile(3, "ready")
	syscall.CloseOnExec(3) // the control-plane processes must not hold it
	defer ready.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	pidFile := filepath.Join(dir, "cluster.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		fmt.Fprintln(ready, err)
		return err
	}
	// Removed last, after Stop, so that down waits for the whole cluster.
	defer os.Remove(pidFile)
	err := func() error {
		nodes, err := kube.ReadNodesFile(nodesFile)
		if err != nil {
			return err
		}
		if ordered {
			kube.OrderNames(nodes)
		}
		c, err := kube.Start(ctx, kube.Options{
			Dir: filepath.Join(dir, "run"), FeatureGates: gates, RuntimeConfig: runtimeConfig, StopGrace: grace,
			OnExit: func(name string, err error) { reportExit(name, err) },
		})
		if err != nil {
			return err
		}
		defer func() {
			if err := c.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
		if err := c.CreateNodes(ctx, nodes); err != nil {
			return err
		}
		if kl.api == gpuAPIDRA {
			if err := kube.InstallDeviceClasses(ctx, c.Client, kl.deviceClasses); err != nil {
				return err
			}
		}
		if withKueue {
			o := kube.KueueOptions{ExcludeResourcePrefixes: quota.ExcludedResources}
			if kl.api == gpuAPIDRA { // Kueue's DRA form, as gpuplane quota --gpu-api dra writes it
				conf, err := quota.KueueConfigFor(quota.DRA)
				if err == nil {
					o.Config, err = conf.Keys()
				}
				if err != nil {
					return err
				}
			}
			if err := c.StartKueue(ctx, o); err != nil {
				return err
			}
		}
		if kl.n > 0 {
			stopKubelets, err := startKubeletNodes(ctx, c, filepath.Join(dir, "run"), kl, grace)
			if err != nil {
				return err
			}
			defer stopKubelets()
		}
		var sched *schedulerProc
		if scheduler != "" {
			if sched, err = newScheduler(c, scheduler, schedulerConfig, gates, grace, kl.api == gpuAPIDRA); err != nil {
				return err
			}
			if err := sched.start(); err != nil {
				return err
			}
			defer sched.stop()
		}
		closeControl, err := listenControl(ctx, dir, c, sched)
		if err != nil {
			return err
		}
		defer closeControl()
		fmt.Printf("%s: up: %s, %d nodes, %d kubelet nodes\n", time.Now().Format(time.RFC3339), c.URL, len(nodes), kl.n)
		fmt.Fprintln(ready, "ok")
		ready.Close()
		<-ctx.Done()
		fmt.Printf("%s: stopping\n", time.Now().Format(time.RFC3339))
		return nil
	}()
	if err != nil {
		fmt.Fprintln(ready, err)
	}
	return err
}

// down sends the supervisor SIGTERM and waits until it has stopped the
// control plane and exited.
func down(dir string) error {
	pid, ok := running(dir)
	if !ok {
		fmt.Fprintln(os.Stderr, "cluster: none running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	// The supervisor is not our child, so there is no wait(2): poll until
	// it has removed its pid file (after stopping the control plane) or
	// is gone.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, ok := running(dir); !ok {
			fmt.Fprintln(os.Stderr, "cluster: stopped")
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("pid %d still running after 2 minutes; see %s", pid, filepath.Join(dir, "cluster.log"))
}

// schedulerProc is the gpuplane-scheduler the supervisor runs, which it
// can stop and start again.
type schedulerProc struct {
	c           *kube.Cluster
	bin, config string
	gates       string
	grace       time.Duration
	mu          sync.Mutex
	cmd         *exec.Cmd
	exited      chan struct{} // closed when cmd has exited
	asked       bool          // its exit was asked for
}

// newScheduler writes configFile's KubeSchedulerConfiguration with c's
// kubeconfig and leader election off for gpuplane-scheduler at bin; with
// defaultProfile, and no profile of that name in the file, upstream's
// default profile (default-scheduler) is added, so that plain pods with
// claims or nvidia.com/gpu served through DRA are scheduled (its
// DynamicResources plugin allocates the claims).
func newScheduler(c *kube.Cluster, bin, configFile, gates string, grace time.Duration, defaultProfile bool) (*schedulerProc, error) {
	b, err := os.ReadFile(configFile)
	if err != nil {
		return nil, err
	}
	var conf map[string]any
	if err := yaml.UnmarshalStrict(b, &conf); err != nil {
		return nil, fmt.Errorf("%s: %w", configFile, err)
	}
	conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig}
	conf["leaderElection"] = map[string]any{"leaderElect": false}
	if defaultProfile {
		conf["profiles"] = withDefaultProfile(conf["profiles"])
	}
	if b, err = yaml.Marshal(conf); err != nil {
		return nil, err
	}
	cfg := filepath.Join(c.Dir, "gpuplane-scheduler.yaml")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		return nil, err
	}
	return &schedulerProc{c: c, bin: bin, config: cfg, gates: gates, grace: grace}, nil
}

// start runs the scheduler (no serving port), its log appended to
// gpuplane-scheduler.log; an exit nobody asked for is reported.
func (s *schedulerProc) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		select {
		case <-s.exited:
		default:
			return fmt.Errorf("gpuplane-scheduler is running (pid %d)", s.cmd.Process.Pid)
		}
	}
	logFile, err := os.OpenFile(filepath.Join(s.c.Dir, "gpuplane-scheduler.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, "--config", s.config, "--secure-port=0", "--feature-gates="+s.gates)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan struct{})
	s.cmd, s.exited, s.asked = cmd, exited, false
	go func() {
		err := cmd.Wait()
		logFile.Close()
		s.mu.Lock()
		asked := s.asked
		s.mu.Unlock()
		close(exited)
		if !asked {
			reportExit(schedulerName, fmt.Errorf("gpuplane-scheduler (pid %d) %v; see %s", cmd.Process.Pid, err, logFile.Name()))
		}
	}()
	return nil
}

// signal sends sig and waits for the exit, SIGKILL after grace; it does
// nothing when the scheduler is not running.
func (s *schedulerProc) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.asked = true
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(s.grace):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (s *schedulerProc) stop() { s.signal(syscall.SIGTERM) }
func (s *schedulerProc) kill() { s.signal(syscall.SIGKILL) }

// pid returns the scheduler's process id and whether it is running.
func (s *schedulerProc) pid() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0, false
	}
	select {
	case <-s.exited:
		return s.cmd.Process.Pid, false
	default:
		return s.cmd.Process.Pid, true
	}
}

// reportExit writes a component's unasked exit to the log (the
// supervisor's stdout): the others keep running.
func reportExit(name string, err error) {
	fmt.Printf("%s: %s exited; the other components keep running; start it again with: make cluster-restart C=%s\n%v\n",
		time.Now().Format(time.RFC3339), name, name, err)
}

// kubeletSpec is what --kubelet-nodes, --node-agent, --kubelet-profile,
// --gpu-api and --device-classes ask.
type kubeletSpec struct {
	n              int
	agent, profile string
	api            string
	deviceClasses  string
}

// The values of --gpu-api.
const (
	gpuAPIDevicePlugin = "device-plugin"
	gpuAPIDRA          = "dra"
)

// checkGPUAPI checks --gpu-api and, with dra, the DeviceClass template.
func checkGPUAPI(args []string) error {
	api := flagValue(args, "gpu-api")
	switch api {
	case "", gpuAPIDevicePlugin:
		return nil
	case gpuAPIDRA:
		path := flagValue(args, "device-classes")
		if path == "" {
			path = kube.DeviceClassTemplate
		}
		_, err := kube.DeviceClasses(path)
		return err
	}
	return fmt.Errorf("--gpu-api %q: want %s or %s", api, gpuAPIDevicePlugin, gpuAPIDRA)
}

// flagValue returns the value of --name=V or --name V in args, or "".
// boolFlag reports whether boolean flag name is set in args (-name,
// --name, or =VALUE that strconv.ParseBool reads as true).
func boolFlag(args []string, name string) bool {
	for _, a := range args {
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p {
				return true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				b, _ := strconv.ParseBool(v)
				return b
			}
		}
	}
	return false
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

// withDefaultProfile returns the profiles with default-scheduler's
// appended unless there is one.
func withDefaultProfile(profiles any) []any {
	l, _ := profiles.([]any)
	for _, p := range l {
		if m, ok := p.(map[string]any); ok && (m["schedulerName"] == "default-scheduler" || m["schedulerName"] == nil) {
			return l
		}
	}
	return append(l, map[string]any{"schedulerName": "default-scheduler"})
}
