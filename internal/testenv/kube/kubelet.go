// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
)

// A real kubelet node: an unmodified kubelet (binaries.txt) registered
// with the test API server, its containers run by the recording fake
// runtime of package cri, so that a test sees what the kubelet asked of a
// runtime (a device plugin's environment and device nodes) with nothing
// run. See docs/cluster.md.
//
// The kubelet runs as root in a private mount namespace, where a tmpfs
// covers /var/lib and /var/log: the device-plugin directory
// (/var/lib/kubelet/device-plugins, which ignores --root-dir) is the node's
// own directory bind-mounted there, and /var/log/containers, which the
// kubelet makes whatever its configuration, is the tmpfs's; both go with
// the namespace. The sysctls and cgroups it changes are undone when the
// node stops, and after a killed test by the next start (hoststate.go).

// KubeletOptions configure StartKubeletNode. The zero value starts a node
// in a new temporary directory with the host's address as its node IP.
type KubeletOptions struct {
	// Kubelet is the program's path; empty: Find("kubelet").
	Kubelet string
	// Dir is the node's working directory (root dir, device-plugin
	// directory, runtime socket, container records, config, log). Empty:
	// a new temporary directory, removed by Stop. Unix socket paths are
	// limited to 107 bytes, so keep it short.
	Dir string
	// NodeIP is the node's InternalIP; empty: the host's first global
	// IPv4 address (the kubelet refuses a loopback one). The kubelet
	// serves on 127.0.0.1 whatever this is.
	NodeIP string
	// Labels are the node's --node-labels (the kubelet refuses most
	// kubernetes.io ones).
	Labels map[string]string
	// Config entries are set in the KubeletConfiguration over the
	// defaults below (e.g. "featureGates", "maxPods").
	Config map[string]any
	// Args are appended to the kubelet's arguments.
	Args []string
	// ReadyTimeout bounds the wait for the Node to be Ready (default 2
	// minutes); the context can end it sooner.
	ReadyTimeout time.Duration
	// Containerd runs the node's pods in real containers: containerd and
	// runc (containerd.go), with ProbeImage imported, instead of the
	// recording fake runtime. Pods must use hostNetwork.
	Containerd bool
}

// KubeletNode is a running kubelet node.
type KubeletNode struct {
	// Name is the Node's name, IP its InternalIP.
	Name, IP string
	// Dir is the working directory, RootDir the kubelet's --root-dir.
	Dir, RootDir string
	// DevicePluginDir is where a device plugin puts its socket: the
	// kubelet sees it as /var/lib/kubelet/device-plugins and serves
	// kubelet.sock in it.
	DevicePluginDir string
	// PodResourcesSocket is the kubelet's pod-resources API.
	PodResourcesSocket string
	// Runtime is the fake container runtime; RecordDir holds its records
	// of CreateContainer (cri.ReadRecords, or Records).
	Runtime   *cri.Runtime
	RecordDir string
	// Containerd is the real runtime instead, with KubeletOptions.Containerd
	// (Runtime is then nil).
	Containerd *Containerd
	// Log is the kubelet's log file (all runs, appended).
	Log string
	// Port is the kubelet's HTTPS port and HealthzPort its healthz port,
	// both on 127.0.0.1.
	Port, HealthzPort int
	// ReadyAfter is how long the last start took, from starting the
	// process to the Node being Ready.
	ReadyAfter time.Duration

	c         *Cluster
	bin       string
	args      []string
	entry     *nodeEntry
	removeDir bool

	mu       sync.Mutex
	proc     *proc
	stopOnce sync.Once
	stopErr  error
}

var kubeletSeq atomic.Int64

// StartKubeletNode starts a kubelet (as root) that registers the Node name
// with the cluster, and returns when the Node is Ready without the node
// lifecycle controller's not-ready taint. On error nothing is left
// running or changed, and the error carries the tail of the kubelet's
// log when it exited. Stop it before the cluster.
func (c *Cluster) StartKubeletNode(ctx context.Context, name string, o KubeletOptions) (_ *KubeletNode, err error) {
	if c.pki == nil {
		return nil, errors.New("the cluster has no certificate authority")
	}
	if err := o.fillDefaults(); err != nil {
		return nil, err
	}
	k := &KubeletNode{Name: name, IP: o.NodeIP, Dir: o.Dir, c: c, bin: o.Kubelet}
	if k.Dir == "" {
		if k.Dir, err = os.MkdirTemp("", "gk-"); err != nil {
			return nil, err
		}
		k.removeDir = true
	} else if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		return nil, err
	}
	if k.Dir, err = filepath.Abs(k.Dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, k.Stop())
		}
	}()
	if err := checkOutsideHidden(k.Dir); err != nil {
		return nil, err
	}
	if err := k.makeDirs(); err != nil {
		return nil, err
	}

	if err := k.claimHost(); err != nil {
		return nil, err
	}

	if o.Containerd {
		if err := k.startContainerd(ctx); err != nil {
			return nil, err
		}
	} else if err := k.startFakeRuntime(); err != nil {
		return nil, err
	}
	if err := k.writeFiles(o); err != nil {
		return nil, err
	}
	if err := k.start(ctx, o.ReadyTimeout, time.Time{}); err != nil {
		return nil, err
	}
	return k, nil
}

