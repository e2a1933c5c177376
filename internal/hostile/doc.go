// Package hostile builds the hostile inputs the tests of several packages
// feed the loader, the parser and the command: YAML alias bombs, deeply
// nested and oversized documents, payload trees with symbolic links, and
// image archives with entries that leave the image root.
//
// It is for tests only: import it from _test.go files, never from the
// command or the libraries. What each test expects of these inputs (the
// error, the exit code, what must not reach the cluster) stays in the
// test.
//
// May import: nothing.
// Cluster I/O: none.
package hostile
