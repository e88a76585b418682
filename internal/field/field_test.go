package field

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  Error
		want string
	}{
		{"everything", Error{File: "s.yaml", Line: 7, Field: "workload.rate", Msg: "must be > 0"}, "s.yaml:7: workload.rate: must be > 0"},
		{"no line", Error{File: "s.yaml", Field: "name", Msg: "is required"}, "s.yaml: name: is required"},
		{"no file", Error{Field: "name", Msg: "is required"}, "name: is required"},
		{"message only", Error{Msg: "empty scenario"}, "empty scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	err := Prefix("variants[2]", Errorf("proxy.policy", "unknown policy %q", "x"))
	var fe *Error
	if !errors.As(err, &fe) || fe.Field != "variants[2].proxy.policy" || fe.Msg != `unknown policy "x"` {
		t.Fatalf("Prefix = %#v", err)
	}
	if got := Prefix("workers", errors.New("boom")); got.Error() != "workers: boom" {
		t.Errorf("plain error: %v", got)
	}
	if got := Prefix("a", &Error{Msg: "m"}); got.(*Error).Field != "a" {
		t.Errorf("empty field: %v", got)
	}
	if Prefix("a", nil) != nil {
		t.Error("nil error must stay nil")
	}
	inner := &Error{Field: "x", Msg: "m"}
	_ = Prefix("outer", inner)
	if inner.Field != "x" {
		t.Error("Prefix changed its argument")
	}
}

func TestName(t *testing.T) {
	for _, ok := range []string{"rp", "least_conn-2", "rp@base", "v1.2", "A9"} {
		if err := Name("variants[0].name", ok); err != nil {
			t.Errorf("Name(%q): %v", ok, err)
		}
	}
	long := strings.Repeat("a", MaxNameLen+1)
	for _, bad := range []string{"", "a/../../x", "..", ".hidden", "-x", "@x", "=cmd", "a b", "a\\b", "a\x00b", "é", long} {
		err := Name("variants[0].name", bad)
		if err == nil {
			t.Errorf("Name(%q) accepted", bad)
			continue
		}
		if !strings.HasPrefix(err.Error(), "variants[0].name: ") {
			t.Errorf("Name(%q): %v does not name the field", bad, err)
		}
	}
}