// startFakeRuntime starts the recording fake runtime.
func (k *KubeletNode) startFakeRuntime() (err error) {
	if k.Runtime, err = cri.Start(filepath.Join(k.Dir, "cri.sock"), k.RecordDir); err != nil {
		return fmt.Errorf("fake runtime: %w", err)
	}
	// The image filesystem is the root dir's: the kubelet's stats look
	// its device up.
	k.Runtime.ImageService.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{
		Timestamp: time.Now().UnixNano(), FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: k.RootDir},
		UsedBytes: &runtimeapi.UInt64Value{}, InodesUsed: &runtimeapi.UInt64Value{},
	}})
	return nil
}

// startContainerd starts containerd in the node's cgroup and imports
// ProbeImage, its sandbox image, into it.
func (k *KubeletNode) startContainerd(ctx context.Context) (err error) {
	archive, err := writeProbeImage(k.Dir)
	if err != nil {
		return err
	}
	if k.Containerd, err = startContainerd(ctx, k.Dir, k.entry.cgroupName(), ProbeImage); err != nil {
		return err
	}
	return k.Containerd.Import(ctx, archive)
}

// endpoint is the runtime's CRI endpoint.
func (k *KubeletNode) endpoint() string {
	if k.Containerd != nil {
		return "unix://" + k.Containerd.Socket
	}
	return k.Runtime.Endpoint()
}

// fillDefaults gives o the kubelet found on the PATH, the host's IP and a
// 2-minute ready timeout where it names none.
func (o *KubeletOptions) fillDefaults() (err error) {
	if o.Kubelet == "" {
		if o.Kubelet, err = Find("kubelet"); err != nil {
			return err
		}
	}
	if o.NodeIP == "" {
		if o.NodeIP, err = HostIP(); err != nil {
			return err
		}
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	return nil
}

// makeDirs names the node's directories under k.Dir and makes them.
func (k *KubeletNode) makeDirs() error {
	k.RootDir = filepath.Join(k.Dir, "root")
	k.DevicePluginDir = filepath.Join(k.RootDir, "device-plugins")
	k.PodResourcesSocket = filepath.Join(k.RootDir, "pod-resources", "kubelet.sock")
	k.RecordDir = filepath.Join(k.Dir, "containers")
	k.Log = filepath.Join(k.Dir, "kubelet.log")
	for _, d := range []string{k.DevicePluginDir, filepath.Join(k.Dir, "pki"), filepath.Join(k.Dir, "pod-logs"), filepath.Join(k.Dir, "volume-plugins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// claimHost readies the host state for k: cleans up after killed tests,
// records the sysctls, enters k in the host's list and makes its
// cgroupRoot.
func (k *KubeletNode) claimHost() error {
	h, err := lockHostState()
	if err != nil {
		return err
	}
	if _, err := h.reap(); err != nil {
		h.unlock()
		return fmt.Errorf("clean up after earlier test kubelets: %w", err)
	}
	self := os.Getpid()
	k.entry = &nodeEntry{ID: fmt.Sprintf("%d-%d", self, kubeletSeq.Add(1)), Owner: self, OwnerStart: procStart(self), Dir: k.Dir, RemoveDir: k.removeDir}
	err = errors.Join(h.recordSysctls(), h.put(k.entry))
	if err == nil {
		err = makeCgroups(k.entry.cgroupName())
	}
	h.unlock()
	return err
}

// StartKubeletNodeT starts a kubelet node for a test (StartKubeletNode)
// and stops it when the test ends (before a cluster started earlier with
// StartT), printing its log's tail first if the test failed, and fails the
// test if the node left anything on the host (Leftovers). A missing
// kubelet (with Containerd: containerd, its shim, ctr or runc), or a test
// not run as root, skips the test, or fails it under CI (see Binary).
func StartKubeletNodeT(t testing.TB, c *Cluster, name string, o KubeletOptions) *KubeletNode {
	t.Helper()
	if o.Kubelet == "" {
		o.Kubelet = Binary(t, "kubelet")
	}
	if o.Containerd {
		for _, p := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
			Binary(t, p)
		}
		if _, err := findRunc(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %v", err)
			}
			t.Skip(err)
		}
	}
	if os.Geteuid() != 0 {
		// The mounts, cgroups and sysctls need root.
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but a kubelet node needs root")
		}
		t.Skip("a kubelet node needs root")
	}
	k, err := c.StartKubeletNode(t.Context(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubelet %s log (%s):\n%s", name, k.Log, tail(k.Log, 40))
			if k.Containerd != nil {
				t.Logf("containerd log (%s):\n%s", k.Containerd.Log, tail(k.Containerd.Log, 30))
			}
		}
		if err := k.Stop(); err != nil {
			t.Error(err)
		}
		if left := k.Leftovers(); len(left) > 0 {
			t.Errorf("kubelet node %s left on the host: %s", name, strings.Join(left, "; "))
		}
	})
	return k
}

