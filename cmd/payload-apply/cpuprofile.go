package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file to write a CPU profile of the whole command
// to (go tool pprof reads it). It is for measuring a command as users run
// it, from start to exit (docs/benchmarks.md); a flag would show in every
// command's help for something users never need.
const cpuProfileEnv = "PAYLOAD_APPLY_CPUPROFILE"

// memProfileEnv names a file to write a heap profile to when the command
// ends: what is still held then (-sample_index=inuse_space) and everything
// allocated (alloc_space).
const memProfileEnv = "PAYLOAD_APPLY_MEMPROFILE"

// startProfile starts the CPU profile cpuProfileEnv asks for and returns
// what stops it (and writes the heap profile memProfileEnv asks for); a
// profile that cannot start is reported and the command runs without.
func startProfile() (stop func()) {
	cpu := startCPUProfile()
	return func() {
		cpu()
		writeHeapProfile()
	}
}

// writeHeapProfile writes the heap profile memProfileEnv names, if any.
func writeHeapProfile() {
	name := os.Getenv(memProfileEnv)
	if name == "" {
		return
	}
	f, err := os.Create(name)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s: %v\n", memProfileEnv, err)
	}
}

// startCPUProfile starts the CPU profile cpuProfileEnv names, if any.
func startCPUProfile() (stop func()) {
	name := os.Getenv(cpuProfileEnv)
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %s: %v\n", cpuProfileEnv, err)
		}
	}
}
