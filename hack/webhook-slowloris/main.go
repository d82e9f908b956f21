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
	pool, err := writeCerts(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
		return err
	}
	args := append([]string{"--policy=" + filepath.Join(dir, "policy.yaml"),
		"--tls-cert-file=" + filepath.Join(dir, "tls.crt"), "--tls-key-file=" + filepath.Join(dir, "tls.key"),
		"--listen=127.0.0.1:0", "--metrics-addr=127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	addr, metrics, err := addrs(stderr)
	if err != nil {
		return err
	}
	fmt.Printf("gpuplane-webhook %s\n", strings.Join(extra, " "))
	cfg := &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}

	base := load(addr, cfg, body, rate, duration)
	fmt.Printf("baseline, no slow clients: %s\n", base)

	// The slow clients: headers, then a byte every interval, for at most
	// twice the phase.
	var open atomic.Int64
	var mu sync.Mutex
	var closedAfter []time.Duration
	connected := 0
	ctx, cancel := context.WithTimeout(context.Background(), 2*duration+10*time.Second)
	defer cancel()
	start := time.Now()
	for range slow {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			continue
		}
		if _, err := fmt.Fprintf(conn, "POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", addr); err != nil {
			conn.Close()
			continue
		}
		connected++
		open.Add(1)
		go func() {
			<-ctx.Done()
			conn.Close()
		}()
		go func() {
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
		}()
		go func() {
			io.Copy(io.Discard, conn) // until the server closes it
			if ctx.Err() == nil {
				open.Add(-1)
				mu.Lock()
				closedAfter = append(closedAfter, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	headers := time.Since(start)
	during := load(addr, cfg, body, rate, duration-headers)
	stillOpen := open.Load()
	server := serverConns(metrics)
	fmt.Printf("slow clients: %d of %d connected and sent headers in %.1fs; after %.0fs, %d of %d still open (server: %s connections open, the valid requests' kept-alive ones included)\n",
		connected, slow, headers.Seconds(), time.Since(start).Seconds(), stillOpen, connected, server)
	mu.Lock()
	if len(closedAfter) > 0 {
		slices.Sort(closedAfter)
		fmt.Printf("  closed by the server %.1fs to %.1fs after the first connected\n", closedAfter[0].Seconds(), closedAfter[len(closedAfter)-1].Seconds())
	}
	mu.Unlock()
	fmt.Printf("with %d slow clients: %s\n", slow, during)
	return nil
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
