// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// NodeFeatureResource is node-feature-discovery's NodeFeature custom
// resource (nfd.k8s-sigs.io/v1alpha1): NFD's master puts the labels of
// each NodeFeature object on the node it names, so the agent needs no
// right to patch Nodes.
var NodeFeatureResource = schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeatures"}

// NodeFeatureNodeLabel is the label of a NodeFeature object naming its
// node (NFD's NodeFeatureObjNodeNameLabel).
const NodeFeatureNodeLabel = "nfd.node.kubernetes.io/node-name"

// NodeFeatureName returns the name of a node's NodeFeature object,
// "gpuplane-features-for-<node>", after gpu-feature-discovery's
// "nvidia-features-for-<node>" (k8s-device-plugin internal/lm/output.go).
func NodeFeatureName(node string) string { return "gpuplane-features-for-" + node }

// ApplyNodeFeature creates or updates the NodeFeature object of node in
// namespace, with spec.labels l, as gpu-feature-discovery does with
// useNodeFeatureAPI (internal/lm/output.go, nodeFeatureObject.Output); an
// object already holding exactly these labels is left as is.
func ApplyNodeFeature(ctx context.Context, c dynamic.Interface, namespace, node string, l map[string]string) error {
	name := NodeFeatureName(node)
	labels := map[string]any{}
	for k, v := range l {
		labels[k] = v
	}
	// features as NFD's NewFeatures() writes it: empty, but present.
	features := map[string]any{"flags": map[string]any{}, "attributes": map[string]any{}, "instances": map[string]any{}}
	spec := map[string]any{"labels": labels, "features": features}
	meta := map[string]any{NodeFeatureNodeLabel: node}
	r := c.Resource(NodeFeatureResource).Namespace(namespace)
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": NodeFeatureResource.GroupVersion().String(),
			"kind":       "NodeFeature",
			"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": meta},
			"spec":       spec,
		}}
		if _, err := r.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating NodeFeature %s/%s: %w", namespace, name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading NodeFeature %s/%s: %w", namespace, name, err)
	}
	oldSpec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	oldMeta, _, _ := unstructured.NestedMap(obj.Object, "metadata", "labels")
	if reflect.DeepEqual(oldSpec, spec) && oldMeta[NodeFeatureNodeLabel] == node {
		return nil
	}
	obj = obj.DeepCopy()
	obj.Object["spec"] = spec
	ml := obj.GetLabels()
	if ml == nil {
		ml = map[string]string{}
	}
	ml[NodeFeatureNodeLabel] = node
	obj.SetLabels(ml)
	if _, err := r.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating NodeFeature %s/%s: %w", namespace, name, err)
	}
	return nil
}

// ApplyNodeFeatureUntilDone calls ApplyNodeFeature, then again every retry
// after a failure (NFD not installed yet, say), until it succeeds or ctx is
// done; it returns nil or ctx's error.
func ApplyNodeFeatureUntilDone(ctx context.Context, c dynamic.Interface, namespace, node string, l map[string]string, retry time.Duration) error {
	for {
		err := ApplyNodeFeature(ctx, c, namespace, node, l)
		if err == nil {
			klog.InfoS("Wrote NodeFeature", "namespace", namespace, "name", NodeFeatureName(node), "labels", len(l))
			return nil
		}
		klog.ErrorS(err, "Writing NodeFeature failed; retrying", "in", retry)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
}
