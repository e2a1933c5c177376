package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files under Dir/pki written by ensurePKI.
const (
	caCertFile      = "ca.crt"
	servingCertFile = "serving.crt"
	servingKeyFile  = "serving.key"
	saKeyFile       = "service-account.key"
	saPubFile       = "service-account.pub"
	tokenFile       = "tokens.csv"
	adminTokenFile  = "admin.token"
	kcmTokenFile    = "controller-manager.token"
)

// pki is what the components and clients need from Dir/pki.
type pki struct {
	dir        string
	caPEM      []byte
	adminToken string
	kcmToken   string
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// ensurePKI returns the certificates, keys and tokens in dir, generating them
// when dir has none yet. A restart of a component reuses them.
func ensurePKI(dir string) (*pki, error) {
	p := &pki{dir: dir}
	caPEM, err := os.ReadFile(p.path(caCertFile))
	switch {
	case err == nil:
		p.caPEM = caPEM
		admin, err := os.ReadFile(p.path(adminTokenFile))
		if err != nil {
			return nil, fmt.Errorf("pki: %w", err)
		}
		kcm, err := os.ReadFile(p.path(kcmTokenFile))
		if err != nil {
			return nil, fmt.Errorf("pki: %w", err)
		}
		p.adminToken, p.kcmToken = string(admin), string(kcm)
		return p, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("pki: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	if err := p.generate(); err != nil {
		return nil, fmt.Errorf("pki: generate in %s: %w", dir, err)
	}
	return p, nil
}

func (p *pki) generate() error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "payload-apply-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	servingTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTmpl, ca, servingKey.Public(), caKey)
	if err != nil {
		return err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}

	servingKeyPEM, err := privatePEM(servingKey)
	if err != nil {
		return err
	}
	saKeyPEM, err := privatePEM(saKey)
	if err != nil {
		return err
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	p.adminToken, p.kcmToken = token(), token()
	// Token file lines: token,user,uid,"group1,group2".
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,system:kube-controller-manager,kube-controller-manager,\"system:masters\"\n",
		p.adminToken, p.kcmToken)

	files := []struct {
		name string
		data []byte
	}{
		{servingCertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{servingKeyFile, servingKeyPEM},
		{saKeyFile, saKeyPEM},
		{saPubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})},
		{tokenFile, []byte(tokens)},
		{adminTokenFile, []byte(p.adminToken)},
		{kcmTokenFile, []byte(p.kcmToken)},
		// The CA last: its presence marks a complete directory.
		{caCertFile, p.caPEM},
	}
	for _, f := range files {
		if err := os.WriteFile(p.path(f.name), f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func privatePEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

func token() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux.
	return hex.EncodeToString(b)
}
