// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControllerManager is kube-controller-manager's component name, for
// Kill, StopComponent, StartComponent and Restart (restart.go); started
// again, it is not waited for.
const ControllerManager = "kube-controller-manager"

// Controllers are the kube-controller-manager controllers the test
// control plane runs by default (Options.Controllers): the workload
// controllers (Jobs, CronJobs, Deployments, ReplicaSets, StatefulSets,
// DaemonSets: they make pods), ResourceClaims from templates, the garbage
// collector, namespaces and service accounts, and node lifecycle (taints
// on NotReady and unreachable nodes, and the evictions they cause).
//
// Left out: the pod garbage collector, which deletes pods bound to a node
// that has no Node object (tests bind pods to node names they never
// create), and the controllers that need what a test cluster lacks
// (certificate signing, volumes, node IPAM, cloud).
var Controllers = strings.Join([]string{
	"job-controller", "cronjob-controller", "deployment-controller", "replicaset-controller",
	"statefulset-controller", "daemonset-controller", "disruption-controller", "ttl-after-finished-controller",
	"resourceclaim-controller", "garbage-collector-controller", "namespace-controller",
	"serviceaccount-controller", "serviceaccount-token-controller", "root-ca-certificate-publisher-controller",
	"clusterrole-aggregation-controller", "node-lifecycle-controller", "taint-eviction-controller",
}, ",")

// startControllerManager starts kube-controller-manager with its own
// client certificate (user system:kube-controller-manager, which the
// bootstrap RBAC policy binds to its role), one service account per
// controller (--use-service-account-credentials, the tokens signed with
// the key the API server verifies), and waits until it serves /healthz.
func (c *Cluster) startControllerManager(ctx context.Context, o Options, pk *pki) error {
	cert, key, err := pk.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "system:kube-controller-manager"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.Dir, "kube-controller-manager.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gpuplane"] = &clientcmdapi.Cluster{Server: c.URL, CertificateAuthorityData: pk.caPEM}
	cfg.AuthInfos["kube-controller-manager"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["gpuplane"] = &clientcmdapi.Context{Cluster: "gpuplane", AuthInfo: "kube-controller-manager"}
	cfg.CurrentContext = "gpuplane"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	controllers := o.Controllers
	if controllers == "" {
		controllers = Controllers
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + filepath.Join(c.Dir, "kube-controller-manager-certs"),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + pk.saKeyFile,
		"--root-ca-file=" + pk.caFile,
		"--controllers=" + controllers,
		"--kube-api-qps=500", "--kube-api-burst=1000",
	}
	if o.FeatureGates != "" {
		args = append(args, "--feature-gates="+o.FeatureGates)
	}
	args = append(args, o.ControllerManagerArgs...)
	if err := c.start(ControllerManager, o.ControllerManager, nil, args...); err != nil {
		return err
	}
	// Its serving certificate is self-signed (in --cert-dir); /healthz
	// needs no authentication. It answers ok before the controllers are
	// built, and kube-controller-manager exits if the API server fails
	// it while it builds them (each gets a client with its own service
	// account token): a test that restarts etcd or the API server right
	// after Start would lose it. The controllers' checks are added to
	// /healthz all at once when every controller is built, so it is ready
	// once one of them is listed.
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/healthz?verbose"
	return c.waitUntil(ctx, "kube-controller-manager's controllers at "+url, func(ctx context.Context) error {
		return builtCheck(ctx, hc, url)
	})
}

// builtCheck fails unless the verbose /healthz at url answers 200 and
// lists a controller's check (every kube-controller-manager controller
// name ends in -controller: cmd/kube-controller-manager/names).
func builtCheck(ctx context.Context, hc *http.Client, url string) error {
	b, err := getBody(ctx, hc, url)
	if err == nil && !strings.Contains(string(b), "-controller ok") {
		err = fmt.Errorf("%s lists no controller yet", url)
	}
	return err
}
