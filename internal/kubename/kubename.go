// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package kubename is gpuplane's one check of Kubernetes names: DNS-1123
// labels (namespaces, most object names gpuplane makes: teams, cohorts),
// DNS-1123 subdomains (object names, label key prefixes), label keys
// (qualified names) and label values. Each is exactly as
// k8s.io/apimachinery defines it (pkg/util/validation IsDNS1123Label and
// IsDNS1123Subdomain, pkg/api/validate/content IsLabelKey and
// IsLabelValue, v0.37.2), written again on the standard library so that
// the offline tool links no Kubernetes library; the tests are
// apimachinery's own cases.
package kubename

import (
	"regexp"
	"strings"
)

// The longest of each, in bytes (apimachinery's DNS1123LabelMaxLength,
// DNS1123SubdomainMaxLength and LabelValueMaxLength; a label key's name
// part is at most MaxLabelValue too).
const (
	MaxLabel      = 63
	MaxSubdomain  = 253
	MaxLabelValue = 63
)

const (
	labelFmt     = `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
	subdomainFmt = labelFmt + `(\.` + labelFmt + `)*`
	keyNameFmt   = `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
)

var (
	labelRE     = regexp.MustCompile(`^` + labelFmt + `$`)
	subdomainRE = regexp.MustCompile(`^` + subdomainFmt + `$`)
	valueRE     = regexp.MustCompile(`^(` + keyNameFmt + `)?$`)
)

// IsDNS1123Label reports whether s is a DNS-1123 label: 1 to 63 of a-z,
// 0-9 and '-', alphanumeric at both ends (a namespace's name, for one).
func IsDNS1123Label(s string) bool {
	return len(s) <= MaxLabel && labelRE.MatchString(s)
}

// IsDNS1123Subdomain reports whether s is a DNS-1123 subdomain: at most
// 253 bytes of DNS-1123 labels joined by '.' (most objects' names).
func IsDNS1123Subdomain(s string) bool {
	return len(s) <= MaxSubdomain && subdomainRE.MatchString(s)
}

// IsLabelValue reports whether s is a label value: empty, or at most 63
// of A-Z, a-z, 0-9, '-', '_' and '.', alphanumeric at both ends.
func IsLabelValue(s string) bool {
	return len(s) <= MaxLabelValue && valueRE.MatchString(s)
}

// IsLabelKey reports whether s is a label key (what Kubernetes calls a
// qualified name): an optional DNS-1123 subdomain prefix and '/', then a
// name that is a non-empty label value.
func IsLabelKey(s string) bool {
	prefix, name, slash := strings.Cut(s, "/")
	if !slash {
		name = s
	} else if !IsDNS1123Subdomain(prefix) {
		return false
	}
	return name != "" && IsLabelValue(name)
}
