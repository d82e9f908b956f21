// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package kube runs a real Kubernetes control plane for tests and demos:
// etcd, kube-apiserver, kube-controller-manager (controllermanager.go) and
// kwok (fake nodes whose pods go Running), built
// by hack/build-controlplane.sh at the versions in binaries.txt, with fake
// GPU nodes made from an openb node CSV or a small YAML (nodes.go).
//
// kwok plays the kubelet of its nodes (node status, leases, pod status,
// deletion); StartKubeletNode adds nodes run by a real kubelet
// (kubelet.go). See docs/cluster.md.
package kube

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// What the gang-scheduling work needs from kube-apiserver: the Workload and
// PodGroup API (scheduling.k8s.io/v1beta1), beta and off by default in
// Kubernetes 1.37 behind the GenericWorkload feature gate
// (k8s.io/kubernetes pkg/features) and, as every beta API, not served
// unless --runtime-config turns it on.
const (
	WorkloadFeatureGates  = "GenericWorkload=true"
	WorkloadRuntimeConfig = "scheduling.k8s.io/v1beta1=true"
)

// ServiceCIDR is the Service ClusterIP range. kwok gives pods IPs from
// PodCIDR: a /9 holds millions, kwok's default /24 only 254.
const (
	ServiceCIDR = "10.96.0.0/16"
	PodCIDR     = "10.128.0.0/9"
)

// KwokAnnotation marks the nodes kwok manages (kwok's own convention).
const KwokAnnotation = "kwok.x-k8s.io/node"

//go:embed stages.yaml
var stagesYAML []byte

// Options configure Start. The zero value starts a plain control plane in
// a temporary directory.
type Options struct {
	// Dir holds etcd's data, the certificates, the kubeconfig and one log
	// per process. Empty: a new temporary directory, removed by Stop.
	Dir string
	// FeatureGates is kube-apiserver's --feature-gates, e.g.
	// WorkloadFeatureGates.
	FeatureGates string
	// RuntimeConfig is kube-apiserver's --runtime-config, e.g.
	// WorkloadRuntimeConfig.
	RuntimeConfig string
	// Authorization is kube-apiserver's --authorization-mode (default
	// "Node,RBAC"). The kubeconfig's user is in system:masters, which RBAC
	// always allows.
	Authorization string
	// APIServerArgs are appended to kube-apiserver's arguments.
	APIServerArgs []string
	// Etcd, APIServer, ControllerManager and Kwok are the programs'
	// paths; empty ones are found with Find.
	Etcd, APIServer, ControllerManager, Kwok string
	// NoControllerManager starts no kube-controller-manager: objects stay
	// as a test creates them (no pods from Jobs or ReplicaSets, no garbage
	// collection, no node taints).
	NoControllerManager bool
	// Controllers is kube-controller-manager's --controllers (default
	// Controllers); ControllerManagerArgs are appended to its arguments.
	Controllers           string
	ControllerManagerArgs []string
	// StartTimeout bounds the wait for etcd and kube-apiserver to be ready
	// (default 2 minutes); the context can end it sooner.
	StartTimeout time.Duration
	// StopGrace is how long Stop and Restart wait after SIGTERM before
	// SIGKILL (default 30 s). kube-apiserver with watches open waits up to
	// its --request-timeout (60 s) for them to close (docs/cluster.md).
	StopGrace time.Duration
	// ServiceAccountTokens turns kube-apiserver's ServiceAccount
	// admission plugin on: pods get their service account's token (a
	// projected volume the kubelet mounts, with the cluster's CA from
	// kube-root-ca.crt), as in a real cluster, for pods that use the API
	// server from a container (the chart's roles). It needs the
	// controller manager (its serviceaccount controller makes each
	// namespace's default ServiceAccount, which the plugin requires, and
	// root-ca-certificate-publisher kube-root-ca.crt). Off, the plugin is
	// disabled and pods run without a token.
	ServiceAccountTokens bool
	// OnExit, if set, is called (on its own goroutine) when a process
	// exits that no Stop, StopComponent or Kill asked to, with the error
	// Err would give.
	OnExit func(name string, err error)
}

// Cluster is a running control plane.
type Cluster struct {
	// Dir is the working directory (see Options.Dir).
	Dir string
	// Kubeconfig is the path of an admin kubeconfig, for kubectl and for
	// the scheduler's --kubeconfig.
	Kubeconfig string
	// URL is kube-apiserver's address, https://127.0.0.1:PORT.
	URL string
	// Config is the admin's client configuration (QPS 1000, burst 2000).
	Config *rest.Config
	// Client is a clientset for Config.
	Client kubernetes.Interface

	mu        sync.Mutex // guards procs (restart.go replaces its entries) and stopped
	procs     []*proc    // in start order: etcd, kube-apiserver, kube-controller-manager, kwok
	stopped   bool
	etcdURL   string
	grace     time.Duration
	onExit    func(name string, err error)
	pki       *pki // issues kubelets' certificates (kubelet.go)
	removeDir bool
	stopOnce  sync.Once
	stopErr   error
	exitOnce  sync.Once
	exited    chan struct{}
	first     *proc // the first process to exit
}

