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

// Serve serves h over TLS on l with the certificate of certs until ctx is
// done, then shuts down, letting requests in flight finish for up to 5 s.
func Serve(ctx context.Context, l net.Listener, h http.Handler, certs *CertFiles) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l, "", "") }()
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
