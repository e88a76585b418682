package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// Client is a connection to one cluster's API server, in one namespace.
type Client struct {
	cs        kubernetes.Interface
	cfg       *rest.Config
	Namespace string
	// Server is the API server's address and Version its version.
	Server, Version string
}

// Connect reads the cluster's address and credentials from kubeconfig
// when it is set, else from $KUBECONFIG, else in-cluster (inside a pod),
// else from ~/.kube/config, and checks that the API server answers. An
// empty namespace is the kubeconfig context's, else "default".
func Connect(ctx context.Context, kubeconfig, namespace string) (*Client, error) {
	cfg, ns, err := loadConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = ns
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: the API server at %s does not answer: %w", cfg.Host, err)
	}
	// A user allowed only the namespace's own objects may not read the
	// namespace itself: then creating the first pod tells whether it is.
	if _, err := cs.CoreV1().Namespaces().Get(ctx, namespace, getOpts); err != nil && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("kubernetes: namespace %q: %w", namespace, err)
	}
	return &Client{cs: cs, cfg: cfg, Namespace: namespace, Server: cfg.Host, Version: v.GitVersion}, nil
}

func loadConfig(kubeconfig string) (*rest.Config, string, error) {
	if kubeconfig == "" && os.Getenv("KUBECONFIG") == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			ns := "default"
			if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
				ns = string(b)
			}
			return cfg, ns, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		where := kubeconfig
		if where == "" {
			where = os.Getenv("KUBECONFIG")
		}
		if where == "" {
			home, _ := os.UserHomeDir()
			where = filepath.Join(home, ".kube", "config")
		}
		return nil, "", fmt.Errorf("kubernetes: no cluster configuration (looked at %s; give --kubeconfig or set KUBECONFIG): %w", where, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	return cfg, ns, nil
}

// Exec runs cmd in container of pod, with stdin (when not nil) as its
// standard input, copying its output to stdout and stderr, and returns its
// exit code. When ctx ends first it closes the stream and returns ctx's
// error.
func (c *Client) Exec(ctx context.Context, pod, container string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req := c.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(c.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: cmd,
			Stdin: stdin != nil, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return -1, fmt.Errorf("kubernetes: exec in %s: %w", pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.cfg, http.MethodPost, req.URL())
	if err != nil {
		return -1, fmt.Errorf("kubernetes: exec in %s: %w", pod, err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool { return true })
	if err != nil {
		return -1, fmt.Errorf("kubernetes: exec in %s: %w", pod, err)
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var exit utilexec.CodeExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		return exit.Code, nil
	case ctx.Err() != nil:
		return -1, ctx.Err()
	}
	return -1, fmt.Errorf("kubernetes: exec %v in %s: %w", cmd, pod, err)
}
