// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuplane/gpuplane/api/resource"
)

// TestApplyUnplaced: the annotation is the JSON of the pods' GPUs, "{}"
// when there is none, removed for nil; the Node's other annotations are
// kept.
func TestApplyUnplaced(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"keep": "me"}}})
	for _, tc := range []struct {
		v    resource.UnplacedPods
		want string
	}{
		{resource.UnplacedPods{"default/bypass": {"5": 1000, "6": 1000}, "ml/share": {"2": 250}}, `{"default/bypass":{"5":1000,"6":1000},"ml/share":{"2":250}}`},
		{resource.UnplacedPods{}, `{}`},
		{nil, ""},
	} {
		if err := ApplyUnplaced(ctx, c, "n", tc.v); err != nil {
			t.Fatal(err)
		}
		n, err := c.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := n.Annotations["gpuplane.io/unplaced-pods"]; got != tc.want || ok != (tc.want != "") || n.Annotations["keep"] != "me" {
			t.Errorf("ApplyUnplaced(%v): annotations %v; want gpuplane.io/unplaced-pods %s and keep=me", tc.v, n.Annotations, tc.want)
		}
	}
	if err := ApplyUnplaced(ctx, c, "missing", nil); err == nil {
		t.Error("ApplyUnplaced on a missing node: no error")
	}
}
