package docker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/docker/docker/client"
)

// Client is a connection to the Docker Engine.
type Client struct {
	api *client.Client
	// ServerVersion and APIVersion describe the daemon, for the results.
	ServerVersion, APIVersion string
}

// ConnectTimeout bounds Connect's first exchange with the daemon.
const ConnectTimeout = 5 * time.Second

// Connect reaches the Docker Engine named by the environment (DOCKER_HOST,
// or the default socket) and checks that it answers. The error says where
// it looked and what to do.
func Connect(ctx context.Context) (*Client, error) {
	api, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if _, err := api.Ping(ctx); err != nil {
		api.Close()
		host := os.Getenv("DOCKER_HOST")
		if host == "" {
			host = client.DefaultDockerHost
		}
		return nil, fmt.Errorf("docker: no Docker daemon answers at %s (%v); start it (systemctl start docker), or set DOCKER_HOST, or use --driver local", host, err)
	}
	v, err := api.ServerVersion(ctx)
	if err != nil {
		api.Close()
		return nil, fmt.Errorf("docker: server version: %w", err)
	}
	return &Client{api: api, ServerVersion: v.Version, APIVersion: api.ClientVersion()}, nil
}

// Close releases the connection.
func (c *Client) Close() error { return c.api.Close() }
