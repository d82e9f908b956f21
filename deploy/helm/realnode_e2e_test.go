// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi/gpucditest"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// imageEnv names an image archive built by make image (bin/gpuplane-image.tar)
// for the real-node tests to import instead of building one: .ci/run
// builds it once and sets it, so that make test does not build it again.
const imageEnv = "GPUPLANE_IMAGE"

// imageArchive returns the archive of GPUPLANE_IMAGE, else builds the
// checkout's image as make image does (go run ./hack/image) into the
// test's directory. A build that cannot reach deb.debian.org skips the
// test, or fails it under CI.
func imageArchive(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(imageEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", imageEnv, err)
		}
		return p
	}
	out := filepath.Join(t.TempDir(), "gpuplane-image.tar")
	cmd := exec.CommandContext(t.Context(), "go", "run", "./hack/image", "--out", out)
	cmd.Dir = filepath.Join("..", "..")
	b, err := cmd.CombinedOutput()
	if err != nil {
		if bytes.Contains(b, []byte("deb.debian.org unreachable")) && os.Getenv("CI") == "" {
			t.Skipf("offline: go run ./hack/image: %s", b)
		}
		t.Fatalf("go run ./hack/image --out %s: %v\n%s", out, err, b)
	}
	return out
}

// freePort returns a TCP port free on 127.0.0.1 now, for a role that
// binds it in the node's network (hostNetwork).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// webhookTLS returns a CA and a serving certificate and key (PEM) for
// the webhook's Service name in the release namespace.
func webhookTLS(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, srvKey := key(), key()
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpuplane-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	svc := webhookName + "." + namespace + ".svc"
	srv := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: svc},
		DNSNames: []string{svc}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// realNode is a control plane with one real kubelet node whose pods
// containerd and runc run, the chart's image imported, a fake driver
// tree with character device nodes, and the values that install the
// chart there.
type realNode struct {
	t       *testing.T
	ctx     context.Context
	c       *kube.Cluster
	k       *kube.KubeletNode
	driver  gpucditest.Driver
	values  []string // helm's -f arguments: the values files
	dra     bool     // the agent serves its GPUs through DRA
	sockets []string // the directories where the agent puts its sockets
}

// mockGPUs is the number of GPUs of the mock profile the agent runs,
// dgx-h100 (internal/node/device/mock profiles: 8 H100s, driver
// 550.54.15).
const mockGPUs = 8