// Start starts etcd, kube-apiserver, kube-controller-manager and kwok and
// returns when the API server is ready. Ports are picked free at run
// time. On error nothing is left running and the error carries the tail
// of the failing process's log.
func Start(ctx context.Context, o Options) (_ *Cluster, err error) {
	if o.ServiceAccountTokens && o.NoControllerManager {
		return nil, errors.New("kube.Options: ServiceAccountTokens needs the controller manager (NoControllerManager is set)")
	}
	c := &Cluster{Dir: o.Dir, exited: make(chan struct{}), grace: o.StopGrace, onExit: o.OnExit}
	if c.grace <= 0 {
		c.grace = 30 * time.Second
	}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "gpuplane-kube-"); err != nil {
			return nil, err
		}
		c.removeDir = true
	} else if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if stopErr := c.Stop(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
	}()
	if err := o.findPrograms(); err != nil {
		return nil, err
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()

	// Each port is asked for just before its process binds it: an
	// outgoing connection of another test may take a released port
	// (kube-apiserver once lost its port while etcd started).
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	etcdURL, err := c.startEtcd(ctx, o, ports[0], ports[1])
	if err != nil {
		return nil, err
	}
	if ports, err = freePorts(1); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx, o, etcdURL, ports[0]); err != nil {
		return nil, err
	}
	if !o.NoControllerManager {
		if err := c.startControllerManager(ctx, o, c.pki); err != nil {
			return nil, err
		}
	}
	if err := c.startKwok(o); err != nil {
		return nil, err
	}
	return c, nil
}

