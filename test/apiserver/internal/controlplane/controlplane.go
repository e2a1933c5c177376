package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Component names one process of the control plane. Its value is the name of
// the binary, of its log file (Dir/<name>.log) and of its pid file
// (Dir/<name>.pid).
type Component string

// The components, in start order.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
)

// Files written to Config.Dir besides the pki/, etcd/, *.log and *.pid.
const (
	// KubeconfigFile is the admin kubeconfig (token in group system:masters).
	KubeconfigFile = "kubeconfig"
	kcmKubeconfig  = "controller-manager.kubeconfig"
)

// DefaultReadyTimeout bounds the wait for one component to become ready.
const DefaultReadyTimeout = 90 * time.Second

// Config says what to run and where.
type Config struct {
	// BinDir holds the etcd, kube-apiserver and kube-controller-manager
	// binaries. Required.
	BinDir string
	// Dir holds certificates (pki/), etcd data (etcd/), logs, pid files and
	// kubeconfigs. Required; created when missing. Certificates and data
	// already in Dir are reused.
	Dir string
	// Controllers are the kube-controller-manager controllers to run, as its
	// --controllers flag names them; a name without the "-controller"
	// suffix gets it. Empty: no controller manager.
	Controllers []string
	// EtcdFlags are appended to the etcd command line after ours, so
	// they win (e.g. "--quota-backend-bytes=8589934592").
	EtcdFlags []string
	// APIServerFlags are appended to the kube-apiserver command line after
	// ours, so they win for flags that take one value.
	APIServerFlags []string
	// Detach starts the processes in sessions of their own that outlive the
	// calling process (for the shell script). Otherwise they are in process
	// groups of their own and are killed when the calling process dies.
	Detach bool
	// ReadyTimeout bounds the wait for each component; zero means
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// ControlPlane is a running etcd, kube-apiserver and optional
// kube-controller-manager. Its methods are safe for concurrent use.
type ControlPlane struct {
	cfg   Config
	pki   *pki
	ports map[string]int
	http  *http.Client

	op    sync.Mutex // serializes Kill, Restart and Stop
	mu    sync.Mutex // guards procs
	procs map[Component]*process
}

// Start generates or reuses the certificates in cfg.Dir, picks free ports on
// 127.0.0.1, starts the components and waits until each is ready. On error
// nothing it started is left running.
func Start(ctx context.Context, cfg Config) (*ControlPlane, error) {
	if cfg.BinDir == "" || cfg.Dir == "" {
		return nil, errors.New("controlplane: BinDir and Dir are required")
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	var err error
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	for _, c := range []Component{Etcd, APIServer, ControllerManager} {
		if pid, ok := readPid(cfg.Dir, c); ok {
			return nil, fmt.Errorf("controlplane: %s: already running in %s (pid %d)", c, cfg.Dir, pid)
		}
	}
	p, err := ensurePKI(filepath.Join(cfg.Dir, "pki"))
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		return nil, errors.New("controlplane: pki: no certificate in ca.crt")
	}
	cp := &ControlPlane{
		cfg: cfg,
		pki: p,
		http: &http.Client{
			Timeout: 5 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig:   &tls.Config{RootCAs: pool},
				DisableKeepAlives: true,
			},
		},
		procs: map[Component]*process{},
	}
	// Another process may take a port between our check and the bind; then
	// the component exits with "address already in use" and we try again.
	for attempt := 1; ; attempt++ {
		err = cp.startAll(ctx)
		if err == nil {
			return cp, nil
		}
		_ = cp.Stop()
		if !errors.Is(err, errPortInUse) || attempt == 3 {
			return nil, err
		}
	}
}

func (cp *ControlPlane) startAll(ctx context.Context) error {
	names := []string{"etcd", "etcd-peer", "kube-apiserver"}
	if len(cp.cfg.Controllers) > 0 {
		names = append(names, "kube-controller-manager")
	}
	ports, err := freePorts(len(names))
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	cp.ports = map[string]int{}
	for i, n := range names {
		cp.ports[n] = ports[i]
	}
	if err := cp.writeKubeconfigs(); err != nil {
		return err
	}
	if err := cp.start(ctx, Etcd); err != nil {
		return err
	}
	if err := cp.start(ctx, APIServer); err != nil {
		return err
	}
	if len(cp.cfg.Controllers) > 0 {
		return cp.start(ctx, ControllerManager)
	}
	return nil
}

// Dir returns the absolute directory of the control plane's files.
func (cp *ControlPlane) Dir() string { return cp.cfg.Dir }

// URL returns the kube-apiserver address, https://127.0.0.1:PORT.
func (cp *ControlPlane) URL() string {
	return "https://127.0.0.1:" + strconv.Itoa(cp.ports["kube-apiserver"])
}

