"""Stamps lbbench's X-Lbbench-Times header from a WSGI or ASGI app.

lbbench's built-in worker stamps each response with when it received the
request, began serving it and was done, on CLOCK_MONOTONIC in nanoseconds
("RECEIVED BEGAN DONE ACCEPTED CLOCK"): the clock every process and
container of one boot of a host shares, and the one Python's
time.monotonic_ns reads on Linux. CLOCK names it (the boot ID's first 8
hex digits, and a time namespace's monotonic offset if any): the generator
compares stamps only with its own clock's. From those stamps it records
the wait before a worker began each request.
Wrap an app with wsgi() or asgi() and an exec'd server stamps the same way:

    app = lbbench_times.wsgi(app)
    asgi_app = lbbench_times.asgi(asgi_app)

The app is called when the server hands it the request, so RECEIVED and
BEGAN are that moment (a synchronous worker has no queue of its own in
between); DONE is when the app starts its response (WSGI: calls
start_response; ASGI: sends http.response.start). When the connection was
accepted is not known to an app, so the fourth stamp is "-" and the
generator records no connection wait for these responses.
"""

import time

HEADER = "X-Lbbench-Times"


def _clock():
    """Names this process's CLOCK_MONOTONIC as lbbench's monoclock.Host does,
    or returns None when it cannot be told (then nothing is stamped)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip().replace("-", "").lower()[:8]
    except OSError:
        return None
    if len(boot) != 8 or any(c not in "0123456789abcdef" for c in boot):
        return None
    try:
        with open("/proc/self/timens_offsets") as f:
            lines = f.read().splitlines()
    except OSError:
        return boot  # no time namespaces on this kernel
    for line in lines:
        fields = line.split()
        if len(fields) == 3 and fields[0] in ("monotonic", "1"):
            try:
                off = int(fields[1]) * 10**9 + int(fields[2])
            except ValueError:
                return None
            if off != 0:
                return "%s@%d" % (boot, off)
    return boot


CLOCK = _clock()


def _stamp(began):
    now = time.monotonic_ns()
    return "%d %d %d - %s" % (began, began, now, CLOCK)


def wsgi(app):
    """Returns the WSGI app wrapped to stamp its responses."""
    if CLOCK is None:
        return app

    def wrapped(environ, start_response):
        began = time.monotonic_ns()

        def stamped(status, headers, exc_info=None):
            headers = [h for h in headers if h[0].lower() != HEADER.lower()]
            headers.append((HEADER, _stamp(began)))
            return start_response(status, headers, exc_info)

        return app(environ, stamped)
    return wrapped


def asgi(app):
    """Returns the ASGI app wrapped to stamp its HTTP responses."""
    if CLOCK is None:
        return app

    async def wrapped(scope, receive, send):
        if scope.get("type") != "http":
            return await app(scope, receive, send)
        began = time.monotonic_ns()

        async def stamped(msg):
            if msg.get("type") == "http.response.start":
                name = HEADER.lower().encode()
                headers = [h for h in msg.get("headers", []) if h[0].lower() != name]
                headers.append((name, _stamp(began).encode()))
                msg = dict(msg, headers=headers)
            await send(msg)

        return await app(scope, receive, stamped)
    return wrapped
