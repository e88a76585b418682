package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/driver/kube"
)

func newImageCmd() *cobra.Command {
	var exe, repo, tag, archive string
	var pause bool
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build lbbench's OCI image and push it or write it to an archive",
		Long: `Image builds the OCI image "lbbench run --driver kubernetes" runs: the static
lbbench binary and nothing else (FROM scratch), run as user 65534, tagged
with the binary's content hash so an unchanged binary keeps its tag. Nothing
is pulled. With --image-repo it pushes the image to that registry (the
credentials of docker login's config; a registry on localhost or 127.0.0.1
over plain HTTP). With --archive it writes an image archive instead (the
layout docker save writes, named --image-repo or ` + kube.DefaultImageRepo + `) for a
cluster's runtime to import, for example "ctr -n k8s.io images import
--snapshotter native FILE" on every node. It prints the image's reference
and digest: give the reference to "lbbench run --driver kubernetes --image".

--pause builds a pod sandbox ("pause") image from the same binary: its
command is "lbbench idle", which waits for SIGTERM. The test cluster of
scripts/k8s-testbed.sh runs it, since no pause image can be pulled there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if repo == "" && archive == "" {
				return errors.New("image: give --image-repo REGISTRY/NAME to push the image, or --archive FILE to write it")
			}
			if exe == "" {
				var err error
				if exe, err = os.Executable(); err != nil {
					return err
				}
			}
			var args []string
			if pause {
				args = []string{"idle"}
			}
			img, err := kube.BuildImage(exe, args, repo, tag)
			if err != nil {
				return err
			}
			if archive != "" {
				err = img.WriteArchive(archive)
			} else {
				err = img.Push()
			}
			if err != nil {
				return err
			}
			digest, err := img.Digest()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", img.Ref, digest)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&repo, "image-repo", "", "push the image to `REGISTRY/NAME` (with --archive: only name it so)")
	f.StringVar(&archive, "archive", "", "write an image archive to `FILE` instead of pushing")
	f.StringVar(&tag, "tag", "", "the image's `TAG` (default: the first 16 hex digits of the binary's SHA-256)")
	f.StringVar(&exe, "exe", "", "the static lbbench binary to put in the image (`PATH`; default: this one)")
	f.BoolVar(&pause, "pause", false, "build a pod sandbox image (command: lbbench idle)")
	return cmd
}
