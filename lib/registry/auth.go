package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/payload-apply/payload-apply/lib/safefs"
)

// maxAuthFileSize bounds a credentials file and a helper's answer.
const maxAuthFileSize = 1 << 20

// DefaultHelperTimeout bounds a docker-credential-* helper run.
const DefaultHelperTimeout = 30 * time.Second

// helperWaitDelay is how long a helper's output may stay open once it has
// been killed (a process it started may hold it).
const helperWaitDelay = time.Second

// Keychain finds registry credentials in the files the container tools
// keep them in: containers-auth.json(5) files (podman, skopeo, buildah,
// oc's --registry-config) and docker's config.json. It implements
// authn.Keychain for go-containerregistry. A zero Keychain finds nothing
// (anonymous access). It is safe for concurrent use.
type Keychain struct {
	// Files are searched in order; the first one with an entry for a
	// registry gives its credentials. Files that do not exist are skipped,
	// unless Explicit.
	Files []string
	// Explicit is true when Files came from the user (--registry-config,
	// REGISTRY_AUTH_FILE): a missing file is then an error.
	Explicit bool
	// Origin says where Files came from, for messages ("--registry-config",
	// "REGISTRY_AUTH_FILE", "the default locations").
	Origin string
	// HelperTimeout bounds each credential helper run; zero:
	// DefaultHelperTimeout. A helper is run once per registry host: its
	// answer, or its failure, is kept for the Keychain's life.
	HelperTimeout time.Duration

	mu      sync.Mutex
	answers map[string]helperAnswer // by helper and host
}

type helperAnswer struct {
	c   *authn.AuthConfig
	err error
}

var _ authn.ContextKeychain = (*Keychain)(nil)

// Env reads an environment variable; os.Getenv in production.
type Env func(string) string

// DefaultKeychain returns the keychain the container tools would use:
// file alone when given (the --registry-config flag), else
// $REGISTRY_AUTH_FILE alone when set, else the first that has the registry
// among ${XDG_RUNTIME_DIR}/containers/auth.json,
// ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json and
// ${DOCKER_CONFIG:-~/.docker}/config.json.
func DefaultKeychain(file string, env Env) *Keychain {
	if env == nil {
		env = os.Getenv
	}
	if file != "" {
		return &Keychain{Files: []string{file}, Explicit: true, Origin: "--registry-config"}
	}
	if f := env("REGISTRY_AUTH_FILE"); f != "" {
		return &Keychain{Files: []string{f}, Explicit: true, Origin: "REGISTRY_AUTH_FILE"}
	}
	home := env("HOME")
	var files []string
	if d := env("XDG_RUNTIME_DIR"); d != "" {
		files = append(files, filepath.Join(d, "containers", "auth.json"))
	}
	config := env("XDG_CONFIG_HOME")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	if config != "" {
		files = append(files, filepath.Join(config, "containers", "auth.json"))
	}
	docker := env("DOCKER_CONFIG")
	if docker == "" && home != "" {
		docker = filepath.Join(home, ".docker")
	}
	if docker != "" {
		files = append(files, filepath.Join(docker, "config.json"))
	}
	return &Keychain{Files: files, Origin: "the default locations"}
}

