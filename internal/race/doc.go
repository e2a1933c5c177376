// Package race tells tests whether the race detector is on, so that
// expensive equivalence checks can run on a sample under -race (which makes
// them ten times slower) and in full otherwise. For tests only; it imports
// nothing.
//
// May import: nothing.
// Cluster I/O: none.
package race
