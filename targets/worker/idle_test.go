package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/lbbench/lbbench/internal/testkit"
	"github.com/lbbench/lbbench/targets/worker"
)

// ask sends one GET on c and returns the response's X-Worker.
func ask(t *testing.T, c net.Conn, br *bufio.Reader, path string, keep bool) string {
	t.Helper()
	conn := "keep-alive"
	if !keep {
		conn = "close"
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: %s\r\n\r\n", path, conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	return resp.Header.Get(testkit.WorkerHeader)
}

// TestAcceptIdle runs two single-task workers with AcceptWhen idle on one
// shared socket, for every accept strategy and socket family: while one
// is busy with a long request (on a fresh connection, or on a keep-alive
// connection that already served one), every new connection must land on
// the other, and the busy one's connection must still be served by it
// once it frees.
func TestAcceptIdle(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		for _, accept := range worker.AcceptStrategies() {
			for _, how := range []string{"fresh", "keepalive"} {
				t.Run(network+"/"+accept+"/"+how, func(t *testing.T) {
					// Each case has its own socket and workers, and
					// mostly waits for its long request.
					t.Parallel()
					if how == "keepalive" && network == "tcp" && accept == worker.AcceptBlocking {
						t.Skip("known limitation (see package doc): a blocking TCP accept4 already in progress when a keep-alive request makes the worker busy cannot be recalled")
					}
					if testing.Short() && accept != worker.DefaultAccept {
						t.Skip("-short: the default accept strategy only")
					}
					testAcceptIdle(t, network, accept, how == "keepalive")
				})
			}
		}
	}
}

// testAcceptIdle makes one worker busy with a long request, on a fresh
// connection or on a keep-alive connection that had already served one.
func testAcceptIdle(t *testing.T, network, accept string, keepAlive bool) {
	fd, addr := socketFD(t, network)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 2)
	fd2, err := syscall.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	for i, wfd := range []int{fd, fd2} {
		ln, err := worker.ListenFD(wfd, accept)
		if err != nil {
			t.Fatal(err)
		}
		w, err := worker.New(worker.Config{Index: i, Concurrency: 1, Accept: accept, AcceptWhen: worker.AcceptIdle})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			err := w.Serve(ctx, ln, nil)
			if err != nil {
				t.Log("serve:", err)
			}
			errc <- err
		}()
	}
	defer func() {
		cancel()
		for range 2 {
			<-errc
		}
	}()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	ka, kbr := dial()
	defer ka.Close()
	busy := ""
	if keepAlive {
		busy = ask(t, ka, kbr, "/work?ms=1", true)
	}
	// The long request makes that worker busy.
	long := make(chan string, 1)
	go func() {
		ka.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(ka, "GET /work?ms=1500 HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(kbr, nil)
		if err != nil {
			long <- "error: " + err.Error()
			return
		}
		resp.Body.Close()
		long <- resp.Header.Get(testkit.WorkerHeader)
	}()
	time.Sleep(200 * time.Millisecond)
	per := map[string]int{}
	var slowest time.Duration
	for i := range 20 {
		t0 := time.Now()
		c, br := dial()
		who := ask(t, c, br, "/work?ms=5", false)
		per[who]++
		c.Close()
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Logf("short request %d took %v, worker %s", i, d, who)
		}
		slowest = max(slowest, time.Since(t0))
	}
	t.Logf("slowest short request %v", slowest)
	select {
	case got := <-long:
		t.Fatalf("long request done (%s) before the 20 short ones: it did not keep its worker busy throughout", got)
	default:
	}
	got := <-long
	if keepAlive && got != busy {
		t.Errorf("long request on the keep-alive connection answered by %q, want %s", got, busy)
	}
	busy = got
	if per[busy] != 0 || len(per) != 1 {
		t.Errorf("new connections per worker %v while worker %s was busy: want all on the idle one", per, busy)
	}
	if got := ask(t, ka, kbr, "/work?ms=1", true); got != busy {
		t.Errorf("keep-alive connection served by %s after the long request, want %s", got, busy)
	}
	t.Logf("busy worker %s; new connections per worker %v", busy, per)
}
