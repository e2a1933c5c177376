// Package golden compares test output with golden files and rewrites them
// when the test binary runs with -update.
//
// It is for tests only: import it from _test.go files, never from the
// command or the libraries. It registers the -update flag on the standard
// flag set when it is imported, so a test package must not define that flag
// itself. It imports only the standard library and go-cmp.
//
// May import: nothing.
// Cluster I/O: none.
package golden
