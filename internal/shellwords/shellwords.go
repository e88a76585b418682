// Package shellwords splits a command line into words as a POSIX shell
// would, without expanding anything: the form of workers.target.exec.
package shellwords

import (
	"errors"
	"fmt"
	"strings"
)

// Split splits s into words as a POSIX shell would, without
// expanding anything: whitespace separates words; single quotes keep
// everything literally; double quotes keep everything but a backslash
// before one of $ ` " \ or a newline; elsewhere a backslash keeps the next
// character. It reports an unterminated quote or a trailing backslash.
func Split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word is open, perhaps empty ("")
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("command ends with a backslash")
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i])
				in = true
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote at byte %d", i)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			start := i
			for i++; ; i++ {
				if i == len(s) {
					return nil, fmt.Errorf("unterminated double quote at byte %d", start)
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				cur.WriteByte(s[i])
			}
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
