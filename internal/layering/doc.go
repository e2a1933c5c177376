// Package layering holds the test that keeps the module's dependencies
// pointing one way: every package's doc comment says which of the
// module's packages it may import and, for the pure ones, that nothing it
// depends on does cluster or registry I/O; TestLayering compares that with
// `go list`.
//
// The rule's grammar: a line starting "May import:" then module-relative
// package paths separated by commas ("x/..." for x and the packages below
// it), or "nothing", ending with a period; it may span lines. A line
// "Cluster I/O: none." marks a pure package: none of its dependencies may
// be client-go's REST, dynamic, discovery or clientset packages,
// go-containerregistry's remote, or a module package that is not pure.
//
// May import: nothing.
// Cluster I/O: none.
package layering
