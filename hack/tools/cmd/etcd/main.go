// Command etcd runs the etcd server, built from the tools module so that the
// end-to-end tests need nothing but the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
