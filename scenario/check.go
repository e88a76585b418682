package scenario

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/lbbench/lbbench/internal/field"
	"github.com/lbbench/lbbench/workloads"
)

// The checks in this file are generic: they walk the YAML document against
// the yaml tags of the Go type it decodes into, so a field another part of
// lbbench adds is covered by them without any change here.

var (
	durationType = reflect.TypeFor[time.Duration]()
	rateType     = reflect.TypeFor[workloads.Rate]()
)

// checkNode walks n against type t and reports the first key that t has no
// field for (with the YAML path, the valid keys and the nearest one), and
// the first bare number given for a duration. path is the YAML path of n.
func checkNode(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		// Aliases repeat a node already checked where it is anchored.
		return nil
	}
	if t == durationType {
		if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
			return &field.Error{Line: n.Line, Field: path,
				Msg: fmt.Sprintf("a duration needs a unit: write %ss (or ms, m, h), not the bare number %s", n.Value, n.Value)}
		}
		return nil
	}
	if t == rateType && n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if _, err := workloads.ParseRate(n.Value); err != nil {
			return &field.Error{Line: n.Line, Field: path, Msg: err.Error()}
		}
		return nil
	}
	if t != rateType && reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type mismatch
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				continue
			}
			sub := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				return unknownKey(k, sub, fields)
			}
			if err := checkNode(v, ft, sub); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			return &field.Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("must be a whole number, got %q", n.Value)}
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			return &field.Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("must be a number, got %q", n.Value)}
		}
		if n.Kind == yaml.ScalarNode {
			if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil || n.Tag == "!!float" {
				if err != nil {
					f = yamlSpecialFloat(n.Value)
				}
				if math.IsNaN(f) || math.IsInf(f, 0) {
					return &field.Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("must be a finite number, got %s", n.Value)}
				}
			}
		}
	}
	return nil
}

// yamlSpecialFloat reads YAML's .nan and .inf spellings.
func yamlSpecialFloat(s string) float64 {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case ".nan":
		return math.NaN()
	case ".inf":
		return math.Inf(1)
	}
	return 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct t to their field types, inline
// structs included and "-" fields left out.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// unknownKey reports key k, which struct fields has no field for.
func unknownKey(k *yaml.Node, path string, fields map[string]reflect.Type) error {
	keys := make([]string, 0, len(fields))
	for name := range fields {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	msg := fmt.Sprintf("unknown key %q", k.Value)
	if near := nearest(k.Value, keys); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	msg += "; valid keys here: " + strings.Join(keys, ", ")
	return &field.Error{Line: k.Line, Field: path, Msg: msg}
}

// nearest returns the key closest to s by edit distance, if it is close
// enough to be a likely misspelling.
func nearest(s string, keys []string) string {
	best, bestD := "", 1<<30
	for _, k := range keys {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(2, len(s)/3) && bestD < len(s) {
		return best
	}
	return ""
}

// editDistance is the Damerau–Levenshtein (optimal string alignment)
// distance between a and b, so a swap of two letters counts as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// CheckFinite reports the first NaN or infinite float reachable from v; see
// field.Finite.
func CheckFinite(v any, prefix string) error { return field.Finite(v, prefix) }

// multiline are the fields whose text may span lines (and hold tabs).
var multiline = map[string]bool{"description": true, "say": true, "check": true}

// checkText walks every scalar of n, keys included, and refuses what
// would corrupt a request, a file name, the terminal or a report: control
// characters (a CR/LF in a class path once made every request fail while
// the run was "valid"; only newlines and tabs, and only in multiline
// fields), Unicode bidirectional controls (U+202E reorders what the
// terminal, markdown and JUnit show) and invalid UTF-8. path is the YAML
// path of n.
func checkText(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.ScalarNode:
		key := path
		if i := strings.LastIndexAny(key, ".]"); i >= 0 {
			key = key[i+1:]
		}
		if msg := badText(n.Value, multiline[key]); msg != "" {
			return &field.Error{Line: n.Line, Field: path, Msg: msg}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := join(path, k.Value)
			if msg := badText(k.Value, false); msg != "" {
				return &field.Error{Line: k.Line, Field: sub, Msg: "key " + msg}
			}
			if err := checkText(v, sub); err != nil {
				return err
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for i, c := range n.Content {
			sub := path
			if n.Kind == yaml.SequenceNode {
				sub = fmt.Sprintf("%s[%d]", path, i)
			}
			if err := checkText(c, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// badText says what is wrong with s as text in a scenario, or "".
func badText(s string, lines bool) string {
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		switch {
		case lines && (r == '\n' || r == '\t'):
		case unicode.IsControl(r):
			return fmt.Sprintf("%q holds the control character %U (write it escaped if it belongs in a URL: %%%02X)", s, r, r)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Sprintf("%q holds the bidirectional control %U, which reorders how the text shows", s, r)
		}
	}
	return ""
}