// startRealNode starts the node, imports archive and writes the values:
// the agent on the mock backend with cdi-cri and its own CDI specs in
// containerd's CDI directory, from the fake driver tree (its host path
// as nodeAgent.driverRoot, the fake hook); the scheduler, the webhook
// (a certificate of the test's in a Secret) and cost; every role in the
// node's network on ports free now, reaching the API server at
// 127.0.0.1 (the test cluster has no kube-proxy). With dra, the agent
// serves its GPUs through DRA instead (draValues), writing the prepared
// devices' specs.
func startRealNode(t *testing.T, archive string, dra bool) *realNode {
	t.Helper()
	e := &realNode{t: t, ctx: t.Context(), dra: dra}
	// The Workload API the chart's scheduler (featureGates
	// GenericWorkload=true) watches, and its bootstrap RBAC.
	e.c = kube.StartT(t, kube.Options{ServiceAccountTokens: true, FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	e.k = kube.StartKubeletNodeT(t, e.c, "gpu-node", kube.KubeletOptions{
		Containerd: true, Labels: map[string]string{"nvidia.com/gpu.present": "true"},
	})
	t0 := time.Now()
	if err := e.k.Containerd.Import(e.ctx, archive); err != nil {
		t.Fatal(err)
	}
	t.Logf("ctr images import of %s: %.1f s", archive, time.Since(t0).Seconds())
	e.driver = gpucditest.New(t, "550.54.15")
	e.driver.CharDevices(t, mockGPUs)
	hook, _ := e.driver.Hook(t)
	for _, ns := range []string{namespace, teamNS} {
		if _, err := e.c.Client.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	caPEM, certPEM, keyPEM := webhookTLS(t)
	if _, err := e.c.Client.CoreV1().Secrets(namespace).Create(e.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.c.URL)
	if err != nil {
		t.Fatal(err)
	}
	values := fmt.Sprintf(realNodeValues, strconv.Quote(u.Port()), freePort(t), e.driver.Root,
		e.k.Containerd.CDIDir, hook, e.k.DevicePluginDir, filepath.Dir(e.k.PodResourcesSocket),
		freePort(t), freePort(t), freePort(t), base64.StdEncoding.EncodeToString(caPEM), freePort(t), freePort(t))
	e.addValues(values)
	e.sockets = []string{e.k.DevicePluginDir}
	if dra {
		plugins, registrar := filepath.Join(e.k.RootDir, "plugins"), filepath.Join(e.k.RootDir, "plugins_registry")
		e.addValues(fmt.Sprintf(draValues, plugins, registrar, e.k.Containerd.CDIDir))
		e.sockets = append(e.sockets, filepath.Join(plugins, "gpu.nvidia.com"), registrar)
	}
	go bindDefault(e.ctx, e.c, e.k.Name)
	return e
}

// addValues writes values to a file that helm is given after those
// before (-f), whose values it overrides.
func (e *realNode) addValues(values string) {
	e.t.Helper()
	p := filepath.Join(e.t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.values = append(e.values, "-f", p)
}

// draValues switch the agent to DRA: the kubelet's plugin and
// registration directories, and containerd's CDI directory for the
// prepared devices' specs.
const draValues = `nodeAgent:
  kubeletAPI: dra
  dra:
    pluginsDir: %s
    registrarDir: %s
    cdiDir: %s
`

// teamNS is where the GPU pods run: the namespace of the webhook policy's
// one team, whose admission policy refuses a GPU pod in a namespace of
// no team (docs/webhook.md, rule team).
const teamNS = "research"

// realNodeValues are the chart's values for the real node (startRealNode
// fills them in).
const realNodeValues = `image: {pullPolicy: Never}
hostNetwork: true
kubernetesServiceHost: 127.0.0.1
kubernetesServicePort: %s
backend: mock
metrics: {port: %d}
nodeAgent:
  driverRoot: %s
  cdiDir: %s
extraArgs: [--nvidia-cdi-hook-path=%s]
devicePluginDir: %s
podResourcesDir: %s
config:
  version: v1
  flags: {plugin: {deviceListStrategy: [cdi-cri]}}
scheduler:
  enabled: true
  port: %d
webhook:
  enabled: true
  replicas: 1
  port: %d
  metricsPort: %d
  tls: {secretName: webhook-tls, caBundle: %s}
  policy:
    teams:
      - name: research
        namespaces: [` + teamNS + `]
        allowedResources: [nvidia.com/gpu]
cost:
  enabled: true
  port: %d
  prometheus: http://127.0.0.1:%d
  serviceMonitor: {enabled: false}
`

// bindDefault binds every pending pod of the default scheduler to node,
// in place of kube-scheduler, which the test cluster does not run: the
// chart's Deployments and its DaemonSet (whose pods carry node affinity
// to their node). Pods of another scheduler are the chart's scheduler's
// to bind. It returns when ctx ends.
func bindDefault(ctx context.Context, c *kube.Cluster, node string) {
	for ctx.Err() == nil {
		pods, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
		if err == nil {
			for _, p := range pods.Items {
				if p.Spec.SchedulerName != corev1.DefaultSchedulerName || p.DeletionTimestamp != nil {
					continue
				}
				_ = c.Client.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
					Target:     corev1.ObjectReference{Kind: "Node", Name: node},
				}, metav1.CreateOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// helm runs helm against the cluster in the release namespace.
func (e *realNode) helm(args ...string) string {
	e.t.Helper()
	return helm(e.t, append(args, "--kubeconfig", e.c.Kubeconfig, "--namespace", namespace)...)
}

// pollTimeout bounds each wait of the real-node tests: the longest, every
// role Ready after helm install, took 18 to 24 s here (docs/cluster.md).
const pollTimeout = 5 * time.Minute

// poll calls cond every 200 ms until it returns nil, failing the test
// with its last error after pollTimeout, when the test's context ends or
// when the kubelet exits.
func (e *realNode) poll(what string, cond func() error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, pollTimeout)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("waiting for %s: %v", what, err)
		case <-e.k.Exited():
			e.t.Fatalf("waiting for %s: the kubelet exited; last: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitRoles waits until the release namespace holds a Ready pod of each
// of the chart's roles, each container running the chart's image, and
// returns the pods by role.
func (e *realNode) waitRoles() map[string]corev1.Pod {
	e.t.Helper()
	roles := map[string]string{
		"node-agent": "gpuplane", "scheduler": "gpuplane-scheduler",
		"webhook": "gpuplane-webhook", "cost": "gpuplane-cost",
	}
	got := map[string]corev1.Pod{}
	e.poll("a Ready pod of every role", func() error {
		pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		clear(got)
		var status []string
		for _, p := range pods.Items {
			for role, name := range roles {
				if p.Labels["app.kubernetes.io/name"] == name && ready(p) && p.DeletionTimestamp == nil {
					got[role] = p
				}
			}
			status = append(status, fmt.Sprintf("%s %s ready=%v %s", p.Name, p.Status.Phase, ready(p), waiting(p)))
		}
		if len(got) != len(roles) {
			return fmt.Errorf("%d of %d roles Ready; pods: %s%s", len(got), len(roles), strings.Join(status, "; "), e.notReadyLogs(pods.Items))
		}
		return nil
	})
	return got
}

// notReadyLogs returns the tail of the log of each container of the pods
// that is not Ready, for a failure message.
func (e *realNode) notReadyLogs(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		if ready(p) {
			continue
		}
		for _, c := range p.Spec.Containers {
			out, err := e.k.ContainerLog(p.Namespace, p.Name, c.Name)
			if err != nil {
				out = err.Error()
			}
			if lines := strings.Split(out, "\n"); len(lines) > 15 {
				out = strings.Join(lines[len(lines)-15:], "\n")
			}
			fmt.Fprintf(&b, "\n--- %s/%s:\n%s", p.Name, c.Name, out)
		}
	}
	return b.String()
}

func ready(p corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// waiting names why a pod's containers wait or what they last ended with.
func waiting(p corev1.Pod) string {
	var out []string
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil {
			out = append(out, s.Name+": "+w.Reason+" "+w.Message)
		}
		if l := s.LastTerminationState.Terminated; l != nil {
			out = append(out, fmt.Sprintf("%s: last exit %d %s", s.Name, l.ExitCode, l.Message))
		}
	}
	return strings.Join(out, ", ")
}

// waitGPUs waits until the node's allocatable nvidia.com/gpu is n.
func (e *realNode) waitGPUs(n int64) {
	e.t.Helper()
	e.poll(fmt.Sprintf("%d allocatable %s", n, gpuresource.GPU), func() error {
		node, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.k.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if a := node.Status.Allocatable[gpuresource.GPU]; a.Value() != n {
			return fmt.Errorf("allocatable %s", a.String())
		}
		return nil
	})
}

// runGPUPod runs the probe (kube.ProbeImage, "devices" and the fake
// driver's library directory) in a pod asking for gpus GPUs (with DRA, a
// claim from claimTemplate) through the chart's scheduler (profile
// gpuplane), waits until it has Succeeded and returns what it printed.
func (e *realNode) runGPUPod(name string, gpus int) string {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			SchedulerName: "gpuplane", HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "main", Image: kube.ProbeImage, ImagePullPolicy: corev1.PullNever,
				Args:      []string{"devices", gpucditest.LibDir},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}},
			}},
		},
	}
	if e.dra {
		tmpl := e.claimTemplate(gpus)
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}}
		pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}
	}
	if _, err := e.c.Client.CoreV1().Pods(teamNS).Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.poll("pod "+name+" Succeeded", func() error {
		p, err := e.c.Client.CoreV1().Pods(teamNS).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodFailed {
			e.t.Fatalf("pod %s Failed: %s %+v", name, waiting(*p), p.Status)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("node %q, phase %s %s", p.Spec.NodeName, p.Status.Phase, waiting(*p))
		}
		return nil
	})
	out, err := e.k.ContainerLog(teamNS, name, "main")
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// checkGPUPod checks what a probe given gpus GPUs printed: exactly gpus
// device nodes /dev/nvidia<i> (char 195:i, i < mockGPUs) and the control
// nodes the fake tree has (nvidiactl 195:255, the uvm pair 511:0 and
// 511:1); the fake driver's libraries, each with the host's bytes; the
// NVIDIA environment of the agent's specs, exactly
// NVIDIA_CTK_LIBCUDA_DIR (nvcdi's) and NVIDIA_VISIBLE_DEVICES=void. It
// returns the GPU minors.
func (e *realNode) checkGPUPod(name, out string, gpus int) []int {
	e.t.Helper()
	var minors []int
	var devs, env, files []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if d, ok := strings.CutPrefix(line, "device /dev/nvidia"); ok {
			var m, major, minor int
			if _, err := fmt.Sscanf(d, "%d c %d:%d", &m, &major, &minor); err == nil && major == gpucditest.NvidiaMajor && minor == m && m < mockGPUs {
				minors = append(minors, m)
				continue
			}
			devs = append(devs, "/dev/nvidia"+d)
		}
		if v, ok := strings.CutPrefix(line, "env NVIDIA_"); ok {
			env = append(env, "NVIDIA_"+v)
		}
		if f, ok := strings.CutPrefix(line, "file "); ok {
			files = append(files, f)
		}
	}
	if len(minors) != gpus {
		e.t.Errorf("pod %s: GPU nodes of minors %v, want %d; it printed:\n%s", name, minors, gpus, out)
	}
	if want := []string{"/dev/nvidia-uvm c 511:0", "/dev/nvidia-uvm-tools c 511:1", "/dev/nvidiactl c 195:255"}; !slices.Equal(devs, want) {
		e.t.Errorf("pod %s: other NVIDIA nodes %q, want %q", name, devs, want)
	}
	if want := []string{"NVIDIA_CTK_LIBCUDA_DIR=" + gpucditest.LibDir, "NVIDIA_VISIBLE_DEVICES=void"}; !slices.Equal(env, want) {
		e.t.Errorf("pod %s: NVIDIA environment %q, want %q", name, env, want)
	}
	if len(files) != len(gpucditest.Libraries) {
		e.t.Errorf("pod %s: files %q, want the fake driver's %d libraries", name, files, len(gpucditest.Libraries))
	}
	for _, so := range gpucditest.Libraries {
		b, err := os.ReadFile(e.driver.Lib(so))
		if err != nil {
			e.t.Fatal(err)
		}
		want := fmt.Sprintf("%s/%s %x", gpucditest.LibDir, filepath.Base(e.driver.Lib(so)), sha256.Sum256(b))
		if !slices.Contains(files, want) {
			e.t.Errorf("pod %s: no %q among %q", name, want, files)
		}
	}
	return minors
}

