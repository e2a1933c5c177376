package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// The exit codes, one table for every command (docs/cli.md, and the root
// help). TestExitCodes runs every command against it.
const (
	// exitOK: done; valid; no differences; available.
	exitOK = 0
	// exitFail: differences (diff), failures (apply: an object failed or
	// was not ready in time; validate: an error; status: not available),
	// or a payload or definition that is wrong.
	exitFail = 1
	// exitUsage: the command line is wrong (unknown command or flag, a bad
	// value, a flag naming a profile, feature set, file or directory that
	// does not exist), no cluster configuration, credentials refused or
	// lacking a permission, or the cluster cannot be reached.
	exitUsage = 2
	// exitInterrupted: SIGINT or SIGTERM, or stdout closed by its reader:
	// the command stopped cleanly; running it again finishes. 128 plus
	// SIGINT's number, as shells report a command Ctrl-C ended.
	exitInterrupted = 130
)

// exitCodeHelp is the table as the root help prints it.
const exitCodeHelp = `
Exit codes (every command):
  0    done: applied and ready, valid, no differences, available
  1    differences (diff) or failures (apply, validate, status), or a
       payload or definition that is wrong
  2    usage: unknown command or flag, a bad value, a flag naming something
       that does not exist; no cluster configuration; credentials refused
       or lacking a permission; cluster unreachable
  130  interrupted by SIGINT or SIGTERM, or stdout closed by its reader
       (e.g. '| head'): stopped cleanly, running it again finishes
`

// usageError is an error in how the command was called: exit code 2, and
// a pointer to the command's help.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// clusterError is an error about the cluster's configuration or the way
// to it (no kubeconfig, unreachable, certificate, credentials): exit code
// 2, no pointer to the help.
type clusterError struct{ error }

func (e clusterError) Unwrap() error { return e.error }

// exitError carries a specific exit code with an error message (nil Err for
// a silent exit, e.g. "differences found" or failures already printed).
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// errStdoutClosed is the cause of a run's context when stdout's reader
// went away.
var errStdoutClosed = errors.New("stdout closed by its reader")

// interrupted reports whether the run was interrupted: a signal, or
// stdout closed.
func interrupted(ctx context.Context) bool { return ctx.Err() != nil }

// exitCodeOf maps how a command ended to the exit code table.
func exitCodeOf(ctx context.Context, err error) int {
	if context.Cause(ctx) == errStdoutClosed {
		return exitInterrupted
	}
	if err == nil {
		return exitOK
	}
	var ue usageError
	var ce clusterError
	var ee *exitError
	switch {
	case interrupted(ctx):
		return exitInterrupted
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue), errors.As(err, &ce):
		return exitUsage
	}
	return exitFail
}

// reportError prints err (every error on its own line) and returns the
// exit code it implies. c is the command that ran.
func reportError(ctx context.Context, w io.Writer, c *cobra.Command, err error) int {
	code := exitCodeOf(ctx, err)
	if err == nil {
		return code
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.Err == nil {
		return code
	}
	var ue usageError
	if errors.As(err, &ue) && !interrupted(ctx) {
		for _, line := range errorLines(ue.error) {
			fmt.Fprintf(w, "error: %s\n", manifest.Printable(line))
		}
		if c != c.Root() && c.Name() != "help" {
			fmt.Fprintf(w, "Run 'payload-apply %s --help' for usage.\n", c.Name())
		}
		return code
	}
	if context.Cause(ctx) == errStdoutClosed && errors.Is(err, context.Canceled) {
		// Only the stop the closed stdout asked for.
		return code
	}
	paths := pathsOf(ctx)
	for _, line := range errorLines(err) {
		fmt.Fprintf(w, "error: %s\n", manifest.Printable(paths.real(line)))
	}
	return code
}

// errorLines flattens err into one line per error (reportError escapes
// the control characters left in a line: escape sequences from a file name
// or a server's message): joined errors each on
// their own line, and a wrapped join ("component x: " + a join) as one line
// per joined error with the prefix. Two errors never share a line.
func errorLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			if e != nil {
				out = append(out, errorLines(e)...)
			}
		}
		return out
	}
	msg := err.Error()
	if !strings.Contains(msg, "\n") {
		return []string{msg}
	}
	if inner := errors.Unwrap(err); inner != nil {
		if im := inner.Error(); strings.HasSuffix(msg, im) {
			if prefix := strings.TrimSuffix(msg, im); !strings.Contains(prefix, "\n") {
				var out []string
				for _, l := range errorLines(inner) {
					out = append(out, prefix+l)
				}
				return out
			}
		}
	}
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
