// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package webhook serves gpuplane's GPU admission policy (internal/webhook/policy)
// as a Kubernetes admission webhook (admission.k8s.io/v1): mutating at
// /mutate (Pods), validating at /validate (Pods, and the pod templates of
// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs),
// with /healthz, over TLS only with a certificate reloaded when its files
// change, with timeouts, a body limit and a connection limit (Limits), and
// its Prometheus metrics on a separate plain-HTTP port (Handler.Metrics).
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// DefaultMaxRequestBytes caps an AdmissionReview body, in bytes, as
// controller-runtime's webhook server does (pkg/webhook/admission/http.go,
// maxRequestSize): the API server takes request bodies of up to 3 MiB
// (k8s.io/apiserver, server.Config.MaxRequestBodyBytes), and an
// AdmissionReview carries at most two objects (object and oldObject) and
// under 1 MiB more: 7 MiB.
const DefaultMaxRequestBytes = 7 << 20

// NamespaceLabels returns the labels of a namespace, for the policy's
// namespaceSelector.
type NamespaceLabels func(ctx context.Context, name string) (map[string]string, error)

// Error reasons of gpuplane_webhook_errors_total (api/metrics): the first
// four are answered with an HTTP error, on which the API server applies
// the webhook's failurePolicy; the last two are refused with the reason.
var errorReasons = []string{metrics.WebhookErrBadRequest, metrics.WebhookErrTooLarge, metrics.WebhookErrReadBody,
	metrics.WebhookErrWriteResponse, metrics.WebhookErrDecodeObject, metrics.WebhookErrNamespaceLookup}

// ClaimSpecs returns the spec of the ResourceClaim or ResourceClaimTemplate
// claim c of a pod of namespace ns names: nil and no error where it does
// not exist.
type ClaimSpecs func(ctx context.Context, ns string, c policy.Claim) (*dra.ClaimSpec, error)

// GangFunc returns the PodGroup of pod p in namespace ns (labels
// nsLabels), "" for none; with dryRun (an admission dry run) it makes
// nothing.
type GangFunc func(ctx context.Context, p *corev1.Pod, ns string, nsLabels map[string]string, dryRun bool) (string, error)

// Handler serves the admission endpoints; Metrics serves its metrics.
type Handler struct {
	// MaxRequestBytes caps a request body (--max-request-bytes); a longer
	// one is answered 413. 0: DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Gangs, when set, gives a pod created by a training job its gang's
	// PodGroup (spec.schedulingGroup), after making sure the group exists
	// (internal/gang/workload Grouper.Group); nil: no gangs.
	Gangs GangFunc
	// Claims, when set, reads the claims of pods and pod templates, so
	// that the GPUs they claim count (policy.Claim.Spec); nil: no claim
	// is read, and each is named in a warning.
	Claims ClaimSpecs

	policy     *policy.Policy
	namespaces NamespaceLabels
	mux        *http.ServeMux
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	rejections *prometheus.CounterVec
	errors     *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	inFlight   *prometheus.GaugeVec
	conns      prometheus.Gauge
}

// NewHandler returns the handler of pol; ns looks namespaces' labels up
// (nil: a namespace has only its kubernetes.io/metadata.name label).
func NewHandler(pol *policy.Policy, ns NamespaceLabels) *Handler {
	h := &Handler{
		policy:     pol,
		namespaces: ns,
		mux:        http.NewServeMux(),
		registry:   prometheus.NewRegistry(),
		// The names follow controller-runtime's webhook metrics
		// (controller_runtime_webhook_requests_total,
		// _latency_seconds, _requests_in_flight).
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.WebhookRequestsTotal,
			Help: "Admission requests by webhook (mutate, validate), operation (CREATE, UPDATE, ...; unknown when the body is unreadable), HTTP status code and result (allowed, patched, denied, bad_request, error).",
		}, []string{metrics.LabelWebhook, metrics.LabelOperation, metrics.LabelCode, metrics.LabelResult}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.WebhookRejectionsTotal,
			Help: "Admission requests refused, by webhook, operation and rule of the GPU policy (one count per rule a request breaks); rule error: refused because the object or its namespace could not be read.",
		}, []string{metrics.LabelWebhook, metrics.LabelOperation, metrics.LabelRule}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metrics.WebhookErrorsTotal,
			Help: "Admission requests that failed, by webhook and reason (bad_request, too_large, read_body, write_response: answered with an HTTP error, the API server applies failurePolicy; decode_object, namespace_lookup: refused).",
		}, []string{metrics.LabelWebhook, metrics.LabelReason}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metrics.WebhookLatencySeconds,
			Help:    "Time from the end of a request's headers to its answer, reading the body included, in seconds.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{metrics.LabelWebhook}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metrics.WebhookRequestsInFlight,
			Help: "Admission requests being read or answered now, by webhook.",
		}, []string{metrics.LabelWebhook}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: metrics.WebhookOpenConnections,
			Help: "Connections open to the admission server now (at most --max-connections).",
		}),
	}
	h.registry.MustRegister(h.requests, h.rejections, h.errors, h.latency, h.inFlight, h.conns)
	for _, w := range []string{"mutate", "validate"} {
		// Every series exists from the start, so that rate() and
		// increase() see the first error.
		h.inFlight.WithLabelValues(w)
		for _, r := range errorReasons {
			h.errors.WithLabelValues(w, r)
		}
	}
	h.mux.HandleFunc("POST /mutate", func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, "mutate") })
	h.mux.HandleFunc("POST /validate", func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, "validate") })
	h.mux.HandleFunc("GET /healthz", healthz)
	return h
}

