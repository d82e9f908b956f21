// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/gang"
	"github.com/gpuplane/gpuplane/internal/gang/workload"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// Options are gpuplane-webhook's settings.
type Options struct {
	// PolicyFile is the GPUPolicy file (--policy).
	PolicyFile string
	// CertFile and KeyFile are the serving certificate and key, PEM
	// (--tls-cert-file, --tls-key-file); cert-manager's Secret mounted at
	// /etc/gpuplane/webhook holds them as tls.crt and tls.key.
	CertFile, KeyFile string
	// Addr is the address to serve /mutate, /validate and /healthz on
	// (--listen).
	Addr string
	// MetricsAddr is the address to serve /metrics and /healthz on, plain
	// HTTP (--metrics-addr); empty: no metrics.
	MetricsAddr string
	// Limits are the servers' timeouts and connection limit.
	Limits Limits
	// MaxRequestBytes caps an AdmissionReview body (--max-request-bytes).
	MaxRequestBytes int64
	// Kubeconfig is a kubeconfig file for the API server (--kubeconfig);
	// default in-cluster credentials. The API server is read for pods'
	// ResourceClaims and ResourceClaimTemplates, for namespaces' labels,
	// when a team uses namespaceSelector or Gangs is on, and for the
	// owners of training jobs' pods.
	Kubeconfig string
	// Gangs puts the pods of training jobs in gangs (--gangs, default
	// on; internal/gang): it needs the API server to serve the Workload
	// API, and says so at start when it does not.
	Gangs bool
}

// DefaultOptions returns the defaults of the command's flags.
func DefaultOptions() Options {
	return Options{
		PolicyFile:      "/etc/gpuplane/policy/policy.yaml",
		CertFile:        "/etc/gpuplane/webhook/tls.crt",
		KeyFile:         "/etc/gpuplane/webhook/tls.key",
		Addr:            ":9443",
		MetricsAddr:     ":9401",
		Limits:          DefaultLimits(),
		MaxRequestBytes: DefaultMaxRequestBytes,
		Gangs:           true,
	}
}

// Check says which flag, if any, has a value that cannot be served.
func (o Options) Check() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--read-header-timeout", o.Limits.ReadHeaderTimeout},
		{"--read-timeout", o.Limits.ReadTimeout},
		{"--write-timeout", o.Limits.WriteTimeout},
		{"--idle-timeout", o.Limits.IdleTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("%s %v is negative (0: no limit)", d.flag, d.v)
		}
	}
	if o.Limits.MaxConns < 0 {
		return fmt.Errorf("--max-connections %d is negative (0: no limit)", o.Limits.MaxConns)
	}
	if o.MaxRequestBytes <= 0 {
		return fmt.Errorf("--max-request-bytes %d is not positive", o.MaxRequestBytes)
	}
	return nil
}

