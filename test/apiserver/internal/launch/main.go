// Command launch is the Go side of hack/test-apiserver.sh start and stop: it
// starts a detached control plane in a directory, or stops the one whose pid
// files are there. Run it through the script.
//
//	launch start --bin DIR --dir DIR [--controllers a,b] [-- APISERVER-FLAGS...]
//	launch stop --dir DIR
//
// May import: test/apiserver/internal/controlplane.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/payload-apply/payload-apply/test/apiserver/internal/controlplane"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-apiserver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: launch start|stop --dir DIR ...")
	}
	fs := flag.NewFlagSet("launch "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for certificates, data, logs, pid files and kubeconfig")
	bin := fs.String("bin", "", "directory with the etcd, kube-apiserver and kube-controller-manager binaries")
	controllers := fs.String("controllers", os.Getenv("TEST_APISERVER_CONTROLLERS"),
		"comma-separated kube-controller-manager controllers; empty: no controller manager")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required")
	}
	switch args[0] {
	case "start":
		cfg := controlplane.Config{
			BinDir:         *bin,
			Dir:            *dir,
			APIServerFlags: fs.Args(),
			Detach:         true,
		}
		if *controllers != "" {
			cfg.Controllers = strings.Split(*controllers, ",")
		}
		begin := time.Now()
		cp, err := controlplane.Start(ctx, cfg)
		if err != nil {
			return err
		}
		var rss int64
		for _, b := range cp.RSS() {
			rss += b
		}
		fmt.Printf("test-apiserver: ready in %.1fs at %s (%d MiB resident)\nexport KUBECONFIG=%s\n",
			time.Since(begin).Seconds(), cp.URL(), rss>>20, cp.Kubeconfig())
		return nil
	case "stop":
		if fs.NArg() > 0 {
			return fmt.Errorf("stop: unexpected arguments %q", fs.Args())
		}
		return controlplane.StopDir(*dir)
	}
	return fmt.Errorf("unknown command %q", args[0])
}
