"""A tiny WSGI and ASGI app that behaves like lbbench's built-in worker.

GET /healthz answers 200 at once. Any other path takes the service time its
query asks for (us=<microseconds> or ms=<milliseconds>), sleeping, or
spinning the CPU with mode=spin, then answers "ok". The work blocks the
process: a gunicorn sync worker serves one request at a time, and under
uvicorn the blocking call stops the event loop, so neither accepts while it
is busy, like an event-loop worker computing.

Every response carries X-Worker, a small index (0, 1, ...) that each worker
process claims on its first request by locking the first free lock file
among its siblings' (so lbbench can count requests per worker), and
X-Lbbench-Times (lbbench_times.py: when the app began the request, on the
clock lbbench's generator reads, so lbbench measures each request's wait).

    gunicorn -w 8 --bind fd://3 busyapp:app      (WSGI, sync workers)
    uvicorn --fd 3 --workers 8 busyapp:asgi      (ASGI)
"""

import fcntl
import os
import tempfile
import time
from urllib.parse import parse_qs

import lbbench_times

_index = None
_lock = None


def _worker_index():
    """Claims the lowest free index among the processes of one server."""
    global _index, _lock
    if _index is not None:
        return _index
    d = os.path.join(tempfile.gettempdir(), "lbbench-busyapp-%d" % os.getppid())
    os.makedirs(d, exist_ok=True)
    for i in range(1024):
        f = open(os.path.join(d, "%d.lock" % i), "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        _index, _lock = i, f  # held until the process exits
        return i
    raise RuntimeError("no free worker index in " + d)


def _work(path, query):
    """Returns (status, body) for a request, after its service time."""
    if path == "/healthz":
        return "200 OK", b"ok\n"
    q = parse_qs(query)
    try:
        if "us" in q:
            d = int(q["us"][0]) / 1e6
        elif "ms" in q:
            d = float(q["ms"][0]) / 1e3
        else:
            d = 0.0
    except ValueError:
        return "400 Bad Request", b"bad service time\n"
    if d < 0 or d > 30:
        return "400 Bad Request", b"service time out of range\n"
    if q.get("mode", ["sleep"])[0] == "spin":
        end = time.perf_counter() + d
        while time.perf_counter() < end:
            pass
    elif d > 0:
        time.sleep(d)
    return "200 OK", b"ok\n"


def _app(environ, start_response):
    """The WSGI app, unstamped."""
    status, body = _work(environ.get("PATH_INFO", "/"), environ.get("QUERY_STRING", ""))
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body))),
                            ("X-Worker", str(_worker_index()))])
    return [body]


async def _asgi(scope, receive, send):
    """The ASGI app, unstamped; the work blocks the event loop on purpose."""
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    status, body = _work(scope.get("path", "/"), scope.get("query_string", b"").decode("latin-1"))
    await send({"type": "http.response.start", "status": int(status.split()[0]),
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()),
                            (b"x-worker", str(_worker_index()).encode())]})
    await send({"type": "http.response.body", "body": body})


app = lbbench_times.wsgi(_app)
asgi = lbbench_times.asgi(_asgi)
