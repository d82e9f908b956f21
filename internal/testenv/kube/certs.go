// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the throw-away key material of one control plane: a CA, the
// apiserver's serving certificate, the admin's client certificate
// (group system:masters) and the service-account signing key pair, all
// ECDSA P-256, written as PEM files under dir.
type pki struct {
	caFile, certFile, keyFile, saPubFile, saKeyFile string
	// caPEM, adminCertPEM and adminKeyPEM go into the kubeconfig.
	caPEM, adminCertPEM, adminKeyPEM []byte
	// ca and caKey issue further certificates (issue): kubelets',
	// kube-controller-manager's.
	ca    *x509.Certificate
	caKey crypto.Signer
}

// issue signs a certificate of tmpl's subject, usages and names with a
// new ECDSA P-256 key, valid as long as the CA, with a random serial.
func (p *pki) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber == nil {
		if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)); err != nil {
			return nil, nil, err
		}
	}
	tmpl.NotBefore, tmpl.NotAfter = p.ca.NotBefore, p.ca.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = ecKeyPEM(key)
	return pemBlock("CERTIFICATE", der), keyPEM, err
}

// newPKI generates the key material into dir. The serving certificate is
// valid for 127.0.0.1, localhost and the in-cluster names of the
// kubernetes Service (whose ClusterIP, serviceIP, is the first address of
// the service range).
func newPKI(dir string, serviceIP net.IP) (*pki, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gpuplane-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p := &pki{ca: ca, caKey: caKey}
	issue := func(serial int64, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		tmpl.SerialNumber = big.NewInt(serial)
		return p.issue(tmpl)
	}
	servingCert, servingKey, err := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), serviceIP},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, err
	}
	adminCert, adminKey, err := issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "gpuplane-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := ecKeyPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPubPEM, err := publicKeyPEM(saKey.Public())
	if err != nil {
		return nil, err
	}
	p.caFile = filepath.Join(dir, "ca.crt")
	p.certFile = filepath.Join(dir, "apiserver.crt")
	p.keyFile = filepath.Join(dir, "apiserver.key")
	p.saPubFile = filepath.Join(dir, "sa.pub")
	p.saKeyFile = filepath.Join(dir, "sa.key")
	p.caPEM = pemBlock("CERTIFICATE", caDER)
	p.adminCertPEM, p.adminKeyPEM = adminCert, adminKey
	for file, data := range map[string][]byte{
		p.caFile: p.caPEM, p.certFile: servingCert, p.keyFile: servingKey,
		p.saPubFile: saPubPEM, p.saKeyFile: saKeyPEM,
	} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func ecKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	return pemBlock("EC PRIVATE KEY", der), err
}

func publicKeyPEM(k crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k)
	return pemBlock("PUBLIC KEY", der), err
}
