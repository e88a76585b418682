package shellwords

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "  a  b\tc\n", want: []string{"a", "b", "c"}},
		{in: `gunicorn -b 127.0.0.1:{port} 'app:create_app()'`, want: []string{"gunicorn", "-b", "127.0.0.1:{port}", "app:create_app()"}},
		{in: `sh -c 'exec srv --port {port}'`, want: []string{"sh", "-c", "exec srv --port {port}"}},
		{in: `a "b c" d`, want: []string{"a", "b c", "d"}},
		{in: `"a\"b\\c\d$"`, want: []string{`a"b\c\d$`}},
		{in: `a\ b`, want: []string{"a b"}},
		{in: `''`, want: []string{""}},
		{in: `x""y`, want: []string{"xy"}},
		{in: "a \\\nb", want: []string{"a", "b"}},
		{in: `'a`, wantErr: "unterminated single quote at byte 0"},
		{in: `a "b`, wantErr: "unterminated double quote at byte 2"},
		{in: `a\`, wantErr: "command ends with a backslash"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Split(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Split(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Split(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a b", `'x y' "z\"w"`, `a\ b\`, "\"\\\n\"", "{port} {fd}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		// Quoting every word with single quotes and splitting again gives
		// the same words.
		var b strings.Builder
		for _, w := range words {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "' ")
		}
		again, err := Split(b.String())
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("Split(%q) = %q; requoted %q splits to %q, %v", s, words, b.String(), again, err)
		}
		// Without quotes or backslashes only spaces, tabs and newlines
		// separate words: not the other white space strings.Fields knows
		// (\v, \f, \r, U+0085, U+00A0, U+2000 and the rest of Unicode's).
		blank := func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
		if !strings.ContainsAny(s, `'"\`) && !slices.Equal(words, strings.FieldsFunc(s, blank)) {
			t.Fatalf("Split(%q) = %q, want the fields", s, words)
		}
	})
}
