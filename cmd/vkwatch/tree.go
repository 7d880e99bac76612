package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// finishTree gives every command of the tree the same rules: bad flags
// and arguments are usage errors (exit status 2) and say how to get help,
// every help ends with the table of exit statuses, and flag values
// complete in the shell.
func finishTree(root *cobra.Command) {
	// cobra adds its help and completion commands when it runs: added
	// now, they follow the same rules.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(flagError)
	root.SetHelpTemplate(root.HelpTemplate() + "\n" + exitTable())
	walk(root, func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2
		switch {
		case c.HasSubCommands() && !c.Runnable():
			// A group (vkwatch metrics): an unknown subcommand is a
			// usage error, not help with status 0.
			c.Args = cobra.ArbitraryArgs
			c.RunE = unknownSubcommand
		case c.Args == nil:
			c.Args = cobra.ArbitraryArgs
		}
		c.Args = usageArgs(c.Args)
	})
	registerCompletions(root)
}

// walk calls fn on c and every command below it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// usageArgs makes the errors of an argument check usage errors, with the
// way to help.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		var e *exitErr
		if err == nil || errors.As(err, &e) {
			return err
		}
		return usageErr("%s: %v (see %s --help)", cmd.Name(), err, cmd.CommandPath())
	}
}

// unknownSubcommand is the run of a group of subcommands: help without
// arguments, a usage error naming the nearest subcommand with one.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageErr("unknown command %q for %s: did you mean %s?", args[0], cmd.CommandPath(), strings.Join(s, " or "))
	}
	return usageErr("unknown command %q for %s (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
}

// notACommand is the monitor's check of its arguments, before anything is
// dialled: its first ADDR must not be a mistyped subcommand. cobra takes
// the first argument for a subcommand when it names one; otherwise the
// monitor takes it for a server, so `vkwatch reprot r.jsonl` would dial
// reprot:6379. The rule, so that no real server is mistaken for a typo:
// only a bare word (letters, digits, '-' and '_': no port, no dot, no
// colon, no slash, so neither host:port, an IP address, a domain name, a
// unix socket nor a URL) of three characters or more, within two edits of
// a subcommand's name or the start of one, is refused. A host that bare
// and that close is still watched when written with its port (save1:6379).
func notACommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || !bareWord(args[0]) || len(args[0]) < 3 {
		return nil
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageErr("unknown command %q: did you mean %s? (a server named %s: write %s:6379)",
			args[0], strings.Join(s, " or "), args[0], args[0])
	}
	return nil
}

func bareWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// noConnWhy says why a command takes no connection flags.
var noConnWhy = map[string]string{
	"demo":      "the demo starts its own servers",
	"replay":    "replay reads a recording and connects to no server",
	"recording": "recording reads a file and connects to no server",
	"report":    "report reads files and connects to no server",
}

// flagError makes cobra's flag errors usage errors that say how to get
// help. A connection flag given to a command that connects to nothing
// says so, a flag of another command says which commands take it, and -h
// without a host says that help is --help.
func flagError(cmd *cobra.Command, err error) error {
	var missing *pflag.NotExistError
	if errors.As(err, &missing) && connFlagNames[missing.GetSpecifiedName()] {
		why := noConnWhy[cmd.Name()]
		if why == "" {
			why = cmd.Name() + " connects to no server"
		}
		return usageErr("%s takes no connection flags (%s): %s", cmd.Name(), dashed(missing.GetSpecifiedName()), why)
	}
	if errors.As(err, &missing) {
		if others := takers(cmd.Root(), missing.GetSpecifiedName()); len(others) > 0 {
			return usageErr("%s takes no %s (%s %s; see %s --help)", cmd.CommandPath(), dashed(missing.GetSpecifiedName()),
				joinAnd(others), map[bool]string{true: "takes it", false: "take it"}[len(others) == 1], cmd.CommandPath())
		}
	}
	var noValue *pflag.ValueRequiredError
	if errors.As(err, &noValue) && noValue.GetFlag().Name == "host" {
		return usageErr("-h needs a HOST (as in valkey-cli): help is --help")
	}
	return usageErr("%v (see %s --help)", err, cmd.CommandPath())
}

// takers are the commands of the tree under root that have the flag
// name (a long name or a shorthand), by their paths.
func takers(root *cobra.Command, name string) []string {
	var out []string
	walk(root, func(c *cobra.Command) {
		fs := c.Flags()
		if fs.Lookup(name) != nil || len(name) == 1 && fs.ShorthandLookup(name) != nil {
			if c.HasParent() {
				out = append(out, c.CommandPath())
			} else {
				out = append(out, "the monitor")
			}
		}
	})
	return out
}

// joinAnd joins words as a sentence lists them: "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// dashed is a flag's name as written: -p or --port.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
