// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// DeviceClassTemplate is the chart's template of the DRA DeviceClasses,
// relative to the repository root.
const DeviceClassTemplate = "deploy/helm/gpuplane/templates/deviceclass.yaml"

// DeviceClasses reads the DeviceClasses of the chart's template file
// (DeviceClassTemplate) as the chart renders them with
// nodeAgent.kubeletAPI=dra: the lines holding template actions (the
// kubeletAPI check, the labels) are left out, the rest is plain YAML.
// An error names the file and the document that does not decode.
func DeviceClasses(path string) ([]resourcev1.DeviceClass, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var plain []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "{{") {
			plain = append(plain, l)
		}
	}
	var out []resourcev1.DeviceClass
	for i, doc := range bytes.Split([]byte(strings.Join(plain, "\n")), []byte("\n---\n")) {
		var dc resourcev1.DeviceClass
		if err := yaml.UnmarshalStrict(doc, &dc); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if dc.Kind != "DeviceClass" || dc.Name == "" {
			return nil, fmt.Errorf("%s: document %d: kind %q, name %q: want a named DeviceClass", path, i+1, dc.Kind, dc.Name)
		}
		out = append(out, dc)
	}
	return out, nil
}

// InstallDeviceClasses creates the DeviceClasses of the chart's template
// (DeviceClasses); ones that exist already are left as they are.
func InstallDeviceClasses(ctx context.Context, client kubernetes.Interface, path string) error {
	dcs, err := DeviceClasses(path)
	if err != nil {
		return err
	}
	for i := range dcs {
		dcs[i].Labels = nil
		if _, err := client.ResourceV1().DeviceClasses().Create(ctx, &dcs[i], metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("DeviceClass %s: %w", dcs[i].Name, err)
		}
	}
	return nil
}

// ClassLister serves DeviceClasses by name as the scheduler's allocator
// reads them (k8s.io/dynamic-resource-allocation/structured
// DeviceClassLister).
type ClassLister map[string]*resourcev1.DeviceClass

// List returns every class.
func (c ClassLister) List() ([]*resourcev1.DeviceClass, error) {
	out := make([]*resourcev1.DeviceClass, 0, len(c))
	for _, dc := range c {
		out = append(out, dc)
	}
	return out, nil
}

// Get returns the class of that name, or a NotFound error.
func (c ClassLister) Get(name string) (*resourcev1.DeviceClass, error) {
	if dc, ok := c[name]; ok {
		return dc, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclasses"), name)
}

// ChartClasses returns the chart's DeviceClasses (DeviceClasses of
// DeviceClassTemplate in this repository) as a ClassLister.
func ChartClasses() (ClassLister, error) {
	dcs, err := DeviceClasses(filepath.Join(repoRoot(), DeviceClassTemplate))
	if err != nil {
		return nil, err
	}
	c := ClassLister{}
	for i := range dcs {
		c[dcs[i].Name] = &dcs[i]
	}
	return c, nil
}
