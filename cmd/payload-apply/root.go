package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/payload-apply/payload-apply/lib/redact"
)

// IOStreams are the streams a command reads and writes: data on Out,
// progress, warnings and errors on ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// command is one subcommand: its help and how to run it. A new command is
// a file with an xCommand() returning one of these, listed in commands();
// docs/cli.md says what it must follow (-o is a format, exit codes, ...).
type command struct {
	name  string
	short string
	usage string // after "payload-apply NAME "
	long  string // help text, including exit codes
	// flags binds the command's options to fs and returns its runner.
	flags func(fs *pflag.FlagSet) runner
	// args, when set, completes positional arguments in the shell
	// (completion): the words that may follow args.
	args func(args []string) []string
}

// runner is a command's options after flag parsing: Complete fills in what
// depends on the environment, Validate checks the combination, Run does the
// work.
type runner interface {
	Complete(ctx context.Context, args []string, s IOStreams) error
	Validate() error
	Run(ctx context.Context, s IOStreams) error
}

func commands() []*command {
	cmds := []*command{applyCommand(), buildCommand(), completionCommand(), diffCommand(), extractCommand(), graphCommand(), infoCommand(), operatorCommand(), profilesCommand(), rbacCommand(), renderCommand(), signCommand(), statusCommand(), updateGraphCommand(), upgradeCommand(), validateCommand(), verifyCommand(), versionCommand()}
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

// run parses args and runs a command; it returns the process exit code
// (exitcode.go). Global flags (-v, --vmodule) go anywhere on the line.
// A stdout whose reader went away ends the run as an interrupt does.
func run(ctx context.Context, args []string, s IOStreams) int {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	out := newGuardedWriter(s.Out, func() { stop(errStdoutClosed) })
	s.Out = out
	// Nothing printed from here on shows a secret the run knows of
	// (docs/reliability.md, "Security").
	secrets := &redact.Values{}
	ctx = withSecrets(withPhaseRecorder(ctx), secrets)
	ctx = withPaths(ctx)
	s = redactStreams(s, secrets)
	resetClientLogging()

	root := newRoot(s)
	root.SetArgs(args)
	ctx = context.WithValue(ctx, rootKey{}, root)
	found, err := root.ExecuteContextC(ctx)
	if found == nil {
		found = root
	}
	return reportError(ctx, s.ErrOut, found, interruptedError(ctx, found, err))
}

type rootKey struct{}

// rootOf returns the command tree of the run (for completion).
func rootOf(ctx context.Context) *cobra.Command {
	c, _ := ctx.Value(rootKey{}).(*cobra.Command)
	return c
}

// newRoot builds the command tree: every command of commands() as a cobra
// command with its flags, the global flags, help and shell completion
// (cobra's __complete).
func newRoot(s IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "payload-apply",
		Short:         "Load, select, render, validate and apply OpenShift release payloads",
		SilenceErrors: true,
		SilenceUsage:  true,
		// Anything left after the flags is an unknown command.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if sugg := c.SuggestionsFor(args[0]); len(sugg) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sugg, ", "))
			}
			return usageError{fmt.Errorf("%s; run 'payload-apply help' for the commands", msg)}
		},
		RunE: func(c *cobra.Command, args []string) error {
			if v, _ := c.Flags().GetBool("version"); v {
				return printVersionLine(s.Out)
			}
			printRootHelp(s.ErrOut)
			return &exitError{Code: exitUsage}
		},
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
		SuggestionsMinimumDistance: 2,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.Flags().Bool("version", false, "print the version and exit (see 'payload-apply version')")
	addGlobalFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { printHelp(s.Out, c) })
	root.SetHelpCommand(helpCommand(s))
	for _, c := range commands() {
		root.AddCommand(cobraCommand(c, s))
	}
	return root
}

