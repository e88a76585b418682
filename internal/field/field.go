// Package field holds the one error type lbbench uses for a mistake in its
// input: a scenario, a workload, a variant, a claim or a flag. Every layer
// that validates input returns a *field.Error (re-exported as
// scenario.FieldError) naming the field by its dotted YAML path, so the
// scenario loader can walk the path back to a file and line.
package field

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error is a problem tied to a field, named by its dotted YAML path such as
// "workload.classes[1].weight", and, once the loader knows them, to the file
// and line it came from. The zero File and Line mean unknown.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats the problem as "file:line: field: message", leaving out
// the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
		if e.Line > 0 {
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteString(":")
		}
		b.WriteString(" ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errorf returns an *Error for the field at path with a formatted message.
func Errorf(path, format string, args ...any) error {
	return &Error{Field: path, Msg: fmt.Sprintf(format, args...)}
}

// Prefix places err under prefix: an *Error's field path gets prefix in
// front ("variants[2]" and "proxy.policy" give "variants[2].proxy.policy");
// any other error becomes an *Error on prefix itself. A nil err stays nil.
func Prefix(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		out := *fe
		switch {
		case prefix == "":
		case out.Field == "":
			out.Field = prefix
		default:
			out.Field = prefix + "." + out.Field
		}
		return &out
	}
	return &Error{Field: prefix, Msg: err.Error()}
}

// MaxNameLen bounds a name used in file names (variants, classes, clients,
// pools, the scenario): room for a readable name inside one path element
// (255 bytes on Linux) next to the run number and role lbbench adds.
const MaxNameLen = 64

// Name checks a name that lbbench puts into file and directory names: 1 to
// MaxNameLen characters from A-Z, a-z, 0-9, '.', '_', '-' and '@' (which
// lbbench itself uses for a baseline build's variants, "rp@base"),
// starting with a letter or digit, so it can never hold a path separator,
// start a hidden file, name "..", or start a spreadsheet formula.
func Name(path, name string) error {
	if name == "" {
		return Errorf(path, "is required")
	}
	if len(name) > MaxNameLen {
		return Errorf(path, "%q is longer than %d characters (it is used in file names)", name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-' && c != '@') {
			return Errorf(path, "%q: a name may hold only A-Z, a-z, 0-9, '.', '_', '-' and '@', and must start with a letter or digit (it is used in file names)", name)
		}
	}
	return nil
}