// claimTemplate creates, once, the ResourceClaimTemplate gpu-<n> of
// teamNS: one request of exactly n devices of the chart's DeviceClass
// gpu.nvidia.com. It returns its name.
func (e *realNode) claimTemplate(n int) string {
	e.t.Helper()
	name := fmt.Sprintf("gpu-%d", n)
	_, err := e.c.Client.ResourceV1().ResourceClaimTemplates(teamNS).Create(e.ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: int64(n),
			}}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	return name
}

// waitAgentAnnotated waits until the agent's Ready pod carries the pod
// annotation key (a rolled DaemonSet) and no other agent pod is left.
func (e *realNode) waitAgentAnnotated(key string) {
	e.t.Helper()
	e.poll("the agent rolled with annotation "+key, func() error {
		pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=gpuplane"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 || pods.Items[0].Annotations[key] == "" || !ready(pods.Items[0]) {
			var s []string
			for _, p := range pods.Items {
				s = append(s, fmt.Sprintf("%s ready=%v annotations=%v", p.Name, ready(p), p.Annotations))
			}
			return fmt.Errorf("agent pods: %s", strings.Join(s, "; "))
		}
		return nil
	})
}

// checkNothingLeft waits until the release namespace has no pod left and
// the node has no socket of the agent's (device plugin; with DRA its
// plugin's and registration's) and no CDI spec of the agent's
// (gpuplane_*.json in containerd's CDI directory).
func (e *realNode) checkNothingLeft() {
	e.t.Helper()
	e.poll("nothing of the release on the node", func() error {
		pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(pods.Items); n > 0 {
			return fmt.Errorf("%d pods left in %s", n, namespace)
		}
		for _, dir := range e.sockets {
			entries, err := os.ReadDir(dir)
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			for _, d := range entries {
				if d.Type()&os.ModeSocket != 0 && d.Name() != "kubelet.sock" {
					return fmt.Errorf("socket %s left in %s", d.Name(), dir)
				}
			}
		}
		if specs, _ := filepath.Glob(filepath.Join(e.k.Containerd.CDIDir, "gpuplane_*.json")); len(specs) > 0 {
			return fmt.Errorf("CDI specs left: %v", specs)
		}
		return nil
	})
}