// checkOutsideHidden refuses a directory that the kubelet's tmpfs mounts
// would hide from it.
func checkOutsideHidden(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for _, hidden := range []string{"/var/lib", "/var/log"} {
		h, err := filepath.EvalSymlinks(hidden)
		if err != nil {
			return fmt.Errorf("%s: %w (the kubelet's mount namespace covers it with a tmpfs)", hidden, err)
		}
		if real == h || strings.HasPrefix(real, h+"/") {
			return fmt.Errorf("kubelet node directory %s is under %s, which the kubelet's mount namespace covers with a tmpfs", dir, hidden)
		}
	}
	return nil
}

// HostIP returns the host's first global unicast IPv4 address on an
// interface that is up, the node IP of a test kubelet.
func HostIP() (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("no non-loopback IPv4 address on this host for a kubelet's node IP")
}

// writeFiles writes the certificates, the kubeconfig and the
// KubeletConfiguration, and sets the kubelet's arguments.
func (k *KubeletNode) writeFiles(o KubeletOptions) error {
	kubeconfig, err := k.writeCredentials()
	if err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	k.Port, k.HealthzPort = ports[0], ports[1]
	pkiDir := filepath.Join(k.Dir, "pki")
	kc := k.config(pkiDir)
	for key, v := range o.Config {
		kc[key] = v
	}
	b, err := yaml.Marshal(kc)
	if err != nil {
		return err
	}
	config := filepath.Join(k.Dir, "kubelet.yaml")
	if err := os.WriteFile(config, b, 0o644); err != nil {
		return err
	}
	k.args = []string{
		"--config=" + config,
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + k.RootDir,
		"--cert-dir=" + pkiDir,
		"--hostname-override=" + k.Name,
		"--node-ip=" + k.IP,
	}
	if len(o.Labels) > 0 {
		var l []string
		for key, v := range o.Labels {
			l = append(l, key+"="+v)
		}
		sort.Strings(l)
		k.args = append(k.args, "--node-labels="+strings.Join(l, ","))
	}
	k.args = append(k.args, o.Args...)
	return nil
}

// writeCredentials writes the node's client certificate (O=system:nodes,
// CN=system:node:<name>, which the Node authorizer lets register the
// node), its serving certificate and the CA under Dir/pki, and the
// kubeconfig; it returns the kubeconfig's path.
func (k *KubeletNode) writeCredentials() (string, error) {
	pk := k.c.pki
	clientCert, clientKey, err := pk.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:node:" + k.Name, Organization: []string{"system:nodes"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return "", err
	}
	servingCert, servingKey, err := pk.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: k.Name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP(k.IP)},
		DNSNames:    []string{k.Name, "localhost"},
	})
	if err != nil {
		return "", err
	}
	pkiDir := filepath.Join(k.Dir, "pki")
	files := map[string][]byte{
		"ca.crt": pk.caPEM, "kubelet.crt": servingCert, "kubelet.key": servingKey,
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(pkiDir, f), data, 0o600); err != nil {
			return "", err
		}
	}
	kubeconfig := filepath.Join(k.Dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gpuplane"] = &clientcmdapi.Cluster{Server: k.c.URL, CertificateAuthorityData: pk.caPEM}
	cfg.AuthInfos["node"] = &clientcmdapi.AuthInfo{ClientCertificateData: clientCert, ClientKeyData: clientKey}
	cfg.Contexts["gpuplane"] = &clientcmdapi.Context{Cluster: "gpuplane", AuthInfo: "node"}
	cfg.CurrentContext = "gpuplane"
	return kubeconfig, clientcmd.WriteToFile(*cfg, kubeconfig)
}

