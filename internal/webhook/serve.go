// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// CertFiles serves a TLS certificate from a certificate and a key file
// (PEM; a cert-manager Secret mounted as a volume has them as tls.crt and
// tls.key) and reads them again when either changes, so a renewed
// certificate is served without a restart. A change that cannot be loaded
// (a half-written pair) keeps the last good certificate.
type CertFiles struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	certPEM []byte
	keyPEM  []byte
}

// LoadCertFiles loads the pair once; a bad pair is an error naming the
// files.
func LoadCertFiles(certFile, keyFile string) (*CertFiles, error) {
	c := &CertFiles{certFile: certFile, keyFile: keyFile}
	if _, err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads both files and parses them when their bytes changed.
func (c *CertFiles) reload() (bool, error) {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return false, err
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("%s, %s: %v", c.certFile, c.keyFile, err)
	}
	c.cert, c.certPEM, c.keyPEM = &cert, certPEM, keyPEM
	return true, nil
}

// GetCertificate is tls.Config.GetCertificate: at each TLS handshake it
// reads the two files (a few KiB; the API server keeps its connections
// open, so handshakes are rare) and returns the newest good certificate.
func (c *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.reload() // on error the last good certificate stays
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, nil
}

// Limits bound what one client, or many, can hold of the server: a
// client that sends its request slowly, or not at all, is disconnected
// when its deadline passes, and no more than MaxConns connections are
// served at once. Zero turns a limit off.
type Limits struct {
	// ReadHeaderTimeout bounds the reading of a request's headers, and the
	// TLS handshake (--read-header-timeout).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, headers and body
	// (--read-timeout): a client that trickles its body is disconnected
	// when it passes.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its response (--write-timeout).
	WriteTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request (--idle-timeout).
	IdleTimeout time.Duration
	// MaxConns caps the connections served at once (--max-connections);
	// one more waits in the kernel's accept queue until one closes.
	MaxConns int
}

// DefaultLimits are the defaults of the command's flags. The API server
// sends a request of at most a few MiB over the cluster network and waits
// at most its webhook timeout (timeoutSeconds, 1 to 30 s): a client that
// has not sent its request in 10 s is not the API server, and an answer
// after 30 s is one no API server waits for.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxConns:          512,
	}
}

// server returns an http.Server for h with the limits' timeouts.
func (lim Limits) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
	}
}

// listener caps l at the limits' connections.
func (lim Limits) listener(l net.Listener) net.Listener {
	if lim.MaxConns > 0 {
		return netutil.LimitListener(l, lim.MaxConns)
	}
	return l
}

// Serve serves h over TLS on l with the certificate of certs and the
// limits of lim until ctx is done, then shuts down, letting requests in
// flight finish for up to 5 s. A handler with a ConnState method (Handler)
// is told of each connection's state.
func Serve(ctx context.Context, l net.Listener, h http.Handler, certs *CertFiles, lim Limits) error {
	srv := lim.server(h)
	srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
	if cs, ok := h.(interface {
		ConnState(net.Conn, http.ConnState)
	}); ok {
		srv.ConnState = cs.ConnState
	}
	return serve(ctx, srv, func() error { return srv.ServeTLS(lim.listener(l), "", "") })
}

// ServeMetrics serves h (Handler.Metrics) over plain HTTP on l, as
// Prometheus scrapes, until ctx is done.
func ServeMetrics(ctx context.Context, l net.Listener, h http.Handler, lim Limits) error {
	srv := lim.server(h)
	return serve(ctx, srv, func() error { return srv.Serve(lim.listener(l)) })
}

func serve(ctx context.Context, srv *http.Server, run func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- run() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			return serr
		}
		return err
	}
}
