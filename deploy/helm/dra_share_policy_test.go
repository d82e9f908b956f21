// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	resourceapi "k8s.io/api/resource/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// capacities is a request's capacity requests as "name=value" pairs,
// sorted, "" for none.
func capacities(r resourceapi.DeviceRequest) string {
	if r.Exactly == nil || r.Exactly.Capacity == nil {
		return ""
	}
	var out []string
	for _, k := range []resourceapi.QualifiedName{"memory", "milliGPU"} {
		if q, ok := r.Exactly.Capacity.Requests[k]; ok {
			out = append(out, fmt.Sprintf("%s=%s", k, q.String()))
		}
	}
	return strings.Join(out, ",")
}

// request is a request of class with the capacity requests kv ("name",
// "value", ...).
func request(name, class string, kv ...string) resourceapi.DeviceRequest {
	r := resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class}}
	if len(kv) > 0 {
		r.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]k8sresource.Quantity{}}
		for i := 0; i+1 < len(kv); i += 2 {
			r.Exactly.Capacity.Requests[resourceapi.QualifiedName(kv[i])] = k8sresource.MustParse(kv[i+1])
		}
	}
	return r
}

// createClaim creates (as a dry run) a claim of requests in default and
// returns its requests as the API server stored them.
func createClaim(t *testing.T, ctx context.Context, c kubernetes.Interface, name string, reqs ...resourceapi.DeviceRequest) []resourceapi.DeviceRequest {
	t.Helper()
	cl := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: reqs}}}
	got, err := c.ResourceV1().ResourceClaims("default").Create(ctx, cl, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("claim %s: %v", name, err)
	}
	return got.Spec.Devices.Requests
}

// TestDRAComputeSharePolicyOnCluster applies the chart's
// MutatingAdmissionPolicy of nodeAgent.dra.shares to a real
// kube-apiserver: a request of class gpu.nvidia.com asking milliGPU and
// no memory gets memory 1Mi, in a claim and in a template, at its own
// index; a request asking memory, or neither, or of another class is left
// as it is.
func TestDRAComputeSharePolicyOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	r := render(t, append([]string{"--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.shares=true"}, mapAPI...)...)
	name := fullname + "-dra-compute-share"
	var mp admissionregistrationv1.MutatingAdmissionPolicy
	var mpb admissionregistrationv1.MutatingAdmissionPolicyBinding
	r.get(t, "MutatingAdmissionPolicy", name, &mp)
	r.get(t, "MutatingAdmissionPolicyBinding", name, &mpb)
	if keys := strings.Join(render(t, "--set", "nodeAgent.kubeletAPI=dra").keys(), " "); strings.Contains(keys, name) {
		t.Errorf("the policy without nodeAgent.dra.shares: %s", keys)
	}

	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	_, err := admin.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, &mp, metav1.CreateOptions{})
	must(t, err)
	_, err = admin.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, &mpb, metav1.CreateOptions{})
	must(t, err)
	compute := request("gpu", "gpu.nvidia.com", "milliGPU", "500")
	deadline := time.Now().Add(time.Minute)
	for capacities(createClaim(t, ctx, admin, "probe", compute)[0]) != "memory=1Mi,milliGPU=500" {
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	for _, tc := range []struct {
		name string
		reqs []resourceapi.DeviceRequest
		want []string
	}{
		{"both", []resourceapi.DeviceRequest{request("gpu", "gpu.nvidia.com", "milliGPU", "500", "memory", "10Gi")}, []string{"memory=10Gi,milliGPU=500"}},
		{"memory", []resourceapi.DeviceRequest{request("gpu", "gpu.nvidia.com", "memory", "40Gi")}, []string{"memory=40Gi"}},
		{"neither", []resourceapi.DeviceRequest{request("gpu", "gpu.nvidia.com")}, []string{""}},
		{"other-class", []resourceapi.DeviceRequest{request("f", "fpga.example.com", "milliGPU", "500")}, []string{"milliGPU=500"}},
		{"second", []resourceapi.DeviceRequest{request("whole", "gpu.nvidia.com"), request("share", "gpu.nvidia.com", "milliGPU", "300")}, []string{"", "memory=1Mi,milliGPU=300"}},
	} {
		got := createClaim(t, ctx, admin, tc.name, tc.reqs...)
		for i, w := range tc.want {
			if capacities(got[i]) != w {
				t.Errorf("%s: request %d: %q, want %q", tc.name, i, capacities(got[i]), w)
			}
		}
	}

	// firstAvailable: the subrequests asking milliGPU alone of
	// gpu.nvidia.com get the memory, at their own index, in the second
	// request too; the others are left as they are.
	sub := func(name, class string, kv ...string) resourceapi.DeviceSubRequest {
		r := request(name, class, kv...).Exactly
		return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: r.DeviceClassName, Capacity: r.Capacity}
	}
	fa := []resourceapi.DeviceRequest{
		request("whole", "gpu.nvidia.com"),
		{Name: "either", FirstAvailable: []resourceapi.DeviceSubRequest{
			sub("mig", "mig.nvidia.com"), sub("mem", "gpu.nvidia.com", "memory", "20Gi"), sub("share", "gpu.nvidia.com", "milliGPU", "250"),
			sub("both", "gpu.nvidia.com", "milliGPU", "100", "memory", "1Gi"), sub("small", "gpu.nvidia.com", "milliGPU", "50"),
		}},
	}
	got := createClaim(t, ctx, admin, "first-available", fa...)
	var subs []string
	for _, s := range got[1].FirstAvailable {
		subs = append(subs, capacities(resourceapi.DeviceRequest{Exactly: &resourceapi.ExactDeviceRequest{Capacity: s.Capacity}}))
	}
	if want := []string{"", "memory=20Gi", "memory=1Mi,milliGPU=250", "memory=1Gi,milliGPU=100", "memory=1Mi,milliGPU=50"}; capacities(got[0]) != "" || !slices.Equal(subs, want) {
		t.Errorf("firstAvailable: request 0 %q, subrequests %q, want %q", capacities(got[0]), subs, want)
	}

	tpl := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{request("gpu", "gpu.nvidia.com", "milliGPU", "250")}}}}}
	gt, err := admin.ResourceV1().ResourceClaimTemplates("default").Create(ctx, tpl, metav1.CreateOptions{})
	must(t, err)
	if got := capacities(gt.Spec.Spec.Devices.Requests[0]); got != "memory=1Mi,milliGPU=250" {
		t.Errorf("template: %q, want memory=1Mi,milliGPU=250", got)
	}
}
