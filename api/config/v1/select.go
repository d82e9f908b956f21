// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Per-node configurations, selected as NVIDIA's config-manager selects them
// for its device plugin (k8s-device-plugin cmd/config-manager/main.go): a
// directory holds one configuration file per name (a mounted ConfigMap,
// one key per configuration), and the node label NodeConfigLabel names the
// node's.
const (
	// NodeConfigLabel is the node label naming the node's configuration,
	// NVIDIA's (config-manager's DefaultConfigLabel).
	NodeConfigLabel = "nvidia.com/device-plugin.config"
	// NamedFallback is the configuration FallbackNamed selects, NVIDIA's
	// NamedConfigFallback.
	NamedFallback = "default"
)

// The fallback strategies, tried in order when the node has no label and
// no default configuration is given: NVIDIA's config-manager's.
const (
	// FallbackNamed selects the configuration named NamedFallback, if any.
	FallbackNamed = "named"
	// FallbackSingle selects the one configuration, if there is one only.
	FallbackSingle = "single"
	// FallbackEmpty selects no configuration: the defaults
	// (DefaultConfig), as NVIDIA's empty configuration (/dev/null).
	FallbackEmpty = "empty"
)

// DefaultFallbackStrategies are NVIDIA's device-plugin chart's
// (FALLBACK_STRATEGIES: named,single).
var DefaultFallbackStrategies = []string{FallbackNamed, FallbackSingle}

// CheckFallbackStrategies refuses a strategy other than FallbackNamed,
// FallbackSingle and FallbackEmpty. NVIDIA's config-manager finds an
// unknown one only when it is reached; gpuplane refuses it at start.
func CheckFallbackStrategies(strategies []string) error {
	for _, s := range strategies {
		if s != FallbackNamed && s != FallbackSingle && s != FallbackEmpty {
			return fmt.Errorf("unknown fallback strategy %q: want %s, %s or %s", s, FallbackNamed, FallbackSingle, FallbackEmpty)
		}
	}
	return nil
}

// ConfigNames returns the names of the configurations in dir, sorted: its
// entries but directories and the entries a mounted ConfigMap adds, whose
// names begin with ".." (..data, ..2026_01_02...), as NVIDIA's
// config-manager lists them (getConfigFileNameMap). A ConfigMap's keys
// are symbolic links to ..data/<key>, listed as files.
func ConfigNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("configurations: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), "..") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// SelectConfig returns the configuration, among names, of a node whose
// NodeConfigLabel is label (empty: unlabelled), by NVIDIA's config-manager's
// rule (updateConfigName): the label's, which must exist; else def
// (--default-config), which must exist; else the first of fallbacks that
// selects one. "" is the empty configuration (FallbackEmpty). There must be
// at least one name, even for FallbackEmpty, as in NVIDIA's. Errors say
// which names there are.
func SelectConfig(names []string, label, def string, fallbacks []string) (string, error) {
	if len(names) == 0 {
		return "", fmt.Errorf("no configuration files")
	}
	have := strings.Join(names, ", ")
	switch {
	case label != "":
		if !slices.Contains(names, label) {
			return "", fmt.Errorf("node label %s=%s: no such configuration (have %s)", NodeConfigLabel, label, have)
		}
		return label, nil
	case def != "":
		if !slices.Contains(names, def) {
			return "", fmt.Errorf("default configuration %q: no such configuration (have %s)", def, have)
		}
		return def, nil
	}
	for _, f := range fallbacks {
		switch f {
		case FallbackNamed:
			if slices.Contains(names, NamedFallback) {
				return NamedFallback, nil
			}
		case FallbackSingle:
			if len(names) == 1 {
				return names[0], nil
			}
		case FallbackEmpty:
			return "", nil
		default:
			return "", CheckFallbackStrategies([]string{f})
		}
	}
	return "", fmt.Errorf("node label %s not set, no default configuration, and the fallback strategies [%s] select none of %s", NodeConfigLabel, strings.Join(fallbacks, ","), have)
}
