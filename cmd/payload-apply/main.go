// Command payload-apply loads, selects, renders, validates and applies
// OpenShift release payloads. Run `payload-apply help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	klog.Flush()
	os.Exit(code)
}
