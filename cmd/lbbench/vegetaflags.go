package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lbbench/lbbench/loadgen"
)

// vegetaUnsupported are "vegeta attack" flags lbbench attack does not
// take, with why or what to use instead.
var vegetaUnsupported = map[string]string{
	"chunked":         "bodies are sent with their length",
	"cert":            "client certificates are not supported",
	"key":             "client certificates are not supported",
	"root-certs":      "give --insecure, or add the CA to the system's roots",
	"http2":           "lbbench speaks HTTP/1.1, what the workers and proxies measured here speak",
	"h2c":             "lbbench speaks HTTP/1.1, what the workers and proxies measured here speak",
	"lazy":            "targets are read before the attack starts",
	"workers":         "the workload's connections (--connections) and its in-flight cap (--max-in-flight) set the concurrency",
	"max-workers":     "the in-flight cap is --max-in-flight",
	"max-connections": "--connections is the number of connections lbbench opens",
	"redirects":       "redirects are not followed: a 3xx is the answer measured",
	"proxy-header":    "lbbench connects to its target directly",
	"laddr":           "lbbench connects from the system's choice of address",
	"unix-socket":     "attack a TCP address (topologies with a Unix-socket front are lbbench run's)",
	"prometheus-addr": "use --live for a JSON line of live figures a second",
	"dns-ttl":         "the target's address is resolved once",
	"session-tickets": "TLS session resumption is not supported",
	"connect-to":      "give the address in the target URL",
	"resolvers":       "the target's address is resolved by the system's resolver",
}

// respellVegeta rewrites a command line of attack written as "vegeta
// attack" writes it, with Go's flag package conventions, into lbbench's:
// a single-dash long flag (-rate=50/1s, -duration 5s) becomes its double-
// dash form, and vegeta's -format (the targets' format) becomes
// --targets-format. vegeta reports that it did so: the caller then gives the
// command line vegeta's defaults too (its results encoding unless --format
// was given). args are the command's arguments after its name; fs is its
// flag set. A single-dash vegeta flag lbbench does not take is an error
// that says so and why.
func respellVegeta(fs *pflag.FlagSet, args []string) (out []string, vegeta bool, err error) {
	out = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		name, hasValue := flagName(a)
		if name == "" {
			out = append(out, a) // an argument, "-" or a shorthand cluster
			continue
		}
		single := !strings.HasPrefix(a, "--")
		if single {
			if name == "format" {
				name = "targets-format"
			}
			if why, ok := vegetaUnsupported[name]; ok && fs.Lookup(name) == nil {
				return nil, false, fmt.Errorf("attack: -%s is a vegeta attack flag lbbench does not take: %s", name, why)
			}
			f := lookup(fs, name)
			if f == nil {
				return nil, false, fmt.Errorf("attack: unknown flag -%s (lbbench attack --help lists its flags; vegeta's spellings -rate, -duration, -targets, -format, -header, -body, -name, -timeout, -connections, -keepalive, -max-body, -output and -insecure are taken)", name)
			}
			vegeta = true
			a = "--" + name + a[1+len(strings.SplitN(a[1:], "=", 2)[0]):]
		}
		out = append(out, a)
		if f := lookup(fs, name); f != nil && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			out = append(out, args[i]) // the flag's value, whatever it looks like
		}
	}
	return out, vegeta, nil
}

// flagName is the long flag a names ("rate" for -rate, --rate or
// -rate=5), and whether a carries its value after "=". It is "" for an
// argument, "-", "--x" of one letter, or a single-dash shorthand of one
// letter (-o, -H) whose value, if any, pflag reads itself.
func flagName(a string) (name string, hasValue bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", false
	}
	body := strings.TrimPrefix(a[1:], "-")
	name, _, hasValue = strings.Cut(body, "=")
	if !strings.HasPrefix(a, "--") && len(name) == 1 {
		return "", false
	}
	return name, hasValue
}

// lookup finds a long flag by name through fs's normalization (the
// aliases attack registers).
func lookup(fs *pflag.FlagSet, name string) *pflag.Flag {
	if n := fs.GetNormalizeFunc(); n != nil {
		name = string(n(fs, name))
	}
	return fs.Lookup(name)
}

// attackAliases are vegeta's names of attack's flags.
var attackAliases = map[string]string{"output": "out"}

// normalizeAttack maps vegeta's names of attack's flags to lbbench's.
func normalizeAttack(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := attackAliases[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// rootArgs is the command line the root command parses: args as given,
// except that an attack command line in vegeta's spelling is respelled
// (respellVegeta) and, unless it names a results format, gets vegeta's
// encoding, as "vegeta attack" would write.
func rootArgs(root *cobra.Command, args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "attack" {
		return args, nil
	}
	cmd, _, err := root.Find(args[:1])
	if err != nil {
		return args, nil
	}
	fs := cmd.Flags()
	rest, vegeta, err := respellVegeta(fs, args[1:])
	if err != nil {
		return nil, err
	}
	if vegeta && !hasFlag(fs, rest, "format") {
		rest = append([]string{"--format", loadgen.FormatVegeta}, rest...)
	}
	return append([]string{args[0]}, rest...), nil
}

// hasFlag says whether the double-dash flag name appears in args before a
// "--".
func hasFlag(fs *pflag.FlagSet, args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if n, _ := flagName(a); strings.HasPrefix(a, "--") && lookup(fs, n) != nil && lookup(fs, n).Name == name {
			return true
		}
	}
	return false
}
