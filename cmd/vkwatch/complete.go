package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// What a flag's value or a command's arguments complete to in the shell
// (vkwatch completion bash|zsh|fish|powershell). Numbers, durations and
// switches complete to nothing; every string flag is decided here (a test
// holds every flag of the tree to it), by "command flag" first, then by
// flag name alone.
var (
	// recordings are what replay and recording read: --record's JSON
	// Lines, plain or compressed by their name (CSV is for spreadsheets).
	recordings = files("jsonl", "zst", "gz")
	noFiles    = cobra.NoFileCompletions
	anyFile    = cobra.FixedCompletions(nil, cobra.ShellCompDirectiveDefault)
	dirs       = cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs)
)

func files(exts ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(exts, cobra.ShellCompDirectiveFilterFileExt)
}

func choices(c ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(c, cobra.ShellCompDirectiveNoFileComp)
}

// flagCompletions: host names and addresses complete to nothing. vkwatch
// keeps no history of the servers it watched (it writes no file it is not
// asked to), and a shell's own history or ~/.ssh/known_hosts are not its to
// read.
var flagCompletions = map[string]cobra.CompletionFunc{
	"host": noFiles, "port": noFiles, "pass": noFiles, "user": noFiles, "sni": noFiles,
	"cluster": noFiles, "metrics": noFiles, "prefix": noFiles, "from": noFiles, "to": noFiles,
	"shard": noFiles, "max-observer-cost": noFiles, "nodes": anyFile,
	"socket": anyFile, "cacert": anyFile, "cert": anyFile, "key": anyFile, "server-bin": anyFile,
	"cacertdir": dirs, "figures": dirs,
	"uri": cobra.FixedCompletions([]string{"redis://", "rediss://", "valkey://", "valkeys://"},
		cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace),
	"record":           files("jsonl", "zst", "gz", "csv"),
	"record-format":    choices("jsonl", "csv"),
	"report":           files("json"),
	"scenario":         choices("auto", "fork-vs-forkless", "idle-vs-load"),
	"report output":    files("html"),
	"recording output": recordings,
}

// argCompletions are the arguments' completions by command name: servers
// (nothing to complete) or files.
var argCompletions = map[string]cobra.CompletionFunc{
	"vkwatch": noFiles, "bench": noFiles, "load": noFiles, "save": noFiles, "demo": noFiles,
	"replay": recordings, "recording": recordings, "report": files("jsonl", "zst", "gz", "json"),
}

// registerCompletions sets the completions of every command below root.
func registerCompletions(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if f, ok := argCompletions[c.Name()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = f
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if f := completionOf(c, fl); f != nil {
				_ = c.RegisterFlagCompletionFunc(fl.Name, f)
			}
		})
	})
}

// completionOf is the completion of c's flag fl: nil when it is left to
// cobra, or to the command's own registration.
func completionOf(c *cobra.Command, fl *pflag.Flag) cobra.CompletionFunc {
	if _, own := c.GetFlagCompletionFunc(fl.Name); own {
		return nil
	}
	if f, ok := flagCompletions[c.Name()+" "+fl.Name]; ok {
		return f
	}
	if f, ok := flagCompletions[fl.Name]; ok {
		return f
	}
	if fl.Value.Type() != "string" {
		return noFiles
	}
	return nil
}

// undecided lists the string flags of the tree whose completion nobody
// decided (for the test that holds every flag to the table).
func undecided(root *cobra.Command) []string {
	var out []string
	walk(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if _, ok := c.GetFlagCompletionFunc(fl.Name); !ok {
				out = append(out, fmt.Sprintf("%s --%s", c.CommandPath(), fl.Name))
			}
		})
	})
	return out
}
