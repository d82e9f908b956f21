// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The control-plane components by name, for Kill, StopComponent,
// StartComponent and Restart.
const (
	Etcd      = "etcd"
	APIServer = "kube-apiserver"
	Kwok      = "kwok"
)

// procExited runs once a process has exited: one that nobody asked to
// stop is a crash, which closes Exited (the first) and goes to OnExit.
func (c *Cluster) procExited(p *proc) {
	if p.asked.Load() {
		return
	}
	c.exitOnce.Do(func() {
		c.first = p
		close(c.exited)
	})
	if c.onExit != nil {
		c.onExit(p.name, p.exitError())
	}
}

// lookup returns the index in procs of the named component.
func (c *Cluster) lookup(name string) (int, error) {
	for i, p := range c.procs {
		if p.name == name {
			return i, nil
		}
	}
	names := make([]string, len(c.procs))
	for i, p := range c.procs {
		names[i] = p.name
	}
	return 0, fmt.Errorf("no component %q (have %v)", name, names)
}

// Components returns the components' names in start order.
func (c *Cluster) Components() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.procs))
	for i, p := range c.procs {
		out[i] = p.name
	}
	return out
}

// Pid returns the named component's process id and whether that process
// is still running.
func (c *Cluster) Pid(name string) (pid int, running bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, err := c.lookup(name)
	if err != nil {
		return 0, false, err
	}
	p := c.procs[i]
	select {
	case <-p.done:
	default:
		running = true
	}
	return p.cmd.Process.Pid, running, nil
}

// Kill sends the named component SIGKILL, a crash with no shutdown, and
// returns once it has exited. The others keep running; Exited is not
// closed. Killing a component that has exited does nothing.
func (c *Cluster) Kill(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, err := c.lookup(name)
	if err != nil {
		return err
	}
	c.procs[i].kill()
	return nil
}

// StopComponent stops the named component as Stop stops each one:
// SIGTERM, then SIGKILL after grace (Options.StopGrace where grace is 0).
// It returns once the process has exited, and whether it had to be
// killed. The others keep running.
func (c *Cluster) StopComponent(name string, grace time.Duration) (killed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, err := c.lookup(name)
	if err != nil {
		return false, err
	}
	if grace <= 0 {
		grace = c.grace
	}
	return c.procs[i].stop(grace) != nil, nil
}

// StartComponent starts a component that has exited again, with the
// arguments it first had: the same ports, data directory, certificates and
// log (appended to). It returns once the component is ready (etcd
// healthy; kube-apiserver ready; kwok started), or with the tail of its
// log if it exits first. It fails if the component is running or the
// cluster has been stopped.
func (c *Cluster) StartComponent(ctx context.Context, name string) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("start %s: the cluster has been stopped", name)
	}
	i, err := c.lookup(name)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	old := c.procs[i]
	select {
	case <-old.done:
	default:
		c.mu.Unlock()
		return fmt.Errorf("start %s: still running (pid %d)", name, old.cmd.Process.Pid)
	}
	if name == Kwok {
		c.releaseKwokLeases(ctx)
	}
	p, err := startProcAttr(old.name, old.bin, old.args, old.env, old.log, old.attr, c.procExited)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.procs[i] = p
	c.mu.Unlock()

	var ready func(context.Context) error
	switch name {
	case Etcd:
		plain := &http.Client{Timeout: 2 * time.Second}
		ready = func(ctx context.Context) error { return get(ctx, plain, c.etcdURL+"/health", `"health":"true"`) }
	case APIServer:
		ready = func(ctx context.Context) error {
			b, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Raw()
			if err != nil {
				return fmt.Errorf("%v %s", err, b)
			}
			_, err = c.Client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
			return err
		}
	default:
		return nil
	}
	return waitReady(ctx, p, 2*time.Minute, ready)
}

// releaseKwokLeases deletes the node leases an exited kwok held. Each kwok
// process holds them under its own identity (hostname_uuid), so a new one
// would wait for them to expire (--node-lease-duration-seconds, 40 s)
// before it runs the nodes' pods again; a restarted kubelet renews its
// lease at once, its identity being the node's name. Leases a kubelet
// holds (holder = lease name) are kept. Best effort: with the API server
// down the new kwok simply waits.
func (c *Cluster) releaseKwokLeases(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	leases, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, l := range leases.Items {
		if h := l.Spec.HolderIdentity; h != nil && *h != l.Name {
			_ = c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, l.Name, metav1.DeleteOptions{})
		}
	}
}

// Restart stops the named component (StopComponent with
// Options.StopGrace) and starts it again (StartComponent).
func (c *Cluster) Restart(ctx context.Context, name string) error {
	if _, err := c.StopComponent(name, 0); err != nil {
		return err
	}
	return c.StartComponent(ctx, name)
}

// waitReady polls ready every 100 ms until it returns nil, p exits, ctx
// ends or timeout passes.
func waitReady(ctx context.Context, p *proc, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		err := ready(cctx)
		ccancel()
		if err == nil {
			return nil
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-p.done:
			return fmt.Errorf("waiting for %s to be ready: %w", p.name, p.exitError())
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be ready: %w (last error: %v)", p.name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}