// config is the node's KubeletConfiguration, its files under pkiDir.
func (k *KubeletNode) config(pkiDir string) map[string]any {
	return map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		// This machine's kernel has cgroup v1, which kubelet 1.35+
		// refuses unless told.
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               "/" + k.entry.cgroupName(),
		"containerRuntimeEndpoint": k.endpoint(),
		"imageServiceEndpoint":     k.endpoint(),
		"address":                  "127.0.0.1",
		"port":                     k.Port,
		"readOnlyPort":             0,
		"healthzBindAddress":       "127.0.0.1",
		"healthzPort":              k.HealthzPort,
		"tlsCertFile":              filepath.Join(pkiDir, "kubelet.crt"),
		"tlsPrivateKeyFile":        filepath.Join(pkiDir, "kubelet.key"),
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": false},
			"x509":      map[string]any{"clientCAFile": filepath.Join(pkiDir, "ca.crt")},
		},
		"authorization":   map[string]any{"mode": "AlwaysAllow"},
		"podLogsDir":      filepath.Join(k.Dir, "pod-logs"),
		"volumePluginDir": filepath.Join(k.Dir, "volume-plugins"),
		// No iptables chains, no swap check, no eviction: a test node
		// shares a busy machine.
		"makeIPTablesUtilChains": false,
		"failSwapOn":             false,
		"evictionHard": map[string]string{
			"memory.available": "0%", "nodefs.available": "0%", "nodefs.inodesFree": "0%",
			"imagefs.available": "0%", "imagefs.inodesFree": "0%",
		},
		// Node status (allocatable from device plugins) within a second.
		"nodeStatusUpdateFrequency": "1s",
		"syncFrequency":             "10s",
		"registerNode":              true,
	}
}

// namespaceScript runs in the kubelet's new mount namespace (made private
// by the Go runtime's CLONE_NEWNS handling) and then becomes the kubelet:
// $1 is the node's device-plugin directory, $2 the kubelet's working
// directory, the rest the kubelet's command line.
//
// The working directory is an empty one of the node's own: when the
// kubelet removes a container, its log manager removes the files matching
// the container's log path followed by "*" (pkg/kubelet/logs
// container_log_manager.go, Clean), and the fake runtime reports an empty
// log path, so "*" in the working directory: started in the test's
// package directory, the kubelet deleted the package's files.
const namespaceScript = `set -e
mount -t tmpfs -o mode=0755,size=1m gpuplane-kubelet /var/lib
mkdir -p /var/lib/kubelet/device-plugins
mount --bind "$1" /var/lib/kubelet/device-plugins
mount -t tmpfs -o mode=0755,size=64m gpuplane-kubelet /var/log
mkdir -p "$2"
cd "$2"
shift 2
exec "$@"
`

// start starts the kubelet process and waits until the Node is Ready
// with a heartbeat at or after since (zero: any).
func (k *KubeletNode) start(ctx context.Context, timeout time.Duration, since time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"-c", namespaceScript, "gpuplane-kubelet", k.DevicePluginDir, filepath.Join(k.Dir, "cwd"), k.bin}, k.args...)
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	sh := "/bin/sh"
	if k.Containerd != nil {
		// containerd's mount namespace, where runc finds the kubelet's
		// volume mounts (nsenter execs sh: one process).
		attr.Unshareflags = 0
		args = append([]string{"--mount=/proc/" + strconv.Itoa(k.Containerd.proc.cmd.Process.Pid) + "/ns/mnt", "--", "/bin/sh"}, args...)
		sh = "nsenter"
	}
	t0 := time.Now()
	p, err := startProcAttr("kubelet "+k.Name, sh, args, nil, k.Log, attr, func(*proc) {})
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.proc = p
	k.mu.Unlock()
	pid := p.cmd.Process.Pid
	h, err := lockHostState()
	if err != nil {
		return err
	}
	k.entry.Kubelet, k.entry.KubeletStart = pid, procStart(pid)
	err = h.put(k.entry)
	h.unlock()
	if err != nil {
		return err
	}
	if err := k.waitReady(ctx, p, since); err != nil {
		return err
	}
	k.ReadyAfter = time.Since(t0)
	return nil
}

