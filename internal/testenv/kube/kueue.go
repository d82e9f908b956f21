// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// Kueue is the Kueue controller manager's component name (StartKueue).
const Kueue = "kueue"

// KueueNamespace is the namespace Kueue's configuration names (its
// events; nothing else of it lives there in the test cluster).
const KueueNamespace = "kueue-system"

// KueueOptions configure StartKueue.
type KueueOptions struct {
	// Bin is the kueue program (default: Find("kueue")).
	Bin string
	// ExcludeResourcePrefixes is the configuration's
	// resources.excludeResourcePrefixes: resources Kueue leaves out of
	// quota (none by default).
	ExcludeResourcePrefixes []string
	// FeatureGates is Kueue's --feature-gates, added to
	// VisibilityOnDemand=false (the visibility API server is not run).
	FeatureGates string
	// Config holds top-level keys of Kueue's Configuration set over the
	// test cluster's own (KueueConfiguration), e.g. resources and
	// featureGates as gpuplane quota --kueue-config writes them. With
	// featureGates among them kueue reads its gates there, with
	// VisibilityOnDemand false added, and gets no --feature-gates (Kueue
	// refuses both); FeatureGates must then be empty.
	Config map[string]any
}

// KueueModuleDir returns the directory of the sigs.k8s.io/kueue module at
// the version of binaries.txt in the Go module cache (go mod download:
// from the cache when hack/build-controlplane.sh has built kueue). Its
// config/components holds the CRDs and webhook manifests StartKueue
// installs.
func KueueModuleDir(ctx context.Context) (string, error) {
	v := Version(Kueue)
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kueue@"+v).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kueue@%s: %w", v, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kueue@%s: %w", v, err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kueue@%s: no directory: %s", v, mod.Error)
	}
	return mod.Dir, nil
}

// StartKueue runs Kueue's controller manager (sigs.k8s.io/kueue/cmd/kueue,
// the version of binaries.txt) against the cluster and returns when it
// is ready: it installs Kueue's CRDs from the same module version
// (config/components/crd/bases, conversion strategy None: every object
// is served as stored, and gpuplane writes only v1beta2), starts kueue
// with the admin kubeconfig, its webhooks on 127.0.0.1 served with a
// certificate from the cluster's CA (internalCertManagement off), the
// batch/job integration only, no leader election, and registers its
// webhooks for Jobs and Kueue's own kinds (config/components/webhook,
// the service reference replaced by that URL).
//
// Kueue with internalCertManagement off reads a metrics certificate
// from the fixed path /etc/kueue/metrics/certs (cmd/kueue/main.go), so
// kueue runs in a private mount namespace where /etc is an overlay with
// that certificate added: this needs root. kueue is stopped with the
// cluster (it is a component, Kueue, for Kill and Restart). A running
// kube-controller-manager is restarted once the CRDs are in, so that its
// garbage collector knows Workloads from the start.
func (c *Cluster) StartKueue(ctx context.Context, o KueueOptions) error {
	if os.Geteuid() != 0 {
		return errors.New("kueue: needs root (its fixed metrics certificate path, /etc/kueue/metrics/certs, is made in a private mount namespace)")
	}
	bin := o.Bin
	if bin == "" {
		var err error
		if bin, err = Find(Kueue); err != nil {
			return err
		}
	}
	mod, err := KueueModuleDir(ctx)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if err := c.installKueueCRDs(ctx, dyn, filepath.Join(mod, "config", "components", "crd", "bases")); err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// kube-controller-manager's garbage collector discovers new resources
	// every 30 s (cmd/kube-controller-manager/app/core.go syncPeriod):
	// restarted, it collects the Workloads of deleted Jobs at once.
	if _, running, err := c.Pid(ControllerManager); err == nil && running {
		if err := c.Restart(ctx, ControllerManager); err != nil {
			return err
		}
	}
	dir := filepath.Join(c.Dir, "kueue")
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	webhookPort, healthPort := ports[0], ports[1]
	if err := c.writeKueueFiles(dir, webhookPort, healthPort, o); err != nil {
		return err
	}
	args := []string{"-c", kueueNamespaceScript, "gpuplane-kueue", dir, bin,
		"--config=" + filepath.Join(dir, "config.yaml"), "--kubeconfig=" + c.Kubeconfig, "--zap-log-level=3"}
	if _, ok := o.Config["featureGates"]; !ok {
		gates := "VisibilityOnDemand=false"
		if o.FeatureGates != "" {
			gates += "," + o.FeatureGates
		}
		args = append(args, "--feature-gates="+gates)
	} else if o.FeatureGates != "" {
		return errors.New("kueue: FeatureGates and Config's featureGates both given")
	}
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	p, err := startProcAttr(Kueue, "/bin/sh", args, nil, filepath.Join(c.Dir, "kueue.log"), attr, c.procExited)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	hc := &http.Client{Timeout: 2 * time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(healthPort) + "/readyz"
	if err := c.waitUntil(ctx, "kueue at "+url, func(ctx context.Context) error {
		return get(ctx, hc, url, "ok")
	}); err != nil {
		return err
	}
	return c.registerKueueWebhooks(ctx, dyn, filepath.Join(mod, "config", "components", "webhook", "manifests.yaml"), webhookPort)
}

// kueueNamespaceScript runs in kueue's new mount namespace (made private
// by the Go runtime's CLONE_NEWNS handling): $1 is kueue's directory
// (certs/ holds tls.crt and tls.key), the rest kueue's command line.
const kueueNamespaceScript = `set -e
mkdir -p "$1/etc-upper" "$1/etc-work"
mount -t overlay gpuplane-kueue -o "lowerdir=/etc,upperdir=$1/etc-upper,workdir=$1/etc-work" /etc
mkdir -p /etc/kueue/metrics/certs
cp "$1/certs/tls.crt" "$1/certs/tls.key" /etc/kueue/metrics/certs/
shift
exec "$@"
`

// writeKueueFiles writes kueue's serving certificate (127.0.0.1 and
// localhost, from the cluster's CA) to dir/certs and its configuration
// (config.kueue.x-k8s.io/v1beta2 Configuration) to dir/config.yaml.
func (c *Cluster) writeKueueFiles(dir string, webhookPort, healthPort int, o KueueOptions) error {
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return err
	}
	cert, key, err := c.pki.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kueue-webhook"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certs, "tls.crt"), cert, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certs, "tls.key"), key, 0o600); err != nil {
		return err
	}
	conf := KueueConfiguration(certs, webhookPort, healthPort, o.ExcludeResourcePrefixes)
	if err := mergeKueueConfig(conf, o.Config); err != nil {
		return err
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.yaml"), b, 0o644)
}

