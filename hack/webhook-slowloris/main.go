// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command webhook-slowloris measures gpuplane-webhook under the finding of
// docs/webhook.md ("Timeouts and limits"): --slow clients that send a
// request's headers and then one byte of its body every --interval. It runs
// the real binary on 127.0.0.1 with a certificate it makes, sends valid
// AdmissionReviews at --rate for --duration without slow clients
// (baseline), then opens the slow clients and sends the same valid
// requests for --duration again, and prints how many slow connections are
// still open at the end (the server closes them; a client counts one as
// closed when its read returns EOF or a reset) and the p50 and p99
// latency of the valid requests in both phases, on a new connection each
// (TLS handshake included) and on one kept-alive connection, as the API
// server sends them. Arguments after -- go to gpuplane-webhook, e.g. the
// limits off: -- --read-timeout=0 --write-timeout=0 --idle-timeout=0
// --max-connections=0.
//
//	go build -o /tmp/gpuplane-webhook ./cmd/gpuplane-webhook
//	go run ./hack/webhook-slowloris --webhook /tmp/gpuplane-webhook
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const policy = `apiVersion: gpuplane.io/v1alpha1
kind: GPUPolicy
teams:
- name: research
  namespaces: [research]
  allowedResources: [nvidia.com/gpu, nvidia.com/mig-*, nvidia.com/gpu.shared]
  allowedModels: [NVIDIA-H100-80GB-HBM3]
  maxGPUsPerPod: 8
  schedulerName: gpuplane-scheduler
`

var (
	admissionRE = regexp.MustCompile(`"serving GPU admission policy" addr="([^"]+)"`)
	metricsRE   = regexp.MustCompile(`"serving metrics" addr="([^"]+)"`)
)

func main() {
	bin := flag.String("webhook", "", "gpuplane-webhook binary")
	review := flag.String("review", "internal/webhook/testdata/pod-good.json", "the valid AdmissionReview to send")
	slow := flag.Int("slow", 100, "slow clients")
	interval := flag.Duration("interval", 5*time.Second, "time between two bytes of a slow client's body")
	duration := flag.Duration("duration", 20*time.Second, "length of each phase; slow connections are counted at its end")
	rate := flag.Int("rate", 20, "valid requests a second in each phase, half on new connections, half on one kept-alive connection")
	flag.Parse()
	if err := run(*bin, *review, *slow, *interval, *duration, *rate, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-slowloris:", err)
		os.Exit(1)
	}
}

func run(bin, reviewFile string, slow int, interval, duration time.Duration, rate int, extra []string) error {
	if bin == "" {
		return errors.New("--webhook is required")
	}
	body, err := os.ReadFile(reviewFile)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "slowloris")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := startWebhook(bin, dir, extra)
	if err != nil {
		return err
	}
	defer w.stop()
	fmt.Printf("gpuplane-webhook %s\n", strings.Join(extra, " "))

	base := load(w.addr, w.tls, body, rate, duration)
	fmt.Printf("baseline, no slow clients: %s\n", base)

	// The slow clients: headers, then a byte every interval, for at most
	// twice the phase.
	ctx, cancel := context.WithTimeout(context.Background(), 2*duration+10*time.Second)
	defer cancel()
	sc := &slowClients{start: time.Now()}
	for range slow {
		sc.dial(ctx, w, interval)
	}
	headers := time.Since(sc.start)
	during := load(w.addr, w.tls, body, rate, duration-headers)
	stillOpen := sc.open.Load()
	server := serverConns(w.metrics)
	fmt.Printf("slow clients: %d of %d connected and sent headers in %.1fs; after %.0fs, %d of %d still open (server: %s connections open, the valid requests' kept-alive ones included)\n",
		sc.connected, slow, headers.Seconds(), time.Since(sc.start).Seconds(), stillOpen, sc.connected, server)
	sc.printClosed()
	fmt.Printf("with %d slow clients: %s\n", slow, during)
	return nil
}

// webhook is a running gpuplane-webhook: its admission and metrics
// addresses and the TLS configuration that trusts its certificate.
type webhook struct {
	cmd           *exec.Cmd
	addr, metrics string
	tls           *tls.Config
}

// startWebhook writes certificates and the policy into dir and runs bin on
// loopback ports it picks, with the extra flags.
func startWebhook(bin, dir string, extra []string) (*webhook, error) {
	pool, err := writeCerts(dir)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"--policy=" + filepath.Join(dir, "policy.yaml"),
		"--tls-cert-file=" + filepath.Join(dir, "tls.crt"), "--tls-key-file=" + filepath.Join(dir, "tls.key"),
		"--listen=127.0.0.1:0", "--metrics-addr=127.0.0.1:0"}, extra...)
	w := &webhook{cmd: exec.Command(bin, args...), tls: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	stderr, err := w.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	if w.addr, w.metrics, err = addrs(stderr); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *webhook) stop() {
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.cmd.Wait()
}