// waitLabelled waits until the agent (--label-node, on with
// scheduler.enabled) has put its GPU feature labels on the node:
// nvidia.com/gpu.count is mockGPUs (8, the mock dgx-h100) and
// gpuplane.io/gpu.model is set.
func (e *realNode) waitLabelled() {
	e.t.Helper()
	e.poll("the agent's labels on the node", func() error {
		n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.k.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Labels[gpuresource.LabelGPUCount] != strconv.Itoa(mockGPUs) || n.Labels[gpuresource.LabelGPUModel] == "" {
			return fmt.Errorf("labels %v", n.Labels)
		}
		return nil
	})
}

// checkLabelsPruned checks, right after helm uninstall returned (helm
// waits for its post-delete hook Job to complete), that the node carries
// none of the agent's labels (labels.Owned) but nvidia.com/gpu.present,
// which the test's kubelet registered it with and the hook keeps, and
// that the hook's Job and ClusterRole are gone (hook-succeeded).
func (e *realNode) checkLabelsPruned() {
	e.t.Helper()
	n, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, e.k.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range n.Labels {
		if labels.Owned(k) && k != gpuresource.LabelGPUPresent {
			e.t.Errorf("label %s=%s left on the node after helm uninstall", k, v)
		}
	}
	if v := n.Labels[gpuresource.LabelGPUPresent]; v != "true" {
		e.t.Errorf("label %s=%q after helm uninstall, want true (kept)", gpuresource.LabelGPUPresent, v)
	}
	name := pruneName
	if _, err := e.c.Client.BatchV1().Jobs(namespace).Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.t.Errorf("Job %s after helm uninstall: %v, want NotFound", name, err)
	}
	if _, err := e.c.Client.RbacV1().ClusterRoles().Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.t.Errorf("ClusterRole %s after helm uninstall: %v, want NotFound", name, err)
	}
}