// mergeKueueConfig sets the top-level keys of extra over conf
// (KueueOptions.Config); featureGates gets VisibilityOnDemand false
// added, since the test cluster runs no visibility API server.
func mergeKueueConfig(conf, extra map[string]any) error {
	for k, v := range extra {
		conf[k] = v
	}
	g, ok := extra["featureGates"]
	if !ok {
		return nil
	}
	gates := map[string]any{"VisibilityOnDemand": false}
	switch g := g.(type) {
	case map[string]any:
		for k, v := range g {
			gates[k] = v
		}
	case map[string]bool:
		for k, v := range g {
			gates[k] = v
		}
	default:
		return fmt.Errorf("kueue: Config featureGates: %T, want a map of gate names to bools", g)
	}
	conf["featureGates"] = gates
	return nil
}

// KueueConfiguration is the Kueue Configuration (Kueue v0.17.0
// apis/config/v1beta2) the test cluster runs: webhooks on
// 127.0.0.1:webhookPort with the certificate in certDir, health probes on
// 127.0.0.1:healthPort, metrics off, no leader election, no internal
// certificate management, the batch/job integration, and exclude as
// resources.excludeResourcePrefixes (omitted when empty).
func KueueConfiguration(certDir string, webhookPort, healthPort int, exclude []string) map[string]any {
	conf := map[string]any{
		"apiVersion":             "config.kueue.x-k8s.io/v1beta2",
		"kind":                   "Configuration",
		"namespace":              KueueNamespace,
		"health":                 map[string]any{"healthProbeBindAddress": "127.0.0.1:" + strconv.Itoa(healthPort)},
		"metrics":                map[string]any{"bindAddress": "0"},
		"webhook":                map[string]any{"host": "127.0.0.1", "port": webhookPort, "certDir": certDir},
		"leaderElection":         map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{"enable": false},
		"clientConnection":       map[string]any{"qps": 500, "burst": 1000},
		"integrations":           map[string]any{"frameworks": []string{"batch/job"}},
	}
	if len(exclude) > 0 {
		conf["resources"] = map[string]any{"excludeResourcePrefixes": exclude}
	}
	return conf
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installKueueCRDs creates every CRD of dir and waits until each is
// Established.
func (c *Cluster) installKueueCRDs(ctx context.Context, dyn dynamic.Interface, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("kueue: no CRDs in %s", dir)
	}
	var names []string
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := dyn.Resource(crdGVR).Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: %w", f, err)
			}
			names = append(names, o.GetName())
		}
	}
	for _, n := range names {
		if err := c.waitUntil(ctx, "CRD "+n+" Established", func(ctx context.Context) error {
			crd, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cd := range conds {
				if m, _ := cd.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return errors.New("not Established")
		}); err != nil {
			return err
		}
	}
	return nil
}

// kueueWebhookPaths are the prefixes of the webhook paths registered: the
// batch/job integration's and Kueue's own kinds'. The others belong to
// integrations the test cluster does not run (their webhooks would refuse
// every Pod, Deployment, ...).
var kueueWebhookPaths = []string{"/mutate-batch-v1-job", "/validate-batch-v1-job", "/mutate-kueue-x-k8s-io-", "/validate-kueue-x-k8s-io-"}

// registerKueueWebhooks creates Kueue's webhook configurations from its
// manifests, each webhook's service reference replaced by
// https://127.0.0.1:port with the cluster's CA, keeping kueueWebhookPaths.
func (c *Cluster) registerKueueWebhooks(ctx context.Context, dyn dynamic.Interface, manifests string, port int) error {
	objs, err := readObjects(manifests)
	if err != nil {
		return err
	}
	for _, o := range objs {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			path, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
			for _, p := range kueueWebhookPaths {
				if strings.HasPrefix(path, p) {
					m["clientConfig"] = map[string]any{"url": "https://127.0.0.1:" + strconv.Itoa(port) + path, "caBundle": base64.StdEncoding.EncodeToString(c.pki.caPEM)}
					kept = append(kept, m)
					break
				}
			}
		}
		if err := unstructured.SetNestedSlice(o.Object, kept, "webhooks"); err != nil {
			return err
		}
		o.SetName("kueue-" + o.GetName())
		gvr := o.GroupVersionKind().GroupVersion().WithResource(strings.ToLower(o.GetKind()) + "s")
		if _, err := dyn.Resource(gvr).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: %s: %w", manifests, o.GetName(), err)
		}
	}
	return nil
}

// readObjects reads the objects of a multi-document YAML file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeObjects(path, data)
}

// decodeObjects decodes a multi-document YAML stream; name is used in
// errors.
func decodeObjects(path string, data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}
