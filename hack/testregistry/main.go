// Command testregistry runs the registry the tests use (test/registry:
// Debian's docker-registry on 127.0.0.1, TLS with a generated CA, htpasswd
// authentication) until interrupted, for trying payload-apply's registry
// commands by hand and for benchmarks:
//
//	go run ./hack/testregistry -env /tmp/registry.env &
//	. /tmp/registry.env    # REGISTRY, REGISTRY_AUTH_FILE, SSL_CERT_FILE
//	payload-apply build --from ../shared/testdata/ocp-payload --version 4.22.0 --to $REGISTRY/ocp/release:4.22.0
//
// SSL_CERT_FILE is a bundle of the system's roots and the registry's CA, so
// that every Go program (payload-apply, cosign) verifies the registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/payload-apply/payload-apply/test/registry"
)

func main() {
	env := flag.String("env", "", "write shell variable assignments (REGISTRY, REGISTRY_AUTH_FILE, SSL_CERT_FILE) to this file once the registry answers")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := registry.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer r.Stop()
	vars := fmt.Sprintf("export REGISTRY=%s\nexport REGISTRY_AUTH_FILE=%s\nexport SSL_CERT_FILE=%s\n", r.Host, r.AuthFile, r.CABundle)
	if *env != "" {
		if err := os.WriteFile(*env+".tmp", []byte(vars), 0o600); err == nil {
			err = os.Rename(*env+".tmp", *env)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("registry %s (user %s) running in %s; Ctrl-C stops it\n%s", r.Host, r.Username, r.Dir, vars)
	<-ctx.Done()
	if *env != "" {
		os.Remove(*env)
	}
}
