package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/driver/docker"
	"github.com/lbbench/lbbench/driver/kube"
)

func newCleanCmd() *cobra.Command {
	var all bool
	var session string
	var images bool
	var drv string
	var k kubeFlags
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the containers, networks and volumes lbbench runs left behind",
		Long: `Clean removes the Docker containers (running or not), networks and volumes
labelled lbbench.managed=true whose lbbench process is no longer running: what
a run killed outright (kill -9, a crash, a lost machine) left behind. Runs in
progress keep theirs unless --all is given. "lbbench run --driver docker"
does the same at its start. Images (lbbench:<content hash>) are a cache and
are kept unless --images is given.

With --driver kubernetes it deletes, at once, the pods, services and config
maps labelled lbbench.managed=true in the namespace (--namespace, or the
kubeconfig's) whose lbbench process is gone, or all of them with --all: what
a killed "lbbench run --driver kubernetes" left on the cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch drv {
			case "kubernetes":
				if images {
					return fmt.Errorf("--images is for --driver docker: a cluster's images belong to its nodes' runtimes")
				}
				c, err := kube.Connect(cmd.Context(), k.kubeconfig, k.namespace)
				if err != nil {
					return err
				}
				rep, err := c.Clean(cmd.Context(), driver.CleanFilter{All: all, Session: session})
				if rep.Empty() {
					fmt.Fprintln(cmd.OutOrStdout(), "lbbench clean: nothing to remove")
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "lbbench clean: removed %s\n", rep)
				}
				return err
			case "docker":
			default:
				return fmt.Errorf("--driver must be docker or kubernetes, got %q", drv)
			}
			c, err := docker.Connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			rep, err := c.Clean(cmd.Context(), driver.CleanFilter{All: all, Session: session})
			printClean(cmd.OutOrStdout(), rep)
			if err != nil || !images {
				return err
			}
			tags, err := c.RemoveImages(cmd.Context())
			if len(tags) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "lbbench clean: removed %d images: %s\n", len(tags), strings.Join(tags, ", "))
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also remove what lbbench runs still in progress use")
	cmd.Flags().BoolVar(&images, "images", false, "also remove lbbench's images that no container uses")
	cmd.Flags().StringVar(&drv, "driver", "docker", "what to clean: docker (containers, networks, volumes) or kubernetes (pods, services, config maps)")
	cmd.Flags().StringVar(&k.kubeconfig, "kubeconfig", "", "with --driver kubernetes, the cluster's kubeconfig `FILE` (default: $KUBECONFIG, in-cluster, then ~/.kube/config)")
	cmd.Flags().StringVar(&k.namespace, "namespace", "", "with --driver kubernetes, the namespace to clean (default: the kubeconfig context's, else default)")
	cmd.Flags().StringVar(&session, "session", "", "only what one lbbench run made (its session id, printed at its start and recorded in its results)")
	return cmd
}

func printClean(w io.Writer, rep driver.Objects) {
	if rep.Empty() {
		fmt.Fprintln(w, "lbbench clean: nothing to remove")
		return
	}
	for _, k := range rep {
		if len(k.Names) > 0 {
			fmt.Fprintf(w, "lbbench clean: removed %d %s: %s\n", len(k.Names), k.Kind, strings.Join(k.Names, ", "))
		}
	}
}