// waitReady polls the Node every 50 ms until it is Ready without the
// node lifecycle controller's not-ready or unreachable taint (and, with
// since set, has a heartbeat no older than since), ending early when the
// kubelet or a control-plane process exits or ctx ends.
func (k *KubeletNode) waitReady(ctx context.Context, p *proc, since time.Time) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	hc := &http.Client{Timeout: time.Second}
	healthz := "http://127.0.0.1:" + strconv.Itoa(k.HealthzPort) + "/healthz"
	var last error
	for {
		last = func() error {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := get(cctx, hc, healthz, "ok"); err != nil {
				return err
			}
			n, err := k.c.Client.CoreV1().Nodes().Get(cctx, k.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status != corev1.ConditionTrue {
						return fmt.Errorf("node %s: Ready %s: %s", k.Name, cond.Status, cond.Message)
					}
					if cond.LastHeartbeatTime.Time.Before(since) {
						return fmt.Errorf("node %s: last heartbeat %v, before the restart", k.Name, cond.LastHeartbeatTime)
					}
					// The node lifecycle controller's taints, put on
					// while the kubelet was registering or away.
					for _, t := range n.Spec.Taints {
						if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
							return fmt.Errorf("node %s: Ready, taint %s", k.Name, t.ToString())
						}
					}
					return nil
				}
			}
			return fmt.Errorf("node %s: no Ready condition yet", k.Name)
		}()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("waiting for node %s to be Ready: %w", k.Name, p.exitError())
		case <-k.c.exited:
			return fmt.Errorf("waiting for node %s to be Ready: %w", k.Name, k.c.first.exitError())
		case <-ctx.Done():
			return fmt.Errorf("waiting for node %s to be Ready: %w (last error: %v)", k.Name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Exited is closed when the current kubelet process has exited.
func (k *KubeletNode) Exited() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.proc.done
}

// Pid is the current kubelet process's id.
func (k *KubeletNode) Pid() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.proc.cmd.Process.Pid
}

// Records returns the fake runtime's CreateContainer records so far.
func (k *KubeletNode) Records() ([]cri.Container, error) { return cri.ReadRecords(k.RecordDir) }

// Restart stops the kubelet (SIGTERM) and starts it again with the same
// configuration and state, the runtime and its containers untouched, as
// a kubelet upgrade or crash does; it returns when the new kubelet has
// reported the Node Ready.
func (k *KubeletNode) Restart(ctx context.Context) error {
	k.mu.Lock()
	p := k.proc
	k.mu.Unlock()
	if err := p.stop(30 * time.Second); err != nil {
		return err
	}
	// Heartbeats have whole seconds.
	return k.start(ctx, 2*time.Minute, time.Now().Truncate(time.Second))
}

// Stop stops the kubelet (SIGTERM, 30 seconds' grace, then SIGKILL) and
// the fake runtime, or removes every pod sandbox from containerd and stops
// it (containerd.go: an error if a process, mount or shim socket of it is
// left), removes the node's cgroups, restores the sysctls when
// no other test kubelet runs on the machine, and removes a temporary Dir.
// The Node object stays in the cluster. Calling it again returns the
// first result.
func (k *KubeletNode) Stop() error {
	k.stopOnce.Do(func() {
		var errs []error
		k.mu.Lock()
		p := k.proc
		k.mu.Unlock()
		if p != nil {
			if err := p.stop(30 * time.Second); err != nil {
				errs = append(errs, err)
			}
		}
		if k.Runtime != nil {
			k.Runtime.Stop()
		}
		if k.Containerd != nil {
			if err := k.Containerd.stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if k.entry != nil {
			h, err := lockHostState()
			if err != nil {
				errs = append(errs, err)
			} else {
				if err := removeCgroups(k.entry.cgroupName()); err != nil {
					errs = append(errs, err)
				} else {
					_ = os.Remove(h.entryFile(k.entry.ID))
					if _, err := h.reap(); err != nil { // restores the sysctls when no node is left
						errs = append(errs, err)
					}
				}
				h.unlock()
			}
		}
		k.stopErr = errors.Join(errs...)
		if k.removeDir && k.stopErr == nil {
			k.stopErr = os.RemoveAll(k.Dir)
		}
	})
	return k.stopErr
}

func sleep10ms() { time.Sleep(10 * time.Millisecond) }
