package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/payload-apply/payload-apply/lib/redact"
)

// IOStreams are the streams a command reads and writes: data on Out,
// progress, warnings and errors on ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Exit codes shared by every command. Commands document their own meaning
// of 1 in their help.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// command is one subcommand: its help and how to run it.
type command struct {
	name  string
	short string
	usage string // after "payload-apply NAME "
	long  string // help text, including exit codes
	// flags binds the command's options to fs and returns its runner.
	flags func(fs *pflag.FlagSet) runner
}

// runner is a command's options after flag parsing: Complete fills in what
// depends on the environment, Validate checks the combination, Run does the
// work.
type runner interface {
	Complete(ctx context.Context, args []string, s IOStreams) error
	Validate() error
	Run(ctx context.Context, s IOStreams) error
}

// usageError is an error in how the command was called: exit code 2.
type usageError struct{ error }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError carries a specific exit code with an error message (nil Err for
// a silent exit, e.g. "differences found").
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

func commands() []*command {
	cmds := []*command{applyCommand(), buildCommand(), diffCommand(), extractCommand(), graphCommand(), infoCommand(), profilesCommand(), rbacCommand(), renderCommand(), signCommand(), statusCommand(), validateCommand(), verifyCommand()}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run parses args and runs a command; it returns the process exit code.
func run(ctx context.Context, args []string, s IOStreams) int {
	if len(args) == 0 {
		printRootHelp(s.ErrOut)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			if c := findCommand(args[1]); c != nil {
				fs := newFlagSet(c)
				c.flags(fs)
				printCommandHelp(s.Out, c, fs)
				return exitOK
			}
			fmt.Fprintf(s.ErrOut, "error: unknown command %q\n", args[1])
			return exitUsage
		}
		printRootHelp(s.Out)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(s.Out, "payload-apply", version())
		return exitOK
	}
	c := findCommand(args[0])
	if c == nil {
		fmt.Fprintf(s.ErrOut, "error: unknown command %q\nRun 'payload-apply help' for the commands.\n", args[0])
		return exitUsage
	}
	fs := newFlagSet(c)
	r := c.flags(fs)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandHelp(s.Out, c, fs)
			return exitOK
		}
		fmt.Fprintf(s.ErrOut, "error: %v\nRun 'payload-apply %s --help' for usage.\n", err, c.name)
		return exitUsage
	}
	// Nothing printed from here on shows a secret the run knows of
	// (docs/reliability.md, "Security").
	secrets := &redact.Values{}
	ctx = withSecrets(ctx, secrets)
	s = redactStreams(s, secrets)
	err := r.Complete(ctx, fs.Args(), s)
	if err == nil {
		err = r.Validate()
	}
	if err == nil {
		err = r.Run(ctx, s)
	}
	return reportError(s.ErrOut, c, err)
}

// reportError prints err (every joined error on its own line) and returns
// the exit code it implies.
func reportError(w io.Writer, c *command, err error) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "error: %v\nRun 'payload-apply %s --help' for usage.\n", ue.error, c.name)
		return exitUsage
	}
	code := exitFail
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
		err = ee.Err
	}
	for _, line := range errorLines(err) {
		fmt.Fprintf(w, "error: %s\n", line)
	}
	return code
}

// errorLines flattens joined errors into one line each.
func errorLines(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, errorLines(e)...)
		}
		return out
	}
	return []string{strings.ReplaceAll(err.Error(), "\n", " ")}
}

// newFlagSet returns a flag set with klog's flags (-v and friends) added.
func newFlagSet(c *command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SortFlags = false
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	// Messages for people, not log files: no headers unless asked.
	_ = gofs.Set("skip_headers", "true")
	gofs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "v", "vmodule":
			pf := pflag.PFlagFromGoFlag(f)
			if f.Name == "v" {
				pf.Usage = "log verbosity: 1 config, 2 one line per task, 4 graph decisions and exclusions, 6+ API requests"
			}
			fs.AddFlag(pf)
		}
	})
	return fs
}

func printRootHelp(w io.Writer) {
	fmt.Fprint(w, `payload-apply loads an OpenShift release payload, selects what a cluster profile
installs, and renders, orders, validates and applies it.

Usage:
  payload-apply COMMAND [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.short)
	}
	tw.Flush()
	fmt.Fprint(w, `
Without --payload, commands use the reference payload built into the binary.
Run 'payload-apply help COMMAND' for a command's flags and exit codes.
`)
}

func printCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  payload-apply %s %s\n\n%s\n\nFlags:\n%s", c.short, c.name, c.usage, strings.TrimSpace(c.long), fs.FlagUsages())
}
