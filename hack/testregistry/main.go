// Command testregistry runs the registry the tests use (test/registry:
// Debian's docker-registry on 127.0.0.1, TLS with a generated CA, htpasswd
// authentication), for trying payload-apply's registry commands by hand and
// for benchmarks:
//
//	go run ./hack/testregistry start /tmp/reg && . /tmp/reg/env   # in the background
//	payload-apply build --from ../shared/testdata/ocp-payload --version 4.22.0 --to $REGISTRY/ocp/release:4.22.0
//	go run ./hack/testregistry stop /tmp/reg
//	go run ./hack/testregistry run [-env FILE]                    # in the foreground, until Ctrl-C
//
// DIR/env (and -env FILE) export REGISTRY (HOST:PORT), REGISTRY_AUTH_FILE
// (its credentials, which payload-apply, podman and skopeo read) and
// SSL_CERT_FILE (the system's roots and the registry's CA, which every Go
// program, payload-apply and cosign included, reads).
//
// May import: test/registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/payload-apply/payload-apply/test/registry"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "start":
		if len(os.Args) != 3 {
			usage()
		}
		err = start(os.Args[2])
	case "stop":
		if len(os.Args) != 3 {
			usage()
		}
		err = registry.StopDir(os.Args[2])
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		env := fs.String("env", "", "write the variables to this file once the registry answers")
		_ = fs.Parse(os.Args[2:])
		err = run(*env)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testregistry:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testregistry start DIR | stop DIR | run [-env FILE]")
	os.Exit(2)
}

func vars(r *registry.Registry) string {
	return fmt.Sprintf("export REGISTRY=%s\nexport REGISTRY_AUTH_FILE=%s\nexport SSL_CERT_FILE=%s\n", r.Host, r.AuthFile, r.CABundle)
}

func start(dir string) error {
	r, err := registry.StartWith(context.Background(), registry.Options{Dir: dir, Detach: true})
	if err != nil {
		return err
	}
	env := filepath.Join(r.Dir, "env")
	if err := os.WriteFile(env, []byte(vars(r)), 0o600); err != nil {
		return err
	}
	fmt.Printf("registry %s running (files in %s); '. %s' sets REGISTRY, REGISTRY_AUTH_FILE, SSL_CERT_FILE; 'go run ./hack/testregistry stop %s' stops it\n", r.Host, r.Dir, env, dir)
	return nil
}

func run(env string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := registry.Start(ctx)
	if err != nil {
		return err
	}
	defer r.Stop()
	if env != "" {
		if err := os.WriteFile(env+".tmp", []byte(vars(r)), 0o600); err != nil {
			return err
		}
		if err := os.Rename(env+".tmp", env); err != nil {
			return err
		}
		defer os.Remove(env)
	}
	fmt.Printf("registry %s running in %s; Ctrl-C stops it\n%s", r.Host, r.Dir, vars(r))
	<-ctx.Done()
	return nil
}
