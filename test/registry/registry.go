package registry

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Binary is the registry server hack/install-test-deps.sh installs.
const Binary = "docker-registry"

// Registry is a running registry. Its fields are read-only.
type Registry struct {
	// Host is "127.0.0.1:PORT".
	Host string
	// Dir holds the certificates, htpasswd, config, data and the log.
	Dir string
	// CAFile is the PEM CA certificate that signed the serving
	// certificate; CertPool holds it.
	CAFile   string
	CertPool *x509.CertPool
	// CertDir holds only the CA, as ca.crt: containers/image's
	// --cert-dir (skopeo --src-cert-dir, --dest-cert-dir).
	CertDir string
	// CABundle is the system's roots and the CA in one file, for
	// SSL_CERT_FILE (Go programs such as cosign).
	CABundle string
	// Username and Password are the one account of the htpasswd file.
	Username, Password string
	// AuthFile is a containers-auth.json file with Username and Password
	// for Host.
	AuthFile string

	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	tempDir  bool
	detach   bool
}

// Options configure StartWith.
type Options struct {
	// Dir holds the registry's files; it is created when missing and kept
	// by Stop. Empty: a temporary directory that Stop removes.
	Dir string
	// Detach runs the registry in its own session, to outlive the caller
	// (hack/testregistry start); StopDir ends it. Otherwise it dies with
	// the caller's process.
	Detach bool
}

// Start runs a registry in a new temporary directory (removed by Stop) and
// waits until it answers. It fails when docker-registry is not installed.
func Start(ctx context.Context) (*Registry, error) { return StartWith(ctx, Options{}) }

// StartWith is Start with options.
func StartWith(ctx context.Context, opts Options) (*Registry, error) {
	bin, err := exec.LookPath(Binary)
	if err != nil {
		return nil, fmt.Errorf("registry: %s not installed (hack/install-test-deps.sh installs Debian's docker-registry): %w", Binary, err)
	}
	dir, temp := opts.Dir, opts.Dir == ""
	if temp {
		if dir, err = os.MkdirTemp("", "test-registry-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	r := &Registry{Dir: dir, Username: "payload", Password: "apply-" + strconv.FormatInt(time.Now().UnixNano(), 36), tempDir: temp, done: make(chan struct{}), detach: opts.Detach}
	if err := r.start(ctx, bin); err != nil {
		if temp {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	return r, nil
}

// pidFile holds a detached registry's pid.
const pidFile = "registry.pid"

// StopDir ends the detached registry whose files are in dir (SIGTERM to the
// pid in dir/registry.pid, when that process still serves dir's config).
func StopDir(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile, err)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	abs, _ := filepath.Abs(dir)
	if bytes.Contains(cmdline, []byte(filepath.Join(abs, "config.yml"))) {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return err
		}
	}
	return os.Remove(filepath.Join(dir, pidFile))
}

func (r *Registry) start(ctx context.Context, bin string) error {
	if err := r.writeFiles(); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	log, err := os.Create(filepath.Join(r.Dir, "registry.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	r.cmd = exec.Command(bin, "serve", filepath.Join(r.Dir, "config.yml"))
	r.cmd.Dir = r.Dir
	r.cmd.Stdout, r.cmd.Stderr = log, log
	// Pdeathsig: the registry dies with the test binary.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if r.detach {
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if r.detach {
		if err := os.WriteFile(filepath.Join(r.Dir, pidFile), []byte(strconv.Itoa(r.cmd.Process.Pid)+"\n"), 0o600); err != nil {
			return err
		}
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: r.CertPool}}, Timeout: 2 * time.Second}
	var last error
	for {
		select {
		case <-r.done:
			data, _ := os.ReadFile(filepath.Join(r.Dir, "registry.log"))
			return fmt.Errorf("registry: exited before it was ready:\n%s", tail(data))
		case <-ctx.Done():
			r.Stop()
			return fmt.Errorf("registry: not ready: %v", last)
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get("https://" + r.Host + "/v2/")
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return nil
		}
		last = fmt.Errorf("GET /v2/: %s", resp.Status)
	}
}

func tail(b []byte) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// writeFiles writes the CA, the serving certificate, htpasswd, the auth
// file and the configuration, on a free port.
func (r *Registry) writeFiles() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.Host = l.Addr().String()
	l.Close()

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "payload-apply test registry CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	r.CertPool = x509.NewCertPool()
	r.CertPool.AddCert(ca)
	r.CAFile = filepath.Join(r.Dir, "ca.crt")
	hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.MinCost)
	if err != nil {
		return err
	}
	r.AuthFile = filepath.Join(r.Dir, "auth.json")
	auth := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	files := map[string][]byte{
		"ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"server.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"server.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"htpasswd":   []byte(r.Username + ":" + string(hash) + "\n"),
		"auth.json":  []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`+"\n", r.Host, auth)),
		"config.yml": []byte(fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  tls:
    certificate: %s
    key: %s
auth:
  htpasswd:
    realm: payload-apply-test
    path: %s
`, filepath.Join(r.Dir, "data"), r.Host, filepath.Join(r.Dir, "server.crt"), filepath.Join(r.Dir, "server.key"), filepath.Join(r.Dir, "htpasswd"))),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(r.Dir, name), data, 0o600); err != nil {
			return err
		}
	}
	r.CertDir = filepath.Join(r.Dir, "certs.d")
	if err := os.MkdirAll(r.CertDir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.CertDir, "ca.crt"), files["ca.crt"], 0o600); err != nil {
		return err
	}
	var roots []byte
	for _, f := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"} {
		if b, err := os.ReadFile(f); err == nil {
			roots = append(b, '\n')
			break
		}
	}
	r.CABundle = filepath.Join(r.Dir, "ca-bundle.crt")
	return os.WriteFile(r.CABundle, append(roots, files["ca.crt"]...), 0o600)
}

// Stop ends the registry (SIGTERM, SIGKILL after 10 s) and removes its
// temporary directory.
func (r *Registry) Stop() {
	r.stopOnce.Do(func() {
		if r.cmd != nil && r.cmd.Process != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-r.done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
				<-r.done
			}
		}
		if r.tempDir {
			os.RemoveAll(r.Dir)
		}
	})
}
