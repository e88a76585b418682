package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Object is one labelled object of a driver's substrate.
type Object struct {
	// Name is how reports name it; Kind.Remove gets it back.
	Name string
	// ID, when the substrate has one, is what Kind.Remove removes.
	ID     string
	Labels map[string]string
}

// Kind is one kind of object a driver labels (Labels) on its substrate:
// containers, networks, volumes; pods, services, config maps. The docker
// and kubernetes drivers implement it for each kind they create.
type Kind interface {
	// Name is the kind in the plural, as reports print it ("containers").
	Name() string
	// List returns the objects labelled LabelManaged=true, only those of
	// session when it is not empty.
	List(ctx context.Context, session string) ([]Object, error)
	// Remove removes o at once (forced, no grace period). An object that
	// is already gone is no error. The error names o.
	Remove(ctx context.Context, o Object) error
}

// Labelled is everything a driver labels on its substrate: its kinds, in
// the order Clean removes them (containers before the networks and
// volumes they use).
type Labelled struct {
	// Driver prefixes the errors ("docker").
	Driver string
	// OwnerSep is the separator of the owner labels (see Owner).
	OwnerSep string
	Kinds    []Kind
}

// CleanFilter selects what Clean removes.
type CleanFilter struct {
	// All removes objects whose lbbench process still runs, too.
	All bool
	// Session, when set, limits Clean to one driver's objects.
	Session string
}

// Names are the names of one kind of labelled objects.
type Names struct {
	Kind  string
	Names []string
}

// Objects lists labelled objects by kind, in the order of the driver's
// kinds.
type Objects []Names

// Empty reports whether o names no object.
func (o Objects) Empty() bool {
	return !slices.ContainsFunc(o, func(n Names) bool { return len(n.Names) > 0 })
}

// Count is the number of objects o names.
func (o Objects) Count() int {
	n := 0
	for _, k := range o {
		n += len(k.Names)
	}
	return n
}

// Of returns the names of the objects of kind.
func (o Objects) Of(kind string) []string {
	for _, n := range o {
		if n.Kind == kind {
			return n.Names
		}
	}
	return nil
}

// String is "2 pods (a, b), 1 services (c)", or "nothing".
func (o Objects) String() string {
	var parts []string
	for _, n := range o {
		if len(n.Names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(n.Names), n.Kind, strings.Join(n.Names, ", ")))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Clean removes, kind after kind, the objects labelled LabelManaged=true
// whose owning lbbench process is no longer running (OwnerAlive); with
// f.All, every one of them, including those of runs in progress. It goes
// on past errors and returns them together, except that it stops when the
// first kind cannot be listed.
func (l Labelled) Clean(ctx context.Context, f CleanFilter) (Objects, error) {
	var rep Objects
	var errs []error
	for i, k := range l.Kinds {
		names := Names{Kind: k.Name()}
		list, err := k.List(ctx, f.Session)
		if err != nil {
			if i == 0 {
				return rep, fmt.Errorf("%s: list %s: %w", l.Driver, k.Name(), err)
			}
			errs = append(errs, fmt.Errorf("list %s: %w", k.Name(), err))
		}
		for _, o := range list {
			if !f.All && OwnerAlive(o.Labels[LabelOwner], l.OwnerSep) {
				continue
			}
			if err := k.Remove(ctx, o); err != nil {
				errs = append(errs, err)
				continue
			}
			names.Names = append(names.Names, o.Name)
		}
		rep = append(rep, names)
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("%s: clean: %w", l.Driver, err)
	}
	return rep, nil
}

// Managed lists the objects labelled LabelManaged=true, only those of
// session when it is not empty. It stops at the first error.
func (l Labelled) Managed(ctx context.Context, session string) (Objects, error) {
	var rep Objects
	for _, k := range l.Kinds {
		list, err := k.List(ctx, session)
		if err != nil {
			return rep, err
		}
		names := Names{Kind: k.Name()}
		for _, o := range list {
			names.Names = append(names.Names, o.Name)
		}
		rep = append(rep, names)
	}
	return rep, nil
}
