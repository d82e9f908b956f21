// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

// NodeConfigOptions select the node's configuration among several, as
// NVIDIA's device plugin does with its config-manager: Dir holds one
// configuration file per name (a ConfigMap mounted as a volume, one key per
// configuration) and the node label nvidia.com/device-plugin.config names
// the node's (configv1.SelectConfig). The agent reads the label at start
// and exits when it comes to select another configuration, to be started
// again with it by its DaemonSet; NVIDIA's config-manager instead swaps a
// symbolic link and signals the plugin, which restarts in its container.
type NodeConfigOptions struct {
	// Dir is the directory of configurations (--config-dir); empty: one
	// configuration for every node (--config).
	Dir string
	// Default is the configuration of a node without the label
	// (--default-config); empty: FallbackStrategies decide.
	Default string
	// FallbackStrategies are tried in order on a node without the label
	// and without Default (--fallback-strategies): named, single, empty.
	FallbackStrategies []string
}

// check checks the options with the agent's: Dir excludes --config and
// needs the node's name; a default or an unknown strategy needs Dir.
func (o NodeConfigOptions) check(configFile, nodeName string) error {
	switch {
	case o.Dir == "" && o.Default != "":
		return fmt.Errorf("--default-config needs --config-dir")
	case o.Dir == "":
		return nil
	case configFile != "":
		return fmt.Errorf("--config and --config-dir exclude each other: one configuration for every node, or one per node")
	case nodeName == "":
		return fmt.Errorf("--config-dir needs --node-name (or $NODE_NAME): the node's label selects its configuration")
	}
	if err := configv1.CheckFallbackStrategies(o.FallbackStrategies); err != nil {
		return fmt.Errorf("--fallback-strategies: %w", err)
	}
	return nil
}

// selectFor returns the configuration Dir holds for a node labelled label
// ("" for none): its name ("" for the empty configuration) and file path
// ("" for the empty configuration, the defaults).
func (o NodeConfigOptions) selectFor(label string) (name, file string, err error) {
	names, err := configv1.ConfigNames(o.Dir)
	if err != nil {
		return "", "", fmt.Errorf("--config-dir: %w", err)
	}
	if name, err = configv1.SelectConfig(names, label, o.Default, o.FallbackStrategies); err != nil {
		return "", "", fmt.Errorf("--config-dir %s: %w", o.Dir, err)
	}
	if name != "" {
		file = filepath.Join(o.Dir, name)
	}
	return name, file, nil
}

// ErrNodeConfigChanged is the cause with which the agent stops when its
// node's label comes to select another configuration.
var ErrNodeConfigChanged = errors.New("the node's configuration changed")

// useNodeConfig selects node's configuration among o.Dir's by its label
// and follows the label: it returns the configuration's file ("": the
// defaults), ctx cancelled when the label comes to select another
// configuration, or none it can, and the function that stops following
// and returns, in place of the error it is given, the one saying why
// (wrapping ErrNodeConfigChanged) when that happened.
func useNodeConfig(ctx context.Context, o NodeConfigOptions, client kubernetes.Interface, node string) (context.Context, string, func(error) error, error) {
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, "", nil, fmt.Errorf("--config-dir: the node's label: %w", err)
	}
	label := n.Labels[configv1.NodeConfigLabel]
	name, file, err := o.selectFor(label)
	if err != nil {
		return nil, "", nil, err
	}
	klog.InfoS("Selected the node's configuration", "label", configv1.NodeConfigLabel, "value", label, "config", name, "file", file)
	ctx, cancel := context.WithCancelCause(ctx)
	go followNodeConfig(ctx, cancel, o, client, node, name)
	stop := func(err error) error {
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, ErrNodeConfigChanged) {
			return cause
		}
		return err
	}
	return ctx, file, stop, nil
}

// watchRetry is how long followNodeConfig waits after a failed watch.
const watchRetry = 5 * time.Second

// followNodeConfig watches the Node node until ctx is done, and cancels
// ctx with an error wrapping ErrNodeConfigChanged when its label selects
// a configuration other than current, or none. Each watch starts without
// a resourceVersion, so the API server first sends the Node as it is:
// a change made while no watch was open is seen when the next one opens.
func followNodeConfig(ctx context.Context, cancel context.CancelCauseFunc, o NodeConfigOptions, client kubernetes.Interface, node, current string) {
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()}
	for ctx.Err() == nil {
		w, err := client.CoreV1().Nodes().Watch(ctx, opts)
		if err != nil {
			klog.ErrorS(err, "Watching the node's configuration label failed; retrying", "node", node, "in", watchRetry)
			select {
			case <-ctx.Done():
			case <-time.After(watchRetry):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && n.Name == node && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				if cause := changedConfig(o, n.Labels[configv1.NodeConfigLabel], current); cause != nil {
					cancel(cause)
				}
			}
		}
		w.Stop()
	}
}

// changedConfig returns the error, wrapping ErrNodeConfigChanged, saying
// that label selects a configuration other than current, or none; nil
// when it selects current.
func changedConfig(o NodeConfigOptions, label, current string) error {
	name, _, err := o.selectFor(label)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w; exiting", ErrNodeConfigChanged, err)
	case name != current:
		return fmt.Errorf("%w: node label %s=%q selects configuration %q, not %q; exiting to start again with it", ErrNodeConfigChanged, configv1.NodeConfigLabel, label, name, current)
	}
	return nil
}
