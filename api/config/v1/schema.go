// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package v1

import "github.com/gpuplane/gpuplane/internal/yamlx"

// The configuration file's schema is a yamlx.Key tree: the keys of
// NVIDIA's device-plugin configuration (k8s-device-plugin api/config/v1:
// config.go, flags.go, sharing.go, replicas.go) and the gpuplane section;
// a key of NVIDIA's that gpuplane accepts and ignores is Ignored, with a
// warning saying why, and one it refuses is Refused, saying why.
type key = yamlx.Key

func fields(names ...string) map[string]*key {
	m := make(map[string]*key, len(names))
	for _, n := range names {
		m[n] = &key{}
	}
	return m
}

func ignoredFields(why string, names ...string) map[string]*key {
	m := make(map[string]*key, len(names))
	for _, n := range names {
		m[n] = &key{Ignored: why}
	}
	return m
}

func merge(ms ...map[string]*key) map[string]*key {
	out := map[string]*key{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const (
	noEffect   = "no effect in gpuplane"
	notApplied = "not implemented by gpuplane"
)

// replicated is the schema of a sharing strategy's section, NVIDIA's
// ReplicatedResources (replicas.go), the same for timeSlicing and mps.
func replicated() *key {
	return &key{Kids: map[string]*key{
		"renameByDefault":            {},
		"failRequestsGreaterThanOne": {},
		"resources":                  {Items: &key{Kids: fields("name", "rename", "devices", "replicas")}},
	}}
}

// schema is the whole file's schema.
var schema = &key{Kids: map[string]*key{
	"version": {},
	"flags": {Kids: merge(
		fields("migStrategy", "mpsRoot"),
		ignoredFields(noEffect, "failOnInitError", "nvidiaDriverRoot", "nvidiaDevRoot", "deviceDiscoveryStrategy"),
		ignoredFields(notApplied, "gdrcopyEnabled", "gdsEnabled", "mofedEnabled"),
		ignoredFields("gpuplane-node-agent's --node-feature-api flag does this", "useNodeFeatureAPI"),
		map[string]*key{
			"plugin": {Kids: merge(
				fields("passDeviceSpecs", "deviceListStrategy", "deviceIDStrategy"),
				ignoredFields(noEffect, "cdiAnnotationPrefix", "nvidiaCTKPath", "containerDriverRoot"),
				ignoredFields("gpuplane.replicaPolicy sets how replicas are chosen", "sharedDevicesAllocationPolicy"),
			)},
			"gfd": {Kids: ignoredFields("gpuplane-node-agent's flags set how labels are written", "oneshot", "noTimestamp", "sleepInterval", "outputFile", "machineTypeFile")},
		},
	)},
	"resources": {Ignored: "NVIDIA's plugin ignores it too (\"not yet supported\")"},
	"sharing": {Kids: map[string]*key{
		"timeSlicing": replicated(),
		"mps":         replicated(),
	}},
	"imex":     {Ignored: notApplied + ": no IMEX channels are passed to containers"},
	"gpuplane": {Kids: fields("replicaPolicy", "ignoredXIDs", "milliGPU")},
}}