// authFile is the part of containers-auth.json and docker's config.json
// that holds credentials.
type authFile struct {
	Auths       map[string]authEntry `json:"auths"`
	CredHelpers map[string]string    `json:"credHelpers"`
	CredsStore  string               `json:"credsStore"`
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// Credentials are what a Keychain found for a registry.
type Credentials struct {
	authn.AuthConfig
	// Source says where they came from: "FILE" or "FILE (helper NAME)".
	Source string
}

// Resolve implements authn.Keychain.
func (k *Keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

// ResolveContext implements authn.ContextKeychain: the credentials Lookup
// finds, or anonymous access.
func (k *Keychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	c, err := k.Lookup(ctx, r.String())
	if err != nil || c == nil {
		return authn.Anonymous, err
	}
	return authn.FromConfig(c.AuthConfig), nil
}

// Lookup returns the credentials for target (a registry, "HOST[:PORT]", or
// a repository, "HOST/PATH"), or nil when no file has any. Entries are
// matched most specific first (HOST/A/B, HOST/A, HOST), as
// containers-auth.json(5) describes; "https://" prefixes and docker's
// "https://index.docker.io/v1/" spelling are understood. An unreadable or
// malformed file is an error naming it.
func (k *Keychain) Lookup(ctx context.Context, target string) (*Credentials, error) {
	if k == nil {
		return nil, nil
	}
	keys := lookupKeys(target)
	for _, file := range k.Files {
		af, err := readAuthFile(file)
		if errors.Is(err, os.ErrNotExist) && !k.Explicit {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("registry credentials (%s): %w", k.Origin, err)
		}
		entries := map[string]authEntry{}
		for key, e := range af.Auths {
			entries[normalizeAuthKey(key)] = e
		}
		helpers := map[string]string{}
		for key, h := range af.CredHelpers {
			helpers[normalizeAuthKey(key)] = h
		}
		for _, key := range keys {
			if e, ok := entries[key]; ok {
				c, err := e.credentials()
				if err != nil {
					return nil, fmt.Errorf("%s: auths[%q]: %w", file, key, err)
				}
				if c != nil {
					return &Credentials{AuthConfig: *c, Source: file}, nil
				}
			}
		}
		host := keys[len(keys)-1]
		helper := helpers[host]
		if helper == "" {
			helper = af.CredsStore
		}
		if helper != "" {
			c, err := k.helper(ctx, helper, host)
			if err != nil {
				return nil, fmt.Errorf("%s: credential helper %q for %s: %w", file, helper, host, err)
			}
			if c != nil {
				return &Credentials{AuthConfig: *c, Source: fmt.Sprintf("%s (helper %s)", file, helper)}, nil
			}
		}
	}
	return nil, nil
}

// lookupKeys returns the keys an entry for target may have, most specific
// first; the last is the registry host.
func lookupKeys(target string) []string {
	target = normalizeAuthKey(target)
	var keys []string
	for {
		keys = append(keys, target)
		i := strings.LastIndex(target, "/")
		if i < 0 {
			return keys
		}
		target = target[:i]
	}
}

// normalizeAuthKey maps the spellings of a registry in auth files to one:
// no scheme, no trailing slash, no docker "/v1/" path, and Docker Hub as
// "index.docker.io" (go-containerregistry's name for it).
func normalizeAuthKey(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key = strings.TrimSuffix(key, "/")
	key = strings.TrimSuffix(key, "/v1")
	key = strings.TrimSuffix(key, "/v2")
	host, rest, _ := strings.Cut(key, "/")
	switch host {
	case "docker.io", "registry-1.docker.io", "index.docker.io":
		host = name.DefaultRegistry
	}
	if rest != "" {
		return host + "/" + rest
	}
	return host
}

func readAuthFile(file string) (*authFile, error) {
	// A named pipe or device is refused without being opened.
	f, err := safefs.Open(file, safefs.Regular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAuthFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxAuthFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxAuthFileSize)
	}
	var af authFile
	if len(bytes.TrimSpace(data)) == 0 {
		return &af, nil
	}
	if err := json.Unmarshal(data, &af); err != nil {
		return nil, fmt.Errorf("%s: not a credentials file (JSON with \"auths\"): %w", file, err)
	}
	return &af, nil
}

// credentials returns the entry's credentials, or nil for an empty entry.
func (e authEntry) credentials() (*authn.AuthConfig, error) {
	c := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(e.Auth))
		if err != nil {
			return nil, fmt.Errorf("auth: not base64: %w", err)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return nil, errors.New(`auth: want base64 of "USER:PASSWORD"`)
		}
		c.Username, c.Password = user, pass
	}
	if c == (authn.AuthConfig{}) {
		return nil, nil
	}
	return &c, nil
}

// helper returns what helper answers for host, running it once per
// Keychain (the context ending is not kept: the next lookup runs it again).
func (k *Keychain) helper(ctx context.Context, helper, host string) (*authn.AuthConfig, error) {
	key := helper + "\x00" + host
	k.mu.Lock()
	defer k.mu.Unlock()
	if a, ok := k.answers[key]; ok {
		return a.c, a.err
	}
	timeout := k.HelperTimeout
	if timeout <= 0 {
		timeout = DefaultHelperTimeout
	}
	c, err := runHelper(ctx, helper, host, timeout)
	if ctx.Err() == nil {
		if k.answers == nil {
			k.answers = map[string]helperAnswer{}
		}
		k.answers[key] = helperAnswer{c, err}
	}
	return c, err
}

// runHelper asks docker-credential-NAME for host's credentials, as docker
// does: "get" with the server on stdin, JSON on stdout. A helper that has
// none answers "credentials not found in native keychain". It is killed,
// with every process it started (its process group), after timeout, when
// ctx ends, or as soon as it writes more than a credentials file may
// hold; its output is not waited for longer than helperWaitDelay after.
func runHelper(ctx context.Context, helper, host string, timeout time.Duration) (*authn.AuthConfig, error) {
	run, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(run, "docker-credential-"+helper, "get")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = helperWaitDelay
	cmd.Stdin = strings.NewReader(host)
	out := limitedBuffer{max: maxAuthFileSize, over: cancel}
	errOut := limitedBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case out.overflow:
			return nil, fmt.Errorf("answered more than %d bytes, more than credentials take: killed", maxAuthFileSize)
		case run.Err() != nil:
			return nil, fmt.Errorf("no answer within %s: killed", timeout)
		}
		msg := strings.TrimSpace(out.String() + " " + errOut.String())
		if strings.Contains(msg, "credentials not found") {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %.512s", err, msg)
	}
	var resp struct {
		Username string
		Secret   string
	}
	if err := json.Unmarshal(out.buf.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %w", err)
	}
	if resp.Username == "<token>" {
		return &authn.AuthConfig{IdentityToken: resp.Secret}, nil
	}
	return &authn.AuthConfig{Username: resp.Username, Password: resp.Secret}, nil
}

// limitedBuffer keeps the first max bytes written to it; past them it
// calls over (when set: then it fails the write) once. The buffer is not
// embedded: its ReadFrom, which io.Copy prefers to Write, would read
// without a bound (a helper printing 300 MB took 1.3 GB so).
type limitedBuffer struct {
	buf      bytes.Buffer
	max      int
	over     func()
	overflow bool
}

func (b *limitedBuffer) String() string { return b.buf.String() }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if rest := b.max - b.buf.Len(); len(p) > rest {
		b.buf.Write(p[:max(rest, 0)])
		if b.over != nil {
			if !b.overflow {
				b.overflow = true
				b.over()
			}
			return 0, errors.New("output above the limit")
		}
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}
