// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a self-signed CA that signs serving certificates for
// 127.0.0.1.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gpuplane-webhook test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// writeServing writes a serving certificate for 127.0.0.1 with the given
// serial number to dir/tls.crt and dir/tls.key, cert-manager's layout.
func (ca *testCA) writeServing(t testing.TB, dir string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "gpuplane-webhook"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Written to temporary names and renamed, as the kubelet swaps a
	// Secret volume's files.
	for name, b := range map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".tmp"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, name+".tmp"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// serveTLS starts h on 127.0.0.1:0 with the certificate in dir and returns
// its https URL; the server stops when the test ends.
func serveTLS(t testing.TB, h http.Handler, dir string) string {
	t.Helper()
	return serveTLSLimits(t, h, dir, DefaultLimits())
}

// serveTLSLimits is serveTLS with the given limits.
func serveTLSLimits(t testing.TB, h http.Handler, dir string, lim Limits) string {
	t.Helper()
	certs, err := LoadCertFiles(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, h, certs, lim) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + l.Addr().String()
}

func TestCertReload(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writeServing(t, dir, 100)
	url := serveTLS(t, newHandler(t), dir)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	serial := func() int64 {
		t.Helper()
		// A new connection each time: a new handshake.
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
		resp, err := c.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 100 {
		t.Errorf("serial %d, want 100", got)
	}
	ca.writeServing(t, dir, 101)
	if got := serial(); got != 101 {
		t.Errorf("after renewal: serial %d, want 101", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := serial(); got != 101 {
		t.Errorf("after a bad write: serial %d, want the last good 101", got)
	}
	// Plain HTTP is not served.
	if resp, err := http.Get("http" + strings.TrimPrefix(url, "https") + "/healthz"); err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered 200")
		}
		resp.Body.Close()
	}
}

func TestLoadCertFilesErrors(t *testing.T) {
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := LoadCertFiles(crt, key); err == nil || !strings.Contains(err.Error(), "tls.crt: no such file") {
		t.Errorf("missing files: %v", err)
	}
	os.WriteFile(crt, []byte("x"), 0o600)
	os.WriteFile(key, []byte("y"), 0o600)
	if _, err := LoadCertFiles(crt, key); err == nil || !strings.Contains(err.Error(), crt+", "+key+": tls: failed to find any PEM data") {
		t.Errorf("garbage: %v", err)
	}
}
