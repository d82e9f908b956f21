// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// The NodeFeature object gpu-feature-discovery writes
// (k8s-device-plugin internal/lm/output.go, nodeFeatureObject.Output): in
// the agent's namespace, labelled nfd.node.kubernetes.io/node-name=<node>,
// spec.labels the labels; updated in place when they change.
func TestApplyNodeFeature(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Kind: "NodeFeature"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind("NodeFeatureList"), &unstructured.UnstructuredList{})
	c := dynamicfake.NewSimpleDynamicClient(s)
	ctx := context.Background()
	get := func() *unstructured.Unstructured {
		t.Helper()
		o, err := c.Resource(NodeFeatureResource).Namespace("gpu-system").Get(ctx, "gpuplane-features-for-node-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, l := range []map[string]string{
		{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8"},
		{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "7"},
	} {
		if err := ApplyNodeFeature(ctx, c, "gpu-system", "node-1", l); err != nil {
			t.Fatal(err)
		}
		o := get()
		got, _, _ := unstructured.NestedStringMap(o.Object, "spec", "labels")
		if !reflect.DeepEqual(got, l) {
			t.Errorf("spec.labels %v, want %v", got, l)
		}
		if o.GetLabels()["nfd.node.kubernetes.io/node-name"] != "node-1" || o.GetKind() != "NodeFeature" || o.GetAPIVersion() != "nfd.k8s-sigs.io/v1alpha1" {
			t.Errorf("object %v", o.Object)
		}
	}
	// The same labels again: no write.
	before := len(c.Actions())
	if err := ApplyNodeFeature(ctx, c, "gpu-system", "node-1", map[string]string{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "7"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Actions()[before:] {
		if a.GetVerb() != "get" {
			t.Errorf("unchanged labels: %s", a.GetVerb())
		}
	}
}