// EtcdURL returns the etcd client address, http://127.0.0.1:PORT.
func (cp *ControlPlane) EtcdURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(cp.ports["etcd"])
}

// CA returns the PEM of the CA that signed the serving certificate.
func (cp *ControlPlane) CA() []byte { return cp.pki.caPEM }

// Token returns the admin bearer token (group system:masters).
func (cp *ControlPlane) Token() string { return cp.pki.adminToken }

// Kubeconfig returns the path of the admin kubeconfig.
func (cp *ControlPlane) Kubeconfig() string { return filepath.Join(cp.cfg.Dir, KubeconfigFile) }

func (cp *ControlPlane) writeKubeconfigs() error {
	for _, k := range []struct{ file, user, token string }{
		{KubeconfigFile, "admin", cp.pki.adminToken},
		{kcmKubeconfig, "kube-controller-manager", cp.pki.kcmToken},
	} {
		data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test-apiserver
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: test-apiserver
  context:
    cluster: test-apiserver
    user: %s
current-context: test-apiserver
`, cp.URL(), base64.StdEncoding.EncodeToString(cp.pki.caPEM), k.user, k.token, k.user)
		if err := os.WriteFile(filepath.Join(cp.cfg.Dir, k.file), []byte(data), 0o600); err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
	}
	return nil
}

// args returns the command line of c, without the binary.
func (cp *ControlPlane) args(c Component) []string {
	dir, pki := cp.cfg.Dir, cp.pki.path
	url := func(name string) string { return "http://127.0.0.1:" + strconv.Itoa(cp.ports[name]) }
	switch c {
	case Etcd:
		return append([]string{
			"--name=test",
			"--data-dir=" + filepath.Join(dir, "etcd"),
			"--listen-client-urls=" + url("etcd"),
			"--advertise-client-urls=" + url("etcd"),
			"--listen-peer-urls=" + url("etcd-peer"),
			"--initial-advertise-peer-urls=" + url("etcd-peer"),
			"--initial-cluster=test=" + url("etcd-peer"),
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		}, cp.cfg.EtcdFlags...)
	case APIServer:
		return append([]string{
			"--etcd-servers=" + url("etcd"),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(cp.ports["kube-apiserver"]),
			"--cert-dir=" + pki(""),
			"--tls-cert-file=" + pki(servingCertFile),
			"--tls-private-key-file=" + pki(servingKeyFile),
			"--client-ca-file=" + pki(caCertFile),
			"--token-auth-file=" + pki(tokenFile),
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + pki(saPubFile),
			"--service-account-signing-key-file=" + pki(saKeyFile),
			"--service-cluster-ip-range=10.0.0.0/16", // room for the Services of a payload 100 times a release
			"--authorization-mode=RBAC",
			"--allow-privileged=true",
			"--profiling=false",
		}, cp.cfg.APIServerFlags...)
	case ControllerManager:
		kubeconfig := filepath.Join(dir, kcmKubeconfig)
		return []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--controllers=" + strings.Join(controllerNames(cp.cfg.Controllers), ","),
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(cp.ports["kube-controller-manager"]),
			"--cert-dir=" + pki(""),
			"--tls-cert-file=" + pki(servingCertFile),
			"--tls-private-key-file=" + pki(servingKeyFile),
			"--root-ca-file=" + pki(caCertFile),
			"--service-account-private-key-file=" + pki(saKeyFile),
			"--profiling=false",
		}
	}
	return nil
}

// controllerNames splits comma-separated lists and adds the "-controller"
// suffix that kube-controller-manager expects to names without it; "*" and
// "-name" pass unchanged.
func controllerNames(in []string) []string {
	var out []string
	for _, list := range in {
		for n := range strings.SplitSeq(list, ",") {
			n = strings.TrimSpace(n)
			switch {
			case n == "":
				continue
			case n == "*", strings.HasPrefix(n, "-"), strings.HasSuffix(n, "-controller"):
			default:
				n += "-controller"
			}
			out = append(out, n)
		}
	}
	return out
}

// ready reports whether c answers its health endpoint.
func (cp *ControlPlane) ready(ctx context.Context, c Component) error {
	var url string
	switch c {
	case Etcd:
		url = cp.EtcdURL() + "/health"
	case APIServer:
		url = cp.URL() + "/readyz"
	case ControllerManager:
		url = "https://127.0.0.1:" + strconv.Itoa(cp.ports["kube-controller-manager"]) + "/healthz"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if c == APIServer {
		req.Header.Set("Authorization", "Bearer "+cp.pki.adminToken)
	}
	resp, err := cp.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// freePorts returns n distinct ports of 127.0.0.1 that were free a moment ago:
// all are held open until all are found.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
