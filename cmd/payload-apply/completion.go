package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
)

func completionCommand() *command {
	return &command{
		name:  "completion",
		short: "Print the shell completion script for bash, zsh, fish or powershell",
		usage: "bash|zsh|fish|powershell",
		long: `Prints a script that makes the shell complete payload-apply's commands,
flags and flag values (formats for -o, profile and feature set names,
files and directories elsewhere), from the binary itself: the script asks
'payload-apply __complete ...', so it never goes stale.

  bash (needs the bash-completion package):
    source <(payload-apply completion bash)
    payload-apply completion bash > /etc/bash_completion.d/payload-apply
  zsh:
    payload-apply completion zsh > "${fpath[1]}/_payload-apply"
    (and "autoload -U compinit; compinit" in ~/.zshrc, once)
  fish:
    payload-apply completion fish > ~/.config/fish/completions/payload-apply.fish
  powershell:
    payload-apply completion powershell | Out-String | Invoke-Expression

Exit codes: 0 printed, 2 usage error (no shell, or one not listed).`,
		flags: func(fs *pflag.FlagSet) runner { return &completionOptions{} },
		args: func(args []string) []string {
			if len(args) == 0 {
				return []string{"bash", "zsh", "fish", "powershell"}
			}
			return nil
		},
	}
}

type completionOptions struct{ shell string }

func (o *completionOptions) Complete(ctx context.Context, args []string, s IOStreams) error {
	if len(args) != 1 {
		return usageErrorf("want one shell: bash, zsh, fish or powershell")
	}
	o.shell = args[0]
	return nil
}

func (o *completionOptions) Validate() error {
	switch o.shell {
	case "bash", "zsh", "fish", "powershell":
		return nil
	}
	return usageErrorf("shell %q: want bash, zsh, fish or powershell", o.shell)
}

func (o *completionOptions) Run(ctx context.Context, s IOStreams) error {
	root := rootOf(ctx)
	if root == nil {
		return errors.New("completion: no command tree")
	}
	switch o.shell {
	case "bash":
		return root.GenBashCompletionV2(s.Out, true)
	case "zsh":
		return root.GenZshCompletion(s.Out)
	case "fish":
		return root.GenFishCompletion(s.Out, true)
	}
	return root.GenPowerShellCompletionWithDesc(s.Out)
}
