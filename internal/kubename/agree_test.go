// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kubename

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestAgreesWithApimachinery checks each function against apimachinery's
// on strings made of the characters that matter, lengths around the
// limits included.
func TestAgreesWithApimachinery(t *testing.T) {
	const chars = "aZ0-._/ "
	r := rand.New(rand.NewPCG(1, 2))
	var cases []string
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteByte(chars[r.IntN(len(chars))])
		}
		cases = append(cases, b.String())
	}
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		cases = append(cases, strings.Repeat("a", n), strings.Repeat("a", n)+"/b", "a/"+strings.Repeat("b", n))
	}
	for _, s := range cases {
		if got, want := IsDNS1123Label(s), len(validation.IsDNS1123Label(s)) == 0; got != want {
			t.Errorf("IsDNS1123Label(%q) = %v, apimachinery %v", s, got, want)
		}
		if got, want := IsDNS1123Subdomain(s), len(validation.IsDNS1123Subdomain(s)) == 0; got != want {
			t.Errorf("IsDNS1123Subdomain(%q) = %v, apimachinery %v", s, got, want)
		}
		if got, want := IsLabelKey(s), len(content.IsLabelKey(s)) == 0; got != want {
			t.Errorf("IsLabelKey(%q) = %v, apimachinery %v", s, got, want)
		}
		if got, want := IsLabelValue(s), len(content.IsLabelValue(s)) == 0; got != want {
			t.Errorf("IsLabelValue(%q) = %v, apimachinery %v", s, got, want)
		}
	}
}
