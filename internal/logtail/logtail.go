// Package logtail takes the last lines of a process's output, for the
// error messages and failure records that name what a dead or unready
// process said last. Every driver and the generator processes use it, so
// a log tail reads the same wherever it comes from.
package logtail

import (
	"os"
	"strings"
)

// DefaultLines is how many lines a tail keeps unless told otherwise.
const DefaultLines = 10

// Lines returns the last n lines of text (a final newline ends the last
// line, it does not start an empty one); nil for empty text.
func Lines(text string, n int) []string {
	text = strings.TrimRight(text, "\n")
	if text == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(text, "\n")
	return lines[max(0, len(lines)-n):]
}

// File returns the last n lines of the file at path; nil when it cannot be
// read or is empty.
func File(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return Lines(string(b), n)
}

// Format lays lines out for an error message: a line "  title:" and the
// lines indented under it, after a newline; "" when there are none.
func Format(title string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "\n  " + title + ":\n    " + strings.Join(lines, "\n    ")
}
