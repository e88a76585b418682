package driver

import (
	"fmt"
	"strings"

	"github.com/lbbench/lbbench/internal/files"
	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/topologies"
)

// Subst returns the function that puts dir, a process's working directory
// as the process sees it, in place of topologies.DirPlaceholder in its
// arguments, stats URL and files.
func Subst(dir string) func(string) string {
	return func(s string) string { return strings.ReplaceAll(s, topologies.DirPlaceholder, dir) }
}

// SubstAll applies subst (Subst's) to each of args, in a new slice.
func SubstAll(subst func(string) string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = subst(a)
	}
	return out
}

// WritePlanFiles writes p's files (engine configurations) into hostDir,
// the process's working directory on this machine, each with its
// placeholder filled by subst. A file name that would leave hostDir is
// refused.
func WritePlanFiles(hostDir string, p topologies.Process, subst func(string) string) error {
	for _, f := range p.Files {
		path, err := safepath.Join(hostDir, f.Name)
		if err != nil {
			return err
		}
		if err := files.Write(path, []byte(subst(f.Content))); err != nil {
			return fmt.Errorf("%s: %w", p.Role, err)
		}
	}
	return nil
}
