// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// TestWebhookDownAndSlow is the fault case of gpuplane-webhook on a real
// kube-apiserver v1.37.2, with the chart's webhook configurations
// (failurePolicy Ignore, timeoutSeconds 1 here) and the chart's
// ValidatingAdmissionPolicy from the same policy file. First the webhook
// is slow (it answers nothing for 10 s), then down (its port closed). In
// both, a pod that breaks a rule CEL can say (9 GPUs for team research,
// which allows 8) is refused by the API server with the webhook's own
// message; a valid pod is admitted, but without the webhook's mutations
// (no team label: the MutatingAdmissionPolicy, not installed here, is
// what keeps them); and the API server counts each fail-open in
// apiserver_admission_webhook_fail_open_count, which the chart's
// GPUWebhookFailOpen alert reads. The admission times are logged
// (docs/webhook.md).
func TestWebhookDownAndSlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	r := render(t, "-f", policyValues(t, policyFile), "--set", "webhook.timeoutSeconds=1")
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	r.get(t, "ValidatingAdmissionPolicy", webhookName, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", webhookName, &vapb)
	r.get(t, "ValidatingWebhookConfiguration", webhookName, &vwc)
	r.get(t, "MutatingWebhookConfiguration", webhookName, &mwc)
	if p := vwc.Webhooks[0].FailurePolicy; p == nil || *p != admissionregistrationv1.Ignore {
		t.Fatalf("the chart's failurePolicy is %v, want Ignore (the default this test is about)", p)
	}

	// The slow webhook: it holds every request until it is closed or 10 s
	// have passed, far past the API server's 1 s timeout.
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		select {
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate"), CABundle: ca}
	}
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/mutate"), CABundle: ca}
	}

	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	for _, ns := range []string{"research", "serve"} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	alice := podCreator(t, c, "alice")
	must(t, create(ctx, admin, &vap))
	must(t, create(ctx, admin, &vapb))
	_, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &vwc, metav1.CreateOptions{})
	must(t, err)
	_, err = admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &mwc, metav1.CreateOptions{})
	must(t, err)

	gpuPod := func(name string, gpus int64) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "research"},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": *k8sresource.NewQuantity(gpus, k8sresource.DecimalSI)}}}},
			},
		}
	}
	// Both the policy and the webhooks are in force once a dry run of a
	// refused pod is refused and the webhook has been called.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := alice.CoreV1().Pods("research").Create(ctx, gpuPod("probe", 9), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && hits.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("policy and webhooks not in force after a minute (webhook calls %d, last: %v)", hits.Load(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	const refusal = "gpuplane GPU policy refuses pod research/%s: max-gpus-per-pod: the pod asks for 9 GPUs, team research allows at most 8 per pod"
	phase := func(name string) {
		before := failOpens(t, ctx, admin)
		start := time.Now()
		got, err := alice.CoreV1().Pods("research").Create(ctx, gpuPod(name+"-ok", 8), metav1.CreateOptions{})
		admitted := time.Since(start)
		if err != nil {
			t.Fatalf("%s webhook: a valid pod was refused: %v", name, err)
		}
		if team, ok := got.Labels["gpuplane.io/team"]; ok {
			t.Errorf("%s webhook: the admitted pod has team label %q; the webhook cannot have set it", name, team)
		}
		start = time.Now()
		_, err = alice.CoreV1().Pods("research").Create(ctx, gpuPod(name+"-nine", 9), metav1.CreateOptions{})
		refused := time.Since(start)
		if want := strings.ReplaceAll(refusal, "%s", name+"-nine"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s webhook: pod of 9 GPUs: %v, want the policy's refusal %q", name, err, want)
		}
		// The valid pod failed open at both webhooks, the refused one at
		// the mutating webhook before the policy refused it: 3.
		if n := failOpens(t, ctx, admin) - before; n != 3 {
			t.Errorf("%s webhook: apiserver_admission_webhook_fail_open_count grew by %v, want 3", name, n)
		}
		t.Logf("%s webhook: valid pod admitted in %.2f s, pod of 9 GPUs refused in %.2f s", name, admitted.Seconds(), refused.Seconds())
	}
	phase("slow")
	srv.CloseClientConnections()
	srv.Close()
	phase("down")
}

// failOpens sums kube-apiserver's apiserver_admission_webhook_fail_open_count
// over gpuplane's two webhooks.
func failOpens(t *testing.T, ctx context.Context, cs kubernetes.Interface) float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	must(t, err)
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_admission_webhook_fail_open_count{") || !strings.Contains(line, `.gpuplane.io"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		must(t, err)
		sum += v
	}
	return sum
}
