package main

import (
	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source/metrics"
)

// metricsCommand is `vkwatch metrics dashboard|rules`: the Grafana
// dashboard and the Prometheus alert rules for the series --metrics
// serves, as they ship in the binary (source/metrics/README.md describes
// them).
func (a *app) metricsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metrics dashboard|rules",
		Short: "Print the Grafana dashboard or the Prometheus alert rules for --metrics' series",
		Long: `metrics prints what goes beside vkwatch --metrics ADDR in a Prometheus stack,
as it ships in this binary, to standard output:

  dashboard  a Grafana dashboard (JSON, for Dashboards > New > Import): servers
             up and saving, save progress, ETA and stall, footprint and
             copy-on-write, the next fork save's forecast and headroom, the latest
             save's cost, PING quantiles and saves by outcome
  rules      Prometheus alert rules (YAML, for rule_files): VkwatchNodeDown,
             VkwatchForkWouldExceedMemory, VkwatchSaveStuck, VkwatchSaveFailed,
             VkwatchCopyOnWriteHigh

It connects to no server.`,
		Example: `  vkwatch metrics dashboard > vkwatch-dashboard.json
  vkwatch metrics rules > /etc/prometheus/vkwatch-rules.yml   # then rule_files: [vkwatch-rules.yml]`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("vkwatch metrics %s: print the dashboard or the rules (vkwatch metrics dashboard, vkwatch metrics rules)", args[0])
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usageErr("name what to print: vkwatch metrics dashboard, or vkwatch metrics rules")
		},
	}
	cmd.AddCommand(a.printCommand("dashboard", "Print the Grafana dashboard of --metrics' series (JSON)", metrics.Dashboard),
		a.printCommand("rules", "Print the Prometheus alert rules on --metrics' series (YAML)", func() []byte {
			return metrics.Rules(metrics.DefaultThresholds)
		}))
	return cmd
}

// printCommand is a subcommand that prints text to standard output.
func (a *app) printCommand(use, short string, text func() []byte) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("vkwatch metrics %s takes no argument (got %q)", use, args[0])
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			_, err := a.stdout.Write(text())
			return err
		},
	}
}
