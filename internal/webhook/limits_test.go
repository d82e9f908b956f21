// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// bound is the most any test here waits for something to happen; the
// waits end as soon as it does. Nothing is timed: on a loaded machine
// things only come later.
const bound = 30 * time.Second

// limitServer starts h over TLS on 127.0.0.1:0 with lim and returns its
// address and a TLS configuration trusting its certificate.
func limitServer(t *testing.T, h http.Handler, lim Limits) (string, *tls.Config) {
	t.Helper()
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writeServing(t, dir, 1)
	url := serveTLSLimits(t, h, dir, lim)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}
}

// postGood sends testdata/pod-good.json to /validate on a new connection
// and fails unless it is allowed.
func postGood(t *testing.T, addr string, cfg *tls.Config) {
	t.Helper()
	body, err := os.ReadFile("testdata/pod-good.json")
	if err != nil {
		t.Error(err)
		return
	}
	c := &http.Client{Timeout: bound, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	resp, err := c.Post("https://"+addr+"/validate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Errorf("valid request: %v", err)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(out), `"allowed":true`) {
		t.Errorf("valid request: %d %s", resp.StatusCode, out)
	}
}

// waitFor polls cond every 10 ms until it holds, for up to bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bound); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, bound)
		}
	}
}

// TestSlowClients is the finding's attack, scaled down: clients that send
// their headers and then trickle the body one byte every 300 ms. Each is
// disconnected by the server (its read returns EOF or a reset, not the
// client's own deadline) once the 1 s read timeout passes, and a valid
// request made meanwhile is answered.
func TestSlowClients(t *testing.T) {
	const n = 20
	h := newHandler(t)
	lim := Limits{ReadHeaderTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, MaxConns: n + 4}
	addr, cfg := limitServer(t, h, lim)

	stop := make(chan struct{})
	defer close(stop)
	closed := make(chan error, n)
	for i := range n {
		conn, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		defer conn.Close()
		if _, err := fmt.Fprintf(conn, "POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", addr); err != nil {
			t.Fatalf("slow client %d: headers: %v", i, err)
		}
		// One byte every 300 ms, at most 100 (30 s), until a write fails.
		go func() {
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for range 100 {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
			}
		}()
		// Read whatever the server answers until the connection ends.
		go func() {
			conn.SetReadDeadline(time.Now().Add(bound))
			_, err := io.Copy(io.Discard, conn)
			closed <- err
		}()
	}
	postGood(t, addr, cfg)
	for i := range n {
		err := <-closed
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("slow client %d of %d still open after %v: %v", i+1, n, bound, err)
		}
	}
	// Each was counted as an unreadable body; none is open now.
	if got := metricValue(t, h, `gpuplane_webhook_errors_total{reason="read_body",webhook="validate"}`); got != n {
		t.Errorf("read_body errors %v, want %d", got, n)
	}
	waitFor(t, "open connections back to 0", func() bool { return metricValue(t, h, "gpuplane_webhook_open_connections") == 0 })
	postGood(t, addr, cfg)
}

// TestIdleTimeout: a kept-alive connection that sends no second request is
// closed once the idle timeout passes.
func TestIdleTimeout(t *testing.T) {
	lim := DefaultLimits()
	lim.IdleTimeout = time.Second
	addr, cfg := limitServer(t, newHandler(t), lim)
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	conn.SetReadDeadline(time.Now().Add(bound))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: read %v, want EOF", err)
	}
}

// TestBodyLimitOverTLS: a body over --max-request-bytes is answered 413,
// announced (Content-Length) or not (chunked).
func TestBodyLimitOverTLS(t *testing.T) {
	h := newHandler(t)
	h.MaxRequestBytes = 1 << 10
	addr, cfg := limitServer(t, h, DefaultLimits())
	c := &http.Client{Timeout: bound, Transport: &http.Transport{TLSClientConfig: cfg}}
	big := strings.Repeat(" ", 1<<10+1)
	for name, body := range map[string]io.Reader{
		"content-length": strings.NewReader(big),
		"chunked":        io.MultiReader(strings.NewReader(big)),
	} {
		resp, err := c.Post("https://"+addr+"/validate", "application/json", body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(out), "body over 1024 bytes") {
			t.Errorf("%s: %d %s, want 413", name, resp.StatusCode, out)
		}
	}
	if got := metricValue(t, h, `gpuplane_webhook_errors_total{reason="too_large",webhook="validate"}`); got != 2 {
		t.Errorf("too_large errors %v, want 2", got)
	}
}

// TestConnectionLimit: with --max-connections 2 held by clients that send
// nothing, a third connection waits (it is not accepted, so its request is
// not answered) until one of the two closes; then it is served.
func TestConnectionLimit(t *testing.T) {
	h := newHandler(t)
	lim := Limits{ReadHeaderTimeout: time.Minute, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: time.Minute, MaxConns: 2}
	addr, cfg := limitServer(t, h, lim)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	waitFor(t, "2 connections accepted", func() bool { return metricValue(t, h, "gpuplane_webhook_open_connections") == 2 })

	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		postGood(t, addr, cfg)
	}()
	// Not answered while both slots are held. (This cannot fail on a slow
	// machine; it can only miss a broken limit.)
	select {
	case <-done:
		t.Fatal("a third connection was served while 2 of 2 were held")
	case <-time.After(300 * time.Millisecond):
	}
	if got := metricValue(t, h, "gpuplane_webhook_open_connections"); got != 2 {
		t.Errorf("open connections %v while the third waits, want 2", got)
	}
	held[0].Close()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("the third connection was not served %v after a slot freed", bound)
	}
	wg.Wait()
}

// TestSlowClientsHTTP2: over HTTP/2, which the API server speaks to
// webhooks where it can, the timeouts are per stream: a request whose body
// trickles is ended by the server once the read timeout passes (answered
// 400 "reading body: i/o timeout", or reset), and a valid request on the
// same connection is answered.
func TestSlowClientsHTTP2(t *testing.T) {
	h := newHandler(t)
	lim := Limits{ReadHeaderTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, MaxConns: 8}
	addr, cfg := limitServer(t, h, lim)
	cfg.NextProtos = nil
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Timeout: bound, Transport: tr}
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for range 100 {
			select {
			case <-stop:
				pw.Close()
				return
			case <-tick.C:
			}
			if _, err := pw.Write([]byte{' '}); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", "https://"+addr+"/validate", pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	t.Logf("trickled request: %v", err)
	if err == nil {
		out, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("answered %s %d %q, reading: %v", resp.Proto, resp.StatusCode, out, rerr)
		if resp.ProtoMajor != 2 {
			t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
		}
		// Answered before the body ended: the server gave up on it.
		if rerr == nil && resp.StatusCode == 200 {
			t.Fatalf("a trickled body was answered 200: %s", out)
		}
	} else {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("trickled request still going after %v: %v", bound, err)
		}
	}
	waitFor(t, "the trickled body counted as unreadable", func() bool {
		return metricValue(t, h, `gpuplane_webhook_errors_total{reason="read_body",webhook="validate"}`) == 1
	})
	body, _ := os.ReadFile("testdata/pod-good.json")
	resp, err = c.Post("https://"+addr+"/validate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.Contains(string(out), `"allowed":true`) {
		t.Errorf("valid request over HTTP/2: %s %d %s", resp.Proto, resp.StatusCode, out)
	}
}
