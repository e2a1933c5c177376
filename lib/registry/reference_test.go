package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/payload-apply/payload-apply/lib/registry"
)

func TestParseReference(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		in, want string
		isRef    bool
		err      bool
	}{
		{in: "quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64", want: "quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64", isRef: true},
		{in: "docker://quay.io/org/release:4.22.0", want: "quay.io/org/release:4.22.0", isRef: true},
		{in: "127.0.0.1:5000/ocp/release", want: "127.0.0.1:5000/ocp/release:latest", isRef: true},
		{in: "localhost/release:1", want: "localhost/release:1", isRef: true},
		{in: "registry.example/r@" + digest, want: "registry.example/r@" + digest, isRef: true},
		{in: "registry.example/r:tag@" + digest, want: "registry.example/r@" + digest, isRef: true},
		{in: "release:4.22.0", err: true},
		{in: "payload/dir", err: true},
		{in: "./quay.io/x", err: true},
		{in: "quay.io/UPPER:tag", isRef: true, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := registry.IsReference(tt.in); got != tt.isRef {
				t.Errorf("IsReference = %v, want %v", got, tt.isRef)
			}
			ref, err := registry.ParseReference(tt.in, nil)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if err == nil && ref.String() != tt.want {
				t.Errorf("parsed %q, want %q", ref, tt.want)
			}
		})
	}
}

func TestKeychain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// "user:pass" in base64 is dXNlcjpwYXNz; "repo:pw" is cmVwbzpwdw==.
	xdgRuntime := write("run/containers/auth.json", `{"auths":{"quay.io/org/special":{"auth":"cmVwbzpwdw=="}}}`)
	_ = xdgRuntime
	write("home/.docker/config.json", `{"auths":{"https://quay.io":{"auth":"dXNlcjpwYXNz"},"https://index.docker.io/v1/":{"username":"hub","password":"hubpw"}}}`)
	explicit := write("explicit.json", `{"auths":{"registry.example":{"identitytoken":"tok"}}}`)
	env := func(vars map[string]string) registry.Env { return func(k string) string { return vars[k] } }
	defaults := env(map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_RUNTIME_DIR": filepath.Join(dir, "run")})
	tests := []struct {
		name, target string
		kc           *registry.Keychain
		user, pass   string
		token        string
		source       string
		err          bool
	}{
		{"most specific entry first", "quay.io/org/special", registry.DefaultKeychain("", defaults), "repo", "pw", "", "run/containers/auth.json", false},
		{"falls through to docker config", "quay.io/org/other", registry.DefaultKeychain("", defaults), "user", "pass", "", "home/.docker/config.json", false},
		{"docker hub spellings", "index.docker.io/library/x", registry.DefaultKeychain("", defaults), "hub", "hubpw", "", "home/.docker/config.json", false},
		{"none", "other.example/x", registry.DefaultKeychain("", defaults), "", "", "", "", false},
		{"--registry-config alone", "registry.example/x", registry.DefaultKeychain(explicit, defaults), "", "", "tok", "explicit.json", false},
		{"REGISTRY_AUTH_FILE alone", "quay.io/org/other", registry.DefaultKeychain("", env(map[string]string{"REGISTRY_AUTH_FILE": explicit, "HOME": filepath.Join(dir, "home")})), "", "", "", "", false},
		{"missing explicit file", "quay.io/x", registry.DefaultKeychain(filepath.Join(dir, "nope.json"), defaults), "", "", "", "", true},
		{"malformed file", "quay.io/x", registry.DefaultKeychain(write("bad.json", "{"), defaults), "", "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.kc.Lookup(context.Background(), tt.target)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if tt.err {
				return
			}
			var got [4]string
			if c != nil {
				rel, _ := filepath.Rel(dir, c.Source)
				got = [4]string{c.Username, c.Password, c.IdentityToken, rel}
			}
			if diff := cmp.Diff([4]string{tt.user, tt.pass, tt.token, tt.source}, got); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCredentialHelpers: a helper is bounded in time (with what it
// started) and in output, and is run once per host.
func TestCredentialHelpers(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	helper := func(name, script string) {
		if err := os.WriteFile(filepath.Join(dir, "docker-credential-"+name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	helper("silent", "sleep 1000")
	helper("flood", "head -c 300000000 /dev/zero")
	helper("good", `echo run >> "`+filepath.Join(dir, "runs")+`"; echo '{"Username":"u","Secret":"s"}'`)
	helper("none", "echo credentials not found in native keychain; exit 1")
	for _, tc := range []struct {
		helper, want string
		user         string
	}{
		{"silent", `credential helper "silent" for quay.io: no answer within 300ms: killed`, ""},
		{"flood", `credential helper "flood" for quay.io: answered more than 1048576 bytes, more than credentials take: killed`, ""},
		{"good", "", "u"},
		{"none", "", ""},
	} {
		t.Run(tc.helper, func(t *testing.T) {
			file := filepath.Join(dir, tc.helper+".json")
			if err := os.WriteFile(file, []byte(`{"credHelpers":{"quay.io":"`+tc.helper+`"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			kc := registry.DefaultKeychain(file, nil)
			kc.HelperTimeout = 300 * time.Millisecond
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			for range 3 {
				c, err := kc.Lookup(context.Background(), "quay.io/org/x")
				if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				if got := ""; c != nil {
					got = c.Username
					if got != tc.user {
						t.Errorf("user %q, want %q", got, tc.user)
					}
				}
			}
			runtime.ReadMemStats(&after)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("three lookups took %s", took)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("allocated %d MiB", grew>>20)
			}
		})
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); string(runs) != "run\n" {
		t.Errorf("the good helper ran %q, want once", runs)
	}
}