// deletePods deletes the GPU pods (in teamNS) and waits until
// they are gone.
func (e *realNode) deletePods(names ...string) {
	e.t.Helper()
	for _, n := range names {
		if err := e.c.Client.CoreV1().Pods(teamNS).Delete(e.ctx, n, metav1.DeleteOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	e.poll("the GPU pods gone", func() error {
		for _, n := range names {
			if _, err := e.c.Client.CoreV1().Pods(teamNS).Get(e.ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("pod %s: %v", n, err)
			}
		}
		return nil
	})
}

// TestHelmRealNodeDevicePlugin: the chart installed with helm on a real
// kubelet whose pods containerd and runc run, every role from the image
// make image builds (imported from its OCI archive, no registry): the
// agent (mock dgx-h100, 8 GPUs, device plugin with cdi-cri and its own
// CDI specs from a fake driver tree), the scheduler, the webhook and
// cost each get a Ready pod. The scheduler places a 2-GPU and a 1-GPU
// pod (schedulerName gpuplane); runc starts the probe in each from the
// agent's CDI specs, and it prints from inside exactly its GPUs' nodes
// and the control nodes, the driver's libraries, and
// NVIDIA_VISIBLE_DEVICES=void (checkGPUPod). helm upgrade rolls the
// agent (a pod annotation), after which a 1-GPU pod runs the same way;
// helm uninstall leaves no pod, no plugin socket and no CDI spec, and its
// post-delete hook Job removes the agent's node labels.
func TestHelmRealNodeDevicePlugin(t *testing.T) { testHelmRealNode(t, false) }

// TestHelmRealNodeDRA: the same with the agent serving its GPUs through
// DRA (nodeAgent.kubeletAPI dra, the chart's DeviceClasses): the pods ask
// through claims from ResourceClaimTemplates of 2 and 1 gpu.nvidia.com
// devices, which the chart's scheduler allocates; the agent writes each
// prepared device's spec, removed at unprepare; after uninstall no
// socket is left in the plugin and registration directories either.
func TestHelmRealNodeDRA(t *testing.T) { testHelmRealNode(t, true) }

func testHelmRealNode(t *testing.T, dra bool) {
	if testing.Short() {
		t.Skip("builds the image, runs containerd, runc and a kubelet")
	}
	helmBin(t)
	t0 := time.Now()
	archive := imageArchive(t)
	t.Logf("image archive %s: %.1f s", archive, time.Since(t0).Seconds())
	e := startRealNode(t, archive, dra)
	t1 := time.Now()
	e.helm(append([]string{"install", release, chart}, e.values...)...)
	roles := e.waitRoles()
	t.Logf("helm install to every role Ready: %.1f s", time.Since(t1).Seconds())
	want := "ghcr.io/gpuplane/gpuplane:" + appVersion(t)
	for role, p := range roles {
		if img := p.Spec.Containers[0].Image; img != want || p.Spec.NodeName != e.k.Name {
			t.Errorf("%s: image %s on node %q, want %s on %s", role, img, p.Spec.NodeName, want, e.k.Name)
		}
	}
	if !dra {
		e.waitGPUs(mockGPUs)
	}
	e.checkGPUPod("two", e.runGPUPod("two", 2), 2)
	e.checkGPUPod("one", e.runGPUPod("one", 1), 1)

	const upgraded = "gpuplane.io/test-upgrade"
	e.helm(append([]string{"upgrade", release, chart, "--set", "podAnnotations.gpuplane\\.io/test-upgrade=yes"}, e.values...)...)
	e.waitAgentAnnotated(upgraded)
	e.waitRoles()
	if !dra {
		e.waitGPUs(mockGPUs)
	}
	e.checkGPUPod("three", e.runGPUPod("three", 1), 1)

	e.deletePods("two", "one", "three")
	e.waitLabelled()
	e.helm("uninstall", release, "--wait", "--timeout", "3m")
	e.checkLabelsPruned()
	e.checkNothingLeft()
	t.Logf("helm install to uninstalled: %.1f s", time.Since(t1).Seconds())
}

// appVersion is Chart.yaml's appVersion, the image's tag.
func appVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatal("Chart.yaml: no appVersion")
	return ""
}
