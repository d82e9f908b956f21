// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// chartDir is the Helm chart, relative to the module's root. Its
// Chart.yaml appVersion is the one home of gpuplane's version: the image's
// tag (the chart's image.tag defaults to it) and every binary's --version.
const chartDir = "deploy/helm/gpuplane"

// chartImage returns the chart's image.repository (values.yaml) and
// appVersion (Chart.yaml): the name and tag the chart pulls by default.
func chartImage(root string) (repository, appVersion string, err error) {
	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	var values struct {
		Image struct {
			Repository string `yaml:"repository"`
		} `yaml:"image"`
	}
	for _, f := range []struct {
		name string
		into any
	}{{"Chart.yaml", &chart}, {"values.yaml", &values}} {
		p := filepath.Join(root, chartDir, f.name)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", "", err
		}
		if err := yaml.Unmarshal(b, f.into); err != nil {
			return "", "", fmt.Errorf("%s: %w", p, err)
		}
	}
	if chart.AppVersion == "" {
		return "", "", fmt.Errorf("%s: no appVersion", filepath.Join(root, chartDir, "Chart.yaml"))
	}
	if values.Image.Repository == "" {
		return "", "", fmt.Errorf("%s: no image.repository", filepath.Join(root, chartDir, "values.yaml"))
	}
	return values.Image.Repository, chart.AppVersion, nil
}