// slowClients counts the slow connections made, those still open, and
// when the server closed each of the others (since start).
type slowClients struct {
	start       time.Time
	connected   int
	open        atomic.Int64
	mu          sync.Mutex
	closedAfter []time.Duration
}

// dial opens one slow client: it sends a request's headers announcing a
// 100,000-byte body, then one byte every interval until ctx ends or the
// server closes the connection.
func (sc *slowClients) dial(ctx context.Context, w *webhook, interval time.Duration) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", w.addr, w.tls)
	if err != nil {
		return
	}
	if _, err := fmt.Fprintf(conn, "POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", w.addr); err != nil {
		conn.Close()
		return
	}
	sc.connected++
	sc.open.Add(1)
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	go trickle(ctx, conn, interval)
	go func() {
		io.Copy(io.Discard, conn) // until the server closes it
		if ctx.Err() == nil {
			sc.open.Add(-1)
			sc.mu.Lock()
			sc.closedAfter = append(sc.closedAfter, time.Since(sc.start))
			sc.mu.Unlock()
		}
	}()
}

// trickle writes one byte to conn every interval until ctx ends or a write
// fails.
func trickle(ctx context.Context, conn net.Conn, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{' '}); err != nil {
			return
		}
	}
}

func (sc *slowClients) printClosed() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.closedAfter) > 0 {
		slices.Sort(sc.closedAfter)
		fmt.Printf("  closed by the server %.1fs to %.1fs after the first connected\n", sc.closedAfter[0].Seconds(), sc.closedAfter[len(sc.closedAfter)-1].Seconds())
	}
}

// addrs reads the admission and metrics addresses from the webhook's log,
// then copies the rest of it to our standard error.
func addrs(stderr io.Reader) (admission, metrics string, err error) {
	sc := bufio.NewScanner(stderr)
	found := make(chan struct{})
	go func() {
		for sc.Scan() {
			line := sc.Text()
			if m := metricsRE.FindStringSubmatch(line); m != nil {
				metrics = m[1]
			}
			if m := admissionRE.FindStringSubmatch(line); m != nil {
				admission = m[1]
				close(found)
				break
			}
			fmt.Fprintln(os.Stderr, line)
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-found:
		return admission, metrics, nil
	case <-time.After(30 * time.Second):
		return "", "", errors.New("gpuplane-webhook did not say where it serves within 30 s")
	}
}

// result is the latency of one phase's valid requests.
type result struct {
	fresh, kept []time.Duration
	failed      int
}

func (r result) String() string {
	q := func(d []time.Duration, p float64) string {
		if len(d) == 0 {
			return "-"
		}
		slices.Sort(d)
		return fmt.Sprintf("%.2fms", float64(d[int(float64(len(d)-1)*p)].Microseconds())/1000)
	}
	return fmt.Sprintf("new connection: %d requests, p50 %s, p99 %s; kept-alive: %d requests, p50 %s, p99 %s; failed %d",
		len(r.fresh), q(r.fresh, 0.5), q(r.fresh, 0.99), len(r.kept), q(r.kept, 0.5), q(r.kept, 0.99), r.failed)
}

// load sends valid requests at rate for d, alternately on a new
// connection and on one kept-alive connection, each one at a time, and
// returns their latencies.
func load(addr string, cfg *tls.Config, body []byte, rate int, d time.Duration) result {
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	kept := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 1}}
	var r result
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		c, into := fresh, &r.fresh
		if i%2 == 1 {
			c, into = kept, &r.kept
		}
		start := time.Now()
		resp, err := c.Post("https://"+addr+"/validate", "application/json", bytes.NewReader(body))
		if err != nil {
			r.failed++
			continue
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"allowed":true`)) {
			r.failed++
			continue
		}
		*into = append(*into, time.Since(start))
	}
	return r
}

// serverConns reads gpuplane_webhook_open_connections from the metrics
// port.
func serverConns(metrics string) string {
	if metrics == "" {
		return "?"
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + metrics + "/metrics")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "gpuplane_webhook_open_connections "); ok {
			return v
		}
	}
	return "?"
}

// writeCerts writes a CA-signed serving certificate for 127.0.0.1 to
// dir/tls.crt and dir/tls.key and returns a pool trusting the CA.
func writeCerts(dir string) (*x509.CertPool, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-slowloris CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "gpuplane-webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, nil
}
