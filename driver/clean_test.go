package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
)

// memKind is a kind of object held in memory: a unit test of Clean's
// logic (the docker and kube packages test it on their substrates).
type memKind struct {
	name      string
	objs      []Object
	listErr   error
	removeErr map[string]error
}

func (k *memKind) Name() string { return k.name }

func (k *memKind) List(_ context.Context, session string) ([]Object, error) {
	if k.listErr != nil {
		return nil, k.listErr
	}
	var out []Object
	for _, o := range k.objs {
		if o.Labels[LabelManaged] == "true" && (session == "" || o.Labels[LabelSession] == session) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (k *memKind) Remove(_ context.Context, o Object) error {
	if err := k.removeErr[o.Name]; err != nil {
		return fmt.Errorf("remove %s: %w", o.Name, err)
	}
	for i, x := range k.objs {
		if x.Name == o.Name {
			k.objs = append(k.objs[:i], k.objs[i+1:]...)
			break
		}
	}
	return nil
}

func TestClean(t *testing.T) {
	host, _ := os.Hostname()
	dead := host + "/999999999/1"
	mine := Owner("/")
	obj := func(name, session, owner string) Object {
		return Object{Name: name, ID: name, Labels: Labels(session, owner, "")}
	}
	kinds := func() (*memKind, *memKind) {
		return &memKind{name: "boxes", objs: []Object{obj("dead-box", "s1", dead), obj("mine-box", "s2", mine), {Name: "foreign", Labels: map[string]string{LabelOwner: dead}}}},
			&memKind{name: "nets", objs: []Object{obj("dead-net", "s1", dead), obj("other-net", "s3", "elsewhere/1/1")}}
	}
	for _, tc := range []struct {
		name    string
		f       CleanFilter
		want    string
		wantErr string
		setup   func(a, b *memKind)
	}{
		{name: "stale only", want: "1 boxes (dead-box), 1 nets (dead-net)"},
		{name: "all", f: CleanFilter{All: true}, want: "2 boxes (dead-box, mine-box), 2 nets (dead-net, other-net)"},
		{name: "one session", f: CleanFilter{All: true, Session: "s2"}, want: "1 boxes (mine-box)"},
		{name: "first list fails", setup: func(a, _ *memKind) { a.listErr = errors.New("down") }, want: "nothing", wantErr: "sub: list boxes: down"},
		{name: "later list fails", setup: func(_, b *memKind) { b.listErr = errors.New("down") }, want: "1 boxes (dead-box)", wantErr: "sub: clean: list nets: down"},
		{name: "removal fails", setup: func(a, _ *memKind) { a.removeErr = map[string]error{"dead-box": errors.New("busy")} }, want: "1 nets (dead-net)", wantErr: "sub: clean: remove dead-box: busy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := kinds()
			if tc.setup != nil {
				tc.setup(a, b)
			}
			l := Labelled{Driver: "sub", OwnerSep: "/", Kinds: []Kind{a, b}}
			rep, err := l.Clean(context.Background(), tc.f)
			if got := rep.String(); got != tc.want {
				t.Errorf("removed %s, want %s", got, tc.want)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			left, err := l.Managed(context.Background(), "")
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if err == nil && left.Count()+rep.Count() != 4 {
				t.Errorf("%s left and %s removed: want 4 managed objects in all", left, rep)
			}
		})
	}
}

func TestPortCounter(t *testing.T) {
	var c PortCounter
	for _, tc := range []struct{ n, want int }{{3, FirstPort}, {2, FirstPort + 3}, {LastPort - FirstPort - 5, FirstPort + 5}, {1, FirstPort}} {
		if got, err := c.Ports(tc.n); err != nil || got != tc.want {
			t.Errorf("Ports(%d) = %d, %v; want %d", tc.n, got, err, tc.want)
		}
	}
}