func healthz(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Metrics returns the handler of the metrics port: /metrics and /healthz.
func (h *Handler) Metrics() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(h.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", healthz)
	return mux
}

// Gatherer returns the registry of the handler's metrics.
func (h *Handler) Gatherer() prometheus.Gatherer { return h.registry }

// ConnState is http.Server.ConnState: it counts open connections.
func (h *Handler) ConnState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		h.conns.Inc()
	case http.StateClosed, http.StateHijacked:
		h.conns.Dec()
	}
}

// httpError is an error answered with an HTTP status code, counted under
// reason.
type httpError struct {
	code   int
	reason string
	err    error
}

func (e *httpError) Error() string { return e.err.Error() }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, webhook string) {
	start := time.Now()
	h.inFlight.WithLabelValues(webhook).Inc()
	defer func() {
		h.inFlight.WithLabelValues(webhook).Dec()
		h.latency.WithLabelValues(webhook).Observe(time.Since(start).Seconds())
	}()
	review, err := h.readReview(w, r)
	if err != nil {
		he := err.(*httpError)
		h.errors.WithLabelValues(webhook, he.reason).Inc()
		h.requests.WithLabelValues(webhook, "unknown", strconv.Itoa(he.code), "bad_request").Inc()
		http.Error(w, err.Error(), he.code)
		return
	}
	op := string(review.Request.Operation)
	resp, rules, err := h.admit(r.Context(), review.Request, webhook == "mutate")
	result := "allowed"
	switch {
	case err != nil:
		// An object the API server sent but that cannot be read is
		// refused with the reason, not answered with a 500: the API
		// server would apply failurePolicy and hide why.
		result = "error"
		reason := metrics.WebhookErrDecodeObject
		var ne *namespaceError
		if errors.As(err, &ne) {
			reason = metrics.WebhookErrNamespaceLookup
		}
		h.errors.WithLabelValues(webhook, reason).Inc()
		h.rejections.WithLabelValues(webhook, op, metrics.WebhookRuleError).Inc()
		resp = deny(review.Request.UID, http.StatusBadRequest, err.Error())
	case !resp.Allowed:
		result = "denied"
		for _, rule := range rules {
			h.rejections.WithLabelValues(webhook, op, rule).Inc()
		}
	case resp.Patch != nil:
		result = "patched"
	}
	h.requests.WithLabelValues(webhook, op, "200", result).Inc()
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&out); err != nil {
		h.errors.WithLabelValues(webhook, metrics.WebhookErrWriteResponse).Inc()
	}
}

// readReview decodes the request body; every error is an *httpError that
// says what is wrong.
func (h *Handler) readReview(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionReview, error) {
	bad := func(format string, a ...any) error {
		return &httpError{http.StatusBadRequest, metrics.WebhookErrBadRequest, fmt.Errorf(format, a...)}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, bad("content type %q, want application/json", ct)
	}
	limit := h.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	tooLarge := &httpError{http.StatusRequestEntityTooLarge, metrics.WebhookErrTooLarge, fmt.Errorf("body over %d bytes", limit)}
	if r.ContentLength > limit {
		// Refused before reading; the server closes the connection
		// rather than read the rest.
		w.Header().Set("Connection", "close")
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge
	case err != nil:
		return nil, &httpError{http.StatusBadRequest, metrics.WebhookErrReadBody, fmt.Errorf("reading body: %v", err)}
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, bad("body is not an AdmissionReview: %v", err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
		return nil, bad("apiVersion %q kind %q, want admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, bad("AdmissionReview has no request")
	}
	if review.Request.UID == "" {
		return nil, bad("AdmissionReview request has no uid")
	}
	return &review, nil
}

func deny(uid types.UID, code int32, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: msg}}
}
