// Package webhook serves gpuplane's GPU admission policy (internal/webhook/policy)
// as a Kubernetes admission webhook (admission.k8s.io/v1): mutating at
// /mutate (Pods), validating at /validate (Pods, and the pod templates of
// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs),
// with /healthz and Prometheus /metrics, over TLS only with a certificate
// reloaded when its files change.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// maxBody caps an AdmissionReview body, in bytes: the API server's own
// request limit is 3 MiB.
const maxBody = 4 << 20

// NamespaceLabels returns the labels of a namespace, for the policy's
// namespaceSelector.
type NamespaceLabels func(ctx context.Context, name string) (map[string]string, error)

// Handler serves the admission endpoints.
type Handler struct {
	policy     *policy.Policy
	namespaces NamespaceLabels
	mux        *http.ServeMux
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
}

// NewHandler returns the handler of pol; ns looks namespaces' labels up
// (nil: a namespace has only its kubernetes.io/metadata.name label).
func NewHandler(pol *policy.Policy, ns NamespaceLabels) *Handler {
	reg := prometheus.NewRegistry()
	h := &Handler{
		policy:     pol,
		namespaces: ns,
		mux:        http.NewServeMux(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.WebhookRequestsTotal,
			Help: "Admission requests by webhook (mutate, validate) and result (allowed, denied, patched, bad_request, error).",
		}, []string{metrics.LabelWebhook, metrics.LabelResult}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metrics.WebhookDurationSeconds,
			Help:    "Time to answer one admission request, in seconds.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05},
		}, []string{metrics.LabelWebhook}),
	}
	reg.MustRegister(h.requests, h.latency)
	h.mux.HandleFunc("POST /mutate", func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, "mutate") })
	h.mux.HandleFunc("POST /validate", func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, "validate") })
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, webhook string) {
	start := time.Now()
	defer func() { h.latency.WithLabelValues(webhook).Observe(time.Since(start).Seconds()) }()
	review, err := readReview(r)
	if err != nil {
		h.requests.WithLabelValues(webhook, "bad_request").Inc()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp, err := h.admit(r.Context(), review.Request, webhook == "mutate")
	result := "allowed"
	switch {
	case err != nil:
		// An object the API server sent but that cannot be read is
		// refused with the reason, not answered with a 500: the API
		// server would apply failurePolicy and hide why.
		result = "error"
		resp = deny(review.Request.UID, http.StatusBadRequest, err.Error())
	case !resp.Allowed:
		result = "denied"
	case resp.Patch != nil:
		result = "patched"
	}
	h.requests.WithLabelValues(webhook, result).Inc()
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(&out)
}

// readReview decodes the request body; every error says what is wrong.
func readReview(r *http.Request) (*admissionv1.AdmissionReview, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, fmt.Errorf("content type %q, want application/json", ct)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading body: %v", err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("body over %d bytes", maxBody)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, fmt.Errorf("body is not an AdmissionReview: %v", err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("apiVersion %q kind %q, want admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, errors.New("AdmissionReview has no request")
	}
	if review.Request.UID == "" {
		return nil, errors.New("AdmissionReview request has no uid")
	}
	return &review, nil
}

func deny(uid types.UID, code int32, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: msg}}
}
