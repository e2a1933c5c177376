// Package gobuild builds payload-apply's binary the way `make build` does:
// with the build tags in Tags. The tests and the benchmarks that run the
// binary as a separate process build it here, so that they measure and
// test what the Makefile builds.
//
// May import: nothing.
// Cluster I/O: none.
package gobuild

import "os/exec"

// Tags are the build tags payload-apply is built with (the Makefile's TAGS
// says the same; a test holds them equal).
//
// kustomize_disable_go_plugin_support leaves kustomize's loader of Go
// plugins out. payload-apply runs kustomize with its plugins disabled (only
// the built-in transformers), so nothing changes but the binary: when the
// standard library's plugin package is linked, the Go linker exports every
// symbol and keeps every exported method, and the binary is a third larger
// (107 against 72 MB) and touches about 30 MiB more memory as it starts
// (docs/benchmarks.md, "The binary without Go plugin support").
const Tags = "kustomize_disable_go_plugin_support"

// Command returns `go build -tags Tags -o out pkg`; the caller sets its
// directory (the module's root when pkg is relative), environment and
// output.
func Command(out, pkg string) *exec.Cmd {
	return exec.Command("go", "build", "-tags", Tags, "-o", out, pkg)
}
