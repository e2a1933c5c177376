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

// startProfile starts the CPU profile cpuProfileEnv asks for and returns
// what stops it; a profile that cannot start is reported and the command
// runs without.
func startProfile() (stop func()) {
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
