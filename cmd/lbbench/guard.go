package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/internal/guard"
)

// newGuardCmd is the hidden command the proxy topology runs nginx and
// HAProxy under (package guard says why).
func newGuardCmd() *cobra.Command {
	return &cobra.Command{
		Use:                guard.Subcommand + " -- COMMAND [ARG...]",
		Short:              "Run a command and take its process group down with it, even when lbbench is killed",
		Hidden:             true,
		DisableFlagParsing: true, // the command's own flags (nginx -t) pass through
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return cmd.Help()
			}
			err := guard.Run(cmd.Context(), args)
			var ge *guard.ExitError
			if errors.As(err, &ge) {
				return &exitError{code: ge.Code, err: ge.Err}
			}
			return err
		},
	}
}