// Run serves the webhook until ctx is done.
func Run(ctx context.Context, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	data, err := os.ReadFile(o.PolicyFile)
	if err != nil {
		return err
	}
	pol, err := policy.Parse(o.PolicyFile, data)
	if err != nil {
		return err
	}
	certs, err := LoadCertFiles(o.CertFile, o.KeyFile)
	if err != nil {
		return err
	}
	var ns NamespaceLabels
	var gangs GangFunc
	var claims ClaimSpecs
	rc, err := restConfig(o.Kubeconfig)
	switch {
	case err != nil && (usesSelector(pol) || o.Gangs):
		return fmt.Errorf("the policy selects namespaces by label, or --gangs is on, which needs the API server: %w", err)
	case err != nil:
		klog.ErrorS(err, "no API server: pods' resource claims are not read, and the GPUs they claim are not counted (each is named in a warning)")
	default:
		client, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("API client: %w", err)
		}
		claims = ReadClaims(client)
		if usesSelector(pol) || o.Gangs {
			if ns, err = WatchNamespaces(ctx, client); err != nil {
				return err
			}
		}
		if o.Gangs {
			if gangs, err = startGangs(rc, client); err != nil {
				return err
			}
		}
	}
	h := NewHandler(pol, ns)
	h.Gangs, h.Claims = gangs, claims
	h.MaxRequestBytes = o.MaxRequestBytes
	l, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	servers := 1
	if o.MetricsAddr != "" {
		ml, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			l.Close()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		servers++
		klog.InfoS("serving metrics", "addr", ml.Addr().String())
		go func() { errc <- ServeMetrics(ctx, ml, h.Metrics(), o.Limits) }()
	}
	klog.InfoS("serving GPU admission policy", "addr", l.Addr().String(), "policy", o.PolicyFile, "teams", len(pol.Teams),
		"readTimeout", o.Limits.ReadTimeout, "writeTimeout", o.Limits.WriteTimeout, "idleTimeout", o.Limits.IdleTimeout,
		"maxConnections", o.Limits.MaxConns, "maxRequestBytes", o.MaxRequestBytes)
	go func() { errc <- Serve(ctx, l, h, certs, o.Limits) }()
	// The first to stop (an error, or ctx done) stops the other.
	err = <-errc
	cancel()
	for range servers - 1 {
		if e := <-errc; err == nil {
			err = e
		}
	}
	return err
}

// startGangs returns the grouper of training jobs' pods, or nil, with an
// error in the log that says what to turn on, when the API server does not
// serve the Workload API: gang pods would otherwise be placed one by one
// without a word.
func startGangs(rc *rest.Config, client kubernetes.Interface) (GangFunc, error) {
	if err := workload.Served(client.Discovery()); err != nil {
		if !errors.Is(err, workload.ErrNotServed) {
			return nil, err
		}
		klog.ErrorS(err, "gangs off: training jobs' pods get no PodGroup")
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	klog.InfoS("gangs on: pods of PyTorchJobs, MPIJobs, TrainJobs, JobSets, RayCluster worker groups and indexed Jobs get their gang's PodGroup",
		"api", workload.GroupVersion, "optOut", gang.OptOut+"=false")
	return workload.NewGrouper(dyn, client).Group, nil
}

func usesSelector(p *policy.Policy) bool {
	for _, t := range p.Teams {
		if t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
		}
		return rc, nil
	}
	return rest.InClusterConfig()
}

// WatchNamespaces keeps the cluster's namespaces in an informer and
// returns their labels from it; a namespace not yet in the cache (created
// a moment ago) is read from the API server.
func WatchNamespaces(ctx context.Context, client kubernetes.Interface) (NamespaceLabels, error) {
	f := informers.NewSharedInformerFactory(client, 10*time.Minute)
	lister := f.Core().V1().Namespaces().Lister()
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("namespace informer %v did not sync", typ)
		}
	}
	return func(ctx context.Context, name string) (map[string]string, error) {
		n, err := lister.Get(name)
		if apierrors.IsNotFound(err) {
			n, err = client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return nil, err
		}
		return n.Labels, nil
	}, nil
}

// ReadClaims returns the ClaimSpecs that GETs a claim's ResourceClaim or
// ResourceClaimTemplate (resource.k8s.io/v1) from the API server.
func ReadClaims(client kubernetes.Interface) ClaimSpecs {
	return func(ctx context.Context, ns string, c policy.Claim) (*dra.ClaimSpec, error) {
		var spec any
		var err error
		if c.TemplateName != "" {
			var t *resourcev1.ResourceClaimTemplate
			t, err = client.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, c.TemplateName, metav1.GetOptions{})
			if err == nil {
				spec = t.Spec.Spec
			}
		} else {
			var rc *resourcev1.ResourceClaim
			rc, err = client.ResourceV1().ResourceClaims(ns).Get(ctx, c.ClaimName, metav1.GetOptions{})
			if err == nil {
				spec = rc.Spec
			}
		}
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		}
		// The API's JSON is what dra.ClaimSpec reads.
		b, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		var out dra.ClaimSpec
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
}
