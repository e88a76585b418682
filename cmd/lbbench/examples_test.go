package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/internal/shellwords"
)

// TestEveryCommandHasExamples: every command a user types has an
// "Examples:" section, and every lbbench command line in it names a real
// command with flags it has and arguments it takes.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, "#")
			for _, part := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '&' || r == ';' || r == '(' || r == ')' || r == '>' }) {
				words, err := shellwords.Split(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(part), "<")))
				if err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
					continue
				}
				if len(words) == 0 || words[0] != "lbbench" {
					continue
				}
				checkExample(t, newRootCmd(), c.CommandPath(), words[1:])
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// checkExample parses args as root would, without running the command.
func checkExample(t *testing.T, root *cobra.Command, where string, args []string) {
	t.Helper()
	args, err := rootArgs(root, args) // as main does: vegeta's spellings too
	if err != nil {
		t.Errorf("%s: example lbbench %s: %v", where, strings.Join(args, " "), err)
		return
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Errorf("%s: example lbbench %s: %v", where, strings.Join(args, " "), err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: example lbbench %s: %v", where, strings.Join(args, " "), err)
		return
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			t.Errorf("%s: example lbbench %s: %v", where, strings.Join(args, " "), err)
		}
	}
}

// TestHelpListsExitStatuses: the root help and run's help list every exit
// status a job returns.
func TestHelpListsExitStatuses(t *testing.T) {
	root := newRootCmd()
	run, _, _ := root.Find([]string{"run"})
	for _, c := range []*cobra.Command{root, run} {
		for _, want := range []string{"Exit status:", "  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  130 "} {
			if !strings.Contains(c.Long, want) {
				t.Errorf("%s --help lacks %q", c.CommandPath(), want)
			}
		}
	}
}
