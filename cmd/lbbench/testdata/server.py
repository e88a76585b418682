#!/usr/bin/env python3
"""A small foreign HTTP server for lbbench's exec-target tests.

Standard library only. It serves one request at a time per process:

  /healthz          200 "ok"
  /work?ms=N|us=N   sleeps that long, then 200 "ok"
  anything else     like /work

Where it listens (one of):
  --port P [--host H] [--reuseport]   binds H:P itself (SO_REUSEPORT if asked)
  --unix PATH                         binds a Unix socket itself
  --fd N                              serves an inherited listening socket

With --workers N (N > 1) the process is a pre-fork master: it forks N
children that all accept on the one socket and answer with "X-Worker: i".
Otherwise it answers with "X-Worker: I" only when given --x-worker I, so
that a proxy in front can be left to say which endpoint served.

SIGTERM drains: each process finishes the request it is serving, then
exits 0. A child leaves when its master is gone.
"""

import argparse
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    x_worker = None
    # A connection that sends nothing (an abandoned probe) must not hold
    # this single-threaded server, and so its shutdown, for ever.
    timeout = 2

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/healthz":
            q = urllib.parse.parse_qs(url.query)
            if "ms" in q:
                time.sleep(float(q["ms"][0]) / 1e3)
            elif "us" in q:
                time.sleep(int(q["us"][0]) / 1e6)
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        if self.x_worker is not None:
            self.send_header("X-Worker", str(self.x_worker))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(HTTPServer):
    parent = None

    def service_actions(self):
        # Called between requests: leave if the master died.
        if self.parent is not None and os.getppid() != self.parent:
            os._exit(1)


def make_socket(args):
    if args.fd is not None:
        return socket.socket(fileno=args.fd)
    if args.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(args.unix)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if args.reuseport:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind((args.host, args.port))
    s.listen(128)
    return s


def serve(sock, x_worker, parent=None):
    """Serves on sock until SIGTERM, then finishes the current request."""
    # Every process sharing the socket wakes when a connection arrives, and
    # only one gets it: the others must not block in accept().
    sock.setblocking(False)
    handler = type("H", (Handler,), {"x_worker": x_worker})
    srv = Server(sock.getsockname() if sock.family == socket.AF_INET else "", handler, bind_and_activate=False)
    srv.socket.close()
    srv.socket = sock
    srv.parent = parent
    # The handler only sets a flag: a lock taken in a signal handler (as
    # threading.Event.set does) deadlocks when a second SIGTERM, say the
    # master's after the process group's, arrives while the first handler
    # holds it.
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1})
    t.start()
    while not stopping:
        time.sleep(0.1)
    srv.shutdown()  # returns once the request in service is done
    t.join()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--reuseport", action="store_true")
    p.add_argument("--unix")
    p.add_argument("--fd", type=int)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--x-worker")
    args = p.parse_args()
    if sum(x is not None for x in (args.port, args.unix, args.fd)) != 1:
        p.error("give exactly one of --port, --unix, --fd")
    sock = make_socket(args)
    if args.workers <= 1:
        serve(sock, args.x_worker)
        return 0

    master = os.getpid()
    children = []
    for i in range(args.workers):
        pid = os.fork()
        if pid == 0:
            try:
                serve(sock, i, parent=master)
            finally:
                os._exit(0)
        children.append(pid)
    sock.close()

    stopping = False

    def on_term(*_):
        nonlocal stopping
        stopping = True
        for c in children:
            try:
                os.kill(c, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    code = 0
    for _ in children:
        _, status = os.wait()
        if not stopping and status != 0:
            # A worker died: stop the others and fail, as lbbench serve does.
            code = 1
            on_term()
    return code


if __name__ == "__main__":
    sys.exit(main())
