// Package workloads describes what load a run offers and turns that
// description into the pieces the generator needs: a vegeta Pacer whose
// schedule is a pure function of the request index (so each request's
// intended send time is known) and a Targeter that draws request classes and
// service times from a seeded random source.
//
// A Spec is plain data with yaml and json tags; WithDefaults returns a copy
// with zero values filled in and Validate reports the first problem with the
// name of the offending field.
package workloads