// findPrograms finds the programs whose paths o leaves empty.
func (o *Options) findPrograms() (err error) {
	for _, b := range []struct {
		path *string
		name string
	}{{&o.Etcd, "etcd"}, {&o.APIServer, "kube-apiserver"}, {&o.ControllerManager, "kube-controller-manager"}, {&o.Kwok, "kwok"}} {
		if *b.path == "" && !(o.NoControllerManager && b.name == "kube-controller-manager") {
			if *b.path, err = Find(b.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// startEtcd starts etcd, one member on loopback, and returns its client
// URL when it is healthy. fsync is off, as Kubernetes' own integration
// tests run it, since the data is thrown away.
func (c *Cluster) startEtcd(ctx context.Context, o Options, clientPort, peerPort int) (string, error) {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	if err := c.start("etcd", o.Etcd, nil,
		"--name=gpuplane",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=gpuplane="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	); err != nil {
		return "", err
	}
	c.etcdURL = etcdURL
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := c.waitUntil(ctx, "etcd at "+etcdURL, func(ctx context.Context) error {
		return get(ctx, plain, etcdURL+"/health", `"health":"true"`)
	}); err != nil {
		return "", err
	}
	return etcdURL, nil
}

// startAPIServer starts kube-apiserver on port, sets c's URL, client and
// kubeconfig, and returns when it is ready.
func (c *Cluster) startAPIServer(ctx context.Context, o Options, etcdURL string, port int) error {
	pk, err := newPKI(c.Dir, net.IPv4(10, 96, 0, 1))
	if err != nil {
		return err
	}
	c.pki = pk
	c.URL = "https://127.0.0.1:" + strconv.Itoa(port)
	if err := c.start("kube-apiserver", o.APIServer, nil, apiServerArgs(o, c.Dir, etcdURL, port, pk)...); err != nil {
		return err
	}
	c.Config = &rest.Config{
		Host: c.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: pk.caPEM, CertData: pk.adminCertPEM, KeyData: pk.adminKeyPEM,
		},
		QPS: 1000, Burst: 2000,
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	c.Client = cs
	if err := c.waitUntil(ctx, "kube-apiserver at "+c.URL+"/readyz", func(ctx context.Context) error {
		b, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
		if err != nil {
			return fmt.Errorf("%v %s", err, b)
		}
		// The system namespaces come from a controller inside the API
		// server, shortly after it is ready.
		_, err = cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	return writeKubeconfig(c.Kubeconfig, c.URL, pk)
}

// apiServerArgs are kube-apiserver's arguments, its certificates in dir.
func apiServerArgs(o Options, dir, etcdURL string, port int, pk *pki) []string {
	authz := o.Authorization
	if authz == "" {
		authz = "Node,RBAC"
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + pk.certFile, "--tls-private-key-file=" + pk.keyFile,
		"--client-ca-file=" + pk.caFile,
		"--service-account-key-file=" + pk.saPubFile,
		"--service-account-signing-key-file=" + pk.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=" + authz,
		// The endpoint reconciler would publish 127.0.0.1 as the endpoint
		// of the kubernetes Service; the API server refuses to start with
		// it ("cannot use public IP 127.0.0.1 with endpoint reconciler").
		"--endpoint-reconciler-type=none",
		// With no kube-controller-manager nobody removes the not-ready
		// taint this admission plugin puts on every new Node, nor creates
		// the default ServiceAccount that the ServiceAccount plugin
		// requires of every Pod.
		"--disable-admission-plugins=TaintNodesByCondition,ServiceAccount",
	}
	if o.ServiceAccountTokens {
		args[len(args)-1] = "--disable-admission-plugins=TaintNodesByCondition"
	}
	if o.FeatureGates != "" {
		args = append(args, "--feature-gates="+o.FeatureGates)
	}
	if o.RuntimeConfig != "" {
		args = append(args, "--runtime-config="+o.RuntimeConfig)
	}
	return append(args, o.APIServerArgs...)
}

// startKwok starts kwok, which manages the nodes that carry its
// annotation. HOME is the working directory so that no ~/.kwok/kwok.yaml
// is read.
func (c *Cluster) startKwok(o Options) error {
	stages := filepath.Join(c.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, stagesYAML, 0o644); err != nil {
		return err
	}
	return c.start("kwok", o.Kwok, []string{"HOME=" + c.Dir},
		"--kubeconfig="+c.Kubeconfig,
		"--config="+stages,
		"--manage-nodes-with-annotation-selector="+KwokAnnotation+"=fake",
		"--cidr="+PodCIDR,
		"--node-lease-duration-seconds=40",
	)
}

// start starts one process with its log in Dir/<name>.log.
func (c *Cluster) start(name, bin string, env []string, args ...string) error {
	p, err := startProc(name, bin, args, env, filepath.Join(c.Dir, name+".log"), c.procExited)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs = append(c.procs, p)
	return nil
}

// Exited is closed when a control-plane process has exited that no Stop,
// StopComponent or Kill asked to (a crash); Err then says which one and
// why. It stays closed after that process is started again.
func (c *Cluster) Exited() <-chan struct{} { return c.exited }

// Err describes the first process that exited, with its log's tail; nil
// while all are running.
func (c *Cluster) Err() error {
	select {
	case <-c.exited:
		return c.first.exitError()
	default:
		return nil
	}
}

// Pids returns the process ids of etcd, kube-apiserver,
// kube-controller-manager (unless Options.NoControllerManager) and kwok.
func (c *Cluster) Pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, len(c.procs))
	for i, p := range c.procs {
		out[i] = p.cmd.Process.Pid
	}
	return out
}

// Logs returns the tail (n lines) of every process's log, for a failing
// test to print.
func (c *Cluster) Logs(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.name, p.log, tail(p.log, n))
	}
	return b.String()
}

// Stop stops kwok, kube-controller-manager, kube-apiserver, then etcd
// (the API server needs etcd to shut down cleanly), each with SIGTERM and
// Options.StopGrace (30 s) before SIGKILL, and removes a temporary Dir. It returns when
// every process has exited; calling it again returns the first result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.stopped = true
		var errs []error
		for i := len(c.procs) - 1; i >= 0; i-- {
			if err := c.procs[i].stop(c.grace); err != nil {
				errs = append(errs, err)
			}
		}
		c.stopErr = errors.Join(errs...)
		if c.removeDir && c.stopErr == nil {
			if err := os.RemoveAll(c.Dir); err != nil {
				c.stopErr = err
			}
		}
	})
	return c.stopErr
}

// waitUntil polls cond every 100 ms until it returns nil, and returns
// early when a process exits or ctx ends.
func (c *Cluster) waitUntil(ctx context.Context, what string, cond func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := cond(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if last == nil || ctx.Err() == nil { // keep the reason, not the deadline
			last = err
		}
		select {
		case <-c.exited:
			return fmt.Errorf("waiting for %s: %w", what, c.first.exitError())
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// get fails unless url answers 200 with a body containing want.
func get(ctx context.Context, hc *http.Client, url, want string) error {
	b, err := getBody(ctx, hc, url)
	if err == nil && !strings.Contains(string(b), want) {
		err = fmt.Errorf("%s: no %q in %s", url, want, b)
	}
	return err
}

// getBody returns the body of url (its first 64 KiB), failing unless it
// answers 200.
func getBody(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	return b, nil
}

// freePorts asks the kernel for n free loopback ports. They are released
// before the processes bind them, so callers ask just before starting
// the process that binds them, to keep that window short.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}

// writeKubeconfig writes an admin kubeconfig with the certificates inline.
func writeKubeconfig(path, url string, pk *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gpuplane"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: pk.caPEM}
	cfg.AuthInfos["gpuplane-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: pk.adminCertPEM, ClientKeyData: pk.adminKeyPEM}
	cfg.Contexts["gpuplane"] = &clientcmdapi.Context{Cluster: "gpuplane", AuthInfo: "gpuplane-admin"}
	cfg.CurrentContext = "gpuplane"
	return clientcmd.WriteToFile(*cfg, path)
}