// cobraCommand adapts a command: its flags, its runner, completion of its
// flag values and arguments.
func cobraCommand(c *command, s IOStreams) *cobra.Command {
	cc := &cobra.Command{
		Use:   c.name + " " + c.usage,
		Short: c.short,
		Long:  c.long,
		Args:  cobra.ArbitraryArgs,
	}
	fs := cc.Flags()
	fs.SortFlags = false
	r := c.flags(fs)
	registerCompletions(cc)
	if c.args != nil {
		cc.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.args(args), cobra.ShellCompDirectiveNoFileComp
		}
	}
	cc.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		warnDeprecated(s.ErrOut, fs)
		if err := r.Complete(ctx, args, s); err != nil {
			return err
		}
		if err := r.Validate(); err != nil {
			return err
		}
		return r.Run(ctx, s)
	}
	return cc
}

// deprecatedAnnotation marks a flag kept for old command lines.
const deprecatedAnnotation = "payload-apply/deprecated"

// deprecateFlag hides a flag from the help and makes its use print a
// warning saying what replaces it (instead of pflag's MarkDeprecated,
// whose notice goes to its own output).
func deprecateFlag(fs *pflag.FlagSet, name, instead string) {
	_ = fs.MarkHidden(name)
	_ = fs.SetAnnotation(name, deprecatedAnnotation, []string{instead})
}

// warnDeprecated says on w which deprecated flags the command line used
// and what replaces them.
func warnDeprecated(w io.Writer, fs *pflag.FlagSet) {
	fs.Visit(func(f *pflag.Flag) {
		if instead := f.Annotations[deprecatedAnnotation]; len(instead) > 0 {
			fmt.Fprintf(w, "warning: --%s is deprecated: %s\n", f.Name, instead[0])
		}
	})
}

// helpCommand is "help [COMMAND]": help on stdout, exit 0; an unknown
// command is a usage error.
func helpCommand(s IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Help about a command",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			if len(args) == 0 {
				for _, sub := range c.Root().Commands() {
					if sub.IsAvailableCommand() {
						out = append(out, sub.Name())
					}
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				printRootHelp(s.Out)
				return nil
			}
			target, rest, err := c.Root().Find(args)
			if err != nil || target == c.Root() || len(rest) > 0 {
				return usageError{fmt.Errorf("unknown command %q; run 'payload-apply help' for the commands", strings.Join(args, " "))}
			}
			printHelp(s.Out, target)
			return nil
		},
	}
}

func printRootHelp(w io.Writer) {
	fmt.Fprint(w, `payload-apply loads an OpenShift release payload, selects what a cluster profile
installs, and renders, orders, validates and applies it.

Usage:
  payload-apply [global flags] COMMAND [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.short)
	}
	tw.Flush()
	fmt.Fprintf(w, `
Global flags (anywhere on the line):
%s
Output: -o/--output is always a format (text, yaml, json, name, wide, ...
as each command lists); a directory to write into is --output-dir.
%s
Without --payload, commands use the reference payload built into the binary;
status and diff against a cluster, the release the cluster's record names.
Run 'payload-apply help COMMAND' for a command's flags and exit codes.
`, globalFlagUsages(), exitCodeHelp)
}

// printHelp prints a command's help: our commands as "short, usage, long,
// flags, global flags"; cobra's own (none yet) as cobra does.
func printHelp(w io.Writer, c *cobra.Command) {
	if c == c.Root() {
		printRootHelp(w)
		return
	}
	cmd := findCommand(c.Name())
	if cmd == nil || c.Parent() != c.Root() {
		fmt.Fprintf(w, "%s\n\n%s", strings.TrimSpace(c.Long+"\n"+c.Short), c.UsageString())
		return
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  payload-apply %s %s\n\n%s\n\nFlags:\n%s\nGlobal flags:\n%s",
		cmd.short, cmd.name, cmd.usage, strings.TrimSpace(cmd.long), c.LocalFlags().FlagUsages(), globalFlagUsages())
}

// globalFlagUsages is the usage of the global flags.
func globalFlagUsages() string {
	fs := pflag.NewFlagSet("global", pflag.ContinueOnError)
	addGlobalFlags(fs)
	return fs.FlagUsages()
}
