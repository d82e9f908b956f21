// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/hint"
)

// Lookup returns the catalog model called name without regard to case
// ("a100-80gb" is A100-80GB), as the node and pod lists, the prices file
// and the cluster YAML compare model names. Every reader of a model name
// that must be a catalog model goes through it (or Canonical).
func Lookup(name string) (Model, bool) {
	if m, ok := builtin.Get(name); ok {
		return m, true
	}
	for _, n := range builtin.Names() {
		if strings.EqualFold(n, name) {
			m, _ := builtin.Get(n)
			return m, true
		}
	}
	return Model{}, false
}

// Canonical returns the catalog's spelling of name (Lookup), or name as it
// is when the catalog lacks it.
func Canonical(name string) string {
	if m, ok := Lookup(name); ok {
		return m.Name
	}
	return name
}

// Suggest returns the catalog names near name, for a "did you mean"
// after an unknown model: the names that name begins (case aside, "H100"
// is the start of H100-80GB, "A100" of A100-40GB and A100-80GB), else the
// nearest within 2 edits (1 for a name of up to 4 letters; "V100M61" →
// V100M16), sorted. None for a
// name the catalog has.
func Suggest(name string) []string {
	if _, ok := Lookup(name); ok || name == "" {
		return nil
	}
	low := strings.ToLower(name)
	limit := 2 // edits allowed: 1 for a name of up to 4 letters ("B200" is not "P100")
	if len(low) <= 4 {
		limit = 1
	}
	var pre, near []string
	best := limit + 1
	for _, n := range builtin.Names() {
		l := strings.ToLower(n)
		if strings.HasPrefix(l, low) {
			pre = append(pre, n)
			continue
		}
		switch d := hint.Distance(l, low); {
		case d > limit:
		case d < best:
			best, near = d, []string{n}
		case d == best:
			near = append(near, n)
		}
	}
	if len(pre) > 0 {
		sort.Strings(pre)
		return pre
	}
	sort.Strings(near)
	return near
}

// DidYouMean is Suggest as the end of an error message: `; did you mean
// "H100-80GB"?`, or "" when nothing is near.
func DidYouMean(name string) string {
	s := Suggest(name)
	if len(s) == 0 {
		return ""
	}
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = `"` + n + `"`
	}
	return "; did you mean " + strings.Join(q, " or ") + "?"
}
