// Command cluster brings a local control plane with fake GPU nodes up and
// down for demos (make cluster, make cluster-down; docs/cluster.md):
//
//	cluster up [--nodes FILE] [--dir DIR] [--ordered-names] [--scheduler BIN]   prints export KUBECONFIG=...
//	cluster down [--dir DIR]
//
// up starts a background supervisor (cluster serve) that runs
// internal/testenv/kube's control plane, and gpuplane-scheduler when
// --scheduler names its binary, until down sends it SIGTERM.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down [flags]")
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
	_ = fs.Parse(os.Args[2:])
	var err error
	if *dir, err = filepath.Abs(*dir); err == nil {
		switch os.Args[1] {
		case "up":
			err = up(*dir, *nodes, os.Args[2:])
		case "serve":
			err = serve(*dir, *nodes, *ordered, *gates, *runtimeConfig, *scheduler, *schedulerConfig)
		case "down":
			err = down(*dir)
		default:
			err = fmt.Errorf("unknown command %q (want up or down)", os.Args[1])
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
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
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
	what := "etcd, kube-apiserver and kwok"
	if scheduler := flagValue(args, "scheduler"); scheduler != "" {
		what = "etcd, kube-apiserver, kwok and gpuplane-scheduler"
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

// serve runs the control plane until SIGTERM or SIGINT, or until one of
// its processes exits. It reports readiness on file descriptor 3.
func serve(dir, nodesFile string, ordered bool, gates, runtimeConfig, scheduler, schedulerConfig string) error {
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
		c, err := kube.Start(ctx, kube.Options{Dir: filepath.Join(dir, "run"), FeatureGates: gates, RuntimeConfig: runtimeConfig})
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
		var schedExited <-chan struct{}
		if scheduler != "" {
			stopSched, exited, err := startScheduler(c, scheduler, schedulerConfig, gates)
			if err != nil {
				return err
			}
			defer stopSched()
			schedExited = exited
		}
		fmt.Printf("%s: up: %s, %d nodes\n", time.Now().Format(time.RFC3339), c.URL, len(nodes))
		fmt.Fprintln(ready, "ok")
		ready.Close()
		select {
		case <-ctx.Done():
			fmt.Printf("%s: stopping\n", time.Now().Format(time.RFC3339))
			return nil
		case <-c.Exited():
			return c.Err()
		case <-schedExited:
			return fmt.Errorf("gpuplane-scheduler exited; see %s", filepath.Join(c.Dir, "gpuplane-scheduler.log"))
		}
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

// startScheduler runs gpuplane-scheduler against c with configFile's
// KubeSchedulerConfiguration (its kubeconfig set to c's, leader election
// off, no serving port). It returns a function that stops it and a
// channel closed when it exits.
func startScheduler(c *kube.Cluster, bin, configFile, gates string) (func(), <-chan struct{}, error) {
	b, err := os.ReadFile(configFile)
	if err != nil {
		return nil, nil, err
	}
	var conf map[string]any
	if err := yaml.UnmarshalStrict(b, &conf); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", configFile, err)
	}
	conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig}
	conf["leaderElection"] = map[string]any{"leaderElect": false}
	if b, err = yaml.Marshal(conf); err != nil {
		return nil, nil, err
	}
	cfg := filepath.Join(c.Dir, "gpuplane-scheduler.yaml")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		return nil, nil, err
	}
	logFile, err := os.Create(filepath.Join(c.Dir, "gpuplane-scheduler.log"))
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, "--config", cfg, "--secure-port=0", "--feature-gates="+gates)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, nil, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	return stop, exited, nil
}

// flagValue returns the value of --name=V or --name V in args, or "".
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
