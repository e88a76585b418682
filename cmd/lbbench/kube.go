package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/lbbench/lbbench/driver/kube"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/loadgen"
)

// kubeFlags are run's flags for --driver kubernetes.
type kubeFlags struct {
	kubeconfig, namespace string
	image, imageRepo      string
	cpus                  map[string]int
	memoryMiB             int64
	shareNode             bool
	serverNode            string
}

func (k *kubeFlags) register(f *pflag.FlagSet) {
	f.StringVar(&k.kubeconfig, "kubeconfig", "", "with --driver kubernetes, the cluster's kubeconfig `FILE` (default: $KUBECONFIG, in-cluster, then ~/.kube/config)")
	f.StringVar(&k.namespace, "namespace", "", "with --driver kubernetes, the namespace of the run's pods (default: the kubeconfig context's, else default)")
	f.StringVar(&k.image, "image", "", "with --driver kubernetes, lbbench's image `REF` as the nodes have it (lbbench image prints it)")
	f.StringVar(&k.imageRepo, "image-repo", "", "with --driver kubernetes, build this binary's image and push it to `REGISTRY/NAME` (instead of --image)")
	f.StringToIntVar(&k.cpus, "pod-cpus", nil, fmt.Sprintf("with --driver kubernetes, whole CPUs per pod by role, request = limit (Guaranteed QoS), as `ROLE=N`: server (workers and proxy share them), generator (default server=%d,generator=%d)", kube.DefaultCPUs[kube.RoleServer], kube.DefaultCPUs[kube.RoleGenerator]))
	f.Int64Var(&k.memoryMiB, "pod-memory-mib", kube.DefaultMemoryMiB, "with --driver kubernetes, each pod's memory in MiB (request = limit)")
	f.BoolVar(&k.shareNode, "kube-share-node", false, "with --driver kubernetes, let the generators run on the server's node when it is the only one (they then share its CPUs)")
	f.StringVar(&k.serverNode, "server-node", "", "with --driver kubernetes, the `NODE` the server pod runs on (default: the first ready node by name; the generators go to the others)")
}

// newKubeDriver connects to the cluster and makes the kubernetes driver.
func newKubeDriver(ctx context.Context, o runOptions, exe, logDir, raw string, live func(loadgen.LiveStats), stderr io.Writer) (harness.Driver, func(), error) {
	c, err := kube.Connect(ctx, o.kube.kubeconfig, o.kube.namespace)
	if err != nil {
		return nil, nil, err
	}
	d, err := kube.New(ctx, c, exe, logDir, kube.WithImage(o.kube.image), kube.WithImageRepo(o.kube.imageRepo), kube.WithGenerators(o.generators), kube.WithRaw(raw),
		kube.WithPodCPUs(o.kube.cpus), kube.WithPodMemoryMiB(o.kube.memoryMiB), kube.WithShareNode(o.kube.shareNode), kube.WithServerNode(o.kube.serverNode),
		kube.WithEngineImages(o.engineImages), kube.WithLive(live), kube.WithLog(driverLog(stderr, "kubernetes")))
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stderr, "lbbench: kubernetes: %s (%s), namespace %s, image %s, session %s; %s\n", c.Server, c.Version, c.Namespace, d.Image(), d.Session(), d.Placement())
	return d, func() {}, nil
}
