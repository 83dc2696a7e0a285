#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Extreme numbers in every place a request carries one, on the web page and on the
control socket, against a real shutterd (simulated board). Issue 23 item 1.

Each value (0, -1, Int.max, Int.min, 1e308, NaN as text, 40 digits, empty) goes into
every query argument, JSON body number, header and path segment the routes read, and
into every number of the control socket's commands (hold, sim, focus, set, camera,
record, get, reset). A value outside what the route allows must be refused (4xx on the
web, ok:false on the socket); a value inside it (0 is a valid focus point) must be
taken. After every request shutterd must still answer. The first case is the one that
killed it: GET /api/files?page=384307168202282327 (an overflow in the paging arithmetic).

Run by Tests/ShutterServiceTests/WebEndToEndTests.swift with BASE_URL, SOCKET, PASSWORD.
Verdicts come from what is answered, never from how long it took.
"""
import webcheck
from webcheck import ok
import http.client, json, os, socket, sys, urllib.parse

BASE = urllib.parse.urlparse(os.environ["BASE_URL"])
HOST, PORT = BASE.hostname, BASE.port
SOCKET = os.environ["SOCKET"]

INT_MAX, INT_MIN = "9223372036854775807", "-9223372036854775808"
FORTY = "1" * 40
# The values as they are written in a query, header or path (text).
TEXT = ["0", "-1", INT_MAX, INT_MIN, "1e308", "NaN", FORTY, ""]
# The same as JSON: numbers as numbers; NaN as the bare token (not JSON) and as a
# string; empty as no value at all (not JSON) and as "".
JSON = ["0", "-1", INT_MAX, INT_MIN, "1e308", "NaN", '"NaN"', FORTY, "", '""']




def request(method, path, body=None, headers=None, source="127.0.0.1"):
    """(status, headers, body); status None when the server closed without an answer."""
    c = http.client.HTTPConnection(HOST, PORT, timeout=60, source_address=(source, 0))
    try:
        c.putrequest(method, path, skip_accept_encoding=True)
        h = dict(headers or {})
        if body is not None:
            h.setdefault("Content-Type", "application/json")
            h.setdefault("Content-Length", str(len(body)))
        for k, v in h.items():
            c.putheader(k, v)
        c.endheaders(body)
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    except (http.client.HTTPException, OSError) as e:
        return None, {}, repr(e).encode()
    finally:
        c.close()


def control(line):
    """One raw line on the control socket (not shutterctl: it checks its own words first)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    try:
        s.connect(SOCKET)
        s.sendall(line.encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return json.loads(buf) if buf.strip() else None
    except (OSError, ValueError) as e:
        return {"transport": repr(e)}
    finally:
        s.close()


def alive():
    reply = control('{"cmd":"status"}')
    s, _, _ = request("GET", "/login")
    return bool(reply and reply.get("ok")) and s == 200


def js(data):
    try:
        return json.loads(data)
    except ValueError:
        return {}


def number(text):
    """The JSON value a fragment stands for, or None when it is not a finite number."""
    try:
        v = json.loads(text)
    except ValueError:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        return None
    return v


def web(method, path, what, expect, body=None, headers=None, source="127.0.0.1"):
    """expect: a set of statuses that are right for this case."""
    s, h, d = request(method, path, body, headers, source)
    ok(s in expect and alive(), f"{what}: {s}", f"expected {sorted(expect)}; {d[:200]!r}")
    return s, h, d


def ctl(line, what, accepted):
    reply = control(line)
    good = reply is not None and "transport" not in reply and reply.get("ok") is accepted
    ok(good and alive(), f"socket {what}: ok={reply and reply.get('ok')}", f"{line} -> {reply}")
    return reply


# --- Log in (a session and its CSRF token for every route).
s, h, d = request("POST", "/api/login", json.dumps({"password": os.environ["PASSWORD"]}).encode())
ok(s == 200, "login", f"{s} {d[:200]!r}")
cookie = h["set-cookie"].split(";")[0]
csrf = js(d)["csrf"]
auth = {"Cookie": cookie}
post = {**auth, "X-CSRF-Token": csrf}
code = control('{"cmd":"tap"}')
ok(code and code.get("ok"), "a photo, so there is a file to name", code)
s, _, d = request("GET", "/api/files", headers=auth)
photo = js(d)["items"][0]["number"]

# --- The request that killed the daemon.
web("GET", "/api/files?page=384307168202282327", "GET /api/files?page=384307168202282327", {400}, headers=auth)

# --- Query arguments: page 1... and perPage 1...100; anything else 400.
for name, low, high in [("page", 1, 900 * 9999), ("perPage", 1, 100)]:
    for v in TEXT + ["384307168202282327", "1.5", "+1", " 1", "0x10", "１"]:
        try:
            n = int(v)
            valid = str(n) == v and low <= n <= high
        except ValueError:
            valid = False
        web("GET", f"/api/files?{name}={urllib.parse.quote(v)}", f"GET /api/files?{name}={v!r}",
            {200} if valid else {400}, headers=auth)

# --- Path numbers: a file is named by its seven-digit DCF number; anything else is 404.
for v in TEXT + ["384307168202282327"]:
    p = urllib.parse.quote(v)
    web("GET", f"/files/{p}", f"GET /files/{v!r}", {404}, headers=auth)
    web("HEAD", f"/files/{p}", f"HEAD /files/{v!r}", {404}, headers=auth)
    web("GET", f"/files/{p}/thumbnail", f"GET /files/{v!r}/thumbnail", {404}, headers=auth)
    web("DELETE", f"/api/files/{p}", f"DELETE /api/files/{v!r}", {404}, headers=post)
    # Routes that read no number: one more path segment is no route.
    for route in ["/api/status", "/api/settings", "/api/session", "/preview.mjpg", "/static/app.js", "/login",
                  "/static/app.css", "/static/login.js", ""]:
        if route or p:  # "/" itself is the page
            web("GET", f"{route}/{p}", f"GET {route}/{v!r}", {404}, headers=auth)
    for route in ["/api/photo", "/api/record", "/api/logout", "/api/focus", "/api/settings/reset"]:
        web("POST", f"{route}/{p}", f"POST {route}/{v!r}", {404}, b"{}", post)

# --- Headers. Range: a position that is not a whole number the file can hold is not
# a usable range (RFC 9110 §14.2 lets the server send the whole file, 200); a start
# past the end is 416. Never a crash, never a wrong byte count.
size = len(request("GET", f"/files/{photo}", headers=auth)[2])
for v in TEXT + ["18446744073709551615", "18446744073709551616"]:
    for form in [f"bytes={v}-", f"bytes=0-{v}", f"bytes=-{v}", f"bytes={v}-{v}"]:
        s, h, d = request("GET", f"/files/{photo}", headers={**auth, "Range": form})
        right = (s == 200 and len(d) == size) or (s == 416 and h.get("content-range") == f"bytes */{size}") or \
                (s == 206 and len(d) == int(h["content-range"].split("/")[0].split("-")[1]) -
                 int(h["content-range"].split(" ")[1].split("-")[0]) + 1)
        ok(right and alive(), f"Range {form!r}: {s}", f"{h} {len(d)}")
# Content-Length is read by libmicrohttpd and the shim: a bad one is refused.
for v in ["-1", INT_MAX, INT_MIN, "1e308", "NaN", FORTY, "", "18446744073709551616"]:
    sock = socket.create_connection((HOST, PORT), timeout=60)
    sock.sendall((f"POST /api/record HTTP/1.1\r\nHost: {HOST}:{PORT}\r\n{cookie and 'Cookie: ' + cookie}\r\n"
                  f"X-CSRF-Token: {csrf}\r\nContent-Length: {v}\r\n\r\n").encode())
    resp = b""
    try:
        while b"\r\n" not in resp:
            chunk = sock.recv(4096)
            if not chunk:
                break
            resp += chunk
    except OSError:
        pass
    sock.close()
    status = resp.split(b" ")[1] if resp.startswith(b"HTTP/1.1 ") else b""
    ok(status[:1] == b"4" and alive(), f"Content-Length {v!r}: {status.decode() or 'no answer'}", resp[:80])
# Tokens are not numbers: any of these as the CSRF token or the session cookie is refused.
for v in TEXT:
    for route in ["/api/photo", "/api/logout", "/api/record", "/api/settings", "/api/settings/reset", "/api/focus"]:
        web("POST", route, f"POST {route} X-CSRF-Token {v!r}", {403}, b"{}", headers={**auth, "X-CSRF-Token": v})
    web("DELETE", f"/api/files/{photo}", f"DELETE X-CSRF-Token {v!r}", {403}, headers={**auth, "X-CSRF-Token": v})
    web("GET", "/api/status", f"session cookie {v!r}", {401}, headers={"Cookie": f"shutter_session={v}"})

# --- JSON bodies.
for v in JSON:
    web("POST", "/api/record", f"POST /api/record action {v!r}", {400}, f'{{"action":{v}}}'.encode(), post)
    # A number is not a password (400); a string is a wrong one (401), each from its own
    # address so the throttle's 429 for the next try does not stand in the way.
    is_string = v.startswith('"')
    web("POST", "/api/login", f"POST /api/login password {v!r}", {401} if is_string else {400},
        f'{{"password":{v}}}'.encode(), source=f"127.0.1.{JSON.index(v) + 1}" if is_string else "127.0.0.9")
    web("POST", "/api/settings/reset", f"POST /api/settings/reset key {v!r}", {400}, f'{{"key":{v}}}'.encode(), post)
    web("POST", "/api/settings", f"POST /api/settings key {v!r}", {400}, f'{{"key":{v},"value":1}}'.encode(), post)
    for x, y in [(v, "0.5"), ("0.5", v)]:
        valid = all(n is not None and 0 <= n <= 1 for n in (number(x), number(y)))
        web("POST", "/api/focus", f"POST /api/focus x {x!r} y {y!r}", {200} if valid else {400},
            f'{{"x":{x},"y":{y}}}'.encode(), post)
request("POST", "/api/focus", b'{"action":"reset"}', post)

# Every runtime setting that takes a number, with each value: taken when in its range
# (then reset), else 400; the same for a list value holding it.
s, _, d = request("GET", "/api/settings", headers=auth)
settings = js(d)["settings"]
numeric = [x for x in settings if x.get("input", {}).get("type") == "number"]
ok(len(numeric) >= 5, f"{len(numeric)} numeric runtime settings to try", [x["key"] for x in settings])
for setting in numeric:
    key, low, high = setting["key"], setting["input"]["min"], setting["input"]["max"]
    integral = setting["input"].get("step") == 1
    for v in JSON:
        n = number(v)
        valid = n is not None and low <= n <= high and (not integral or isinstance(n, int))
        s, _, d = request("POST", "/api/settings", f'{{"key":"{key}","value":{v}}}'.encode(), post)
        ok(s == (200 if valid else 400) and alive(), f"POST /api/settings {key} {v!r}: {s}", f"{d[:200]!r}")
        if s == 200:
            request("POST", "/api/settings/reset", f'{{"key":"{key}"}}'.encode(), post)
for key in [x["key"] for x in settings if x.get("input", {}).get("type") == "json"]:
    for v in JSON:
        if number(v) is not None and abs(number(v)) <= 1 and number(v) >= 0:
            continue  # 0 may be a valid gain or window corner; the out-of-range values are the point here
        s, _, d = request("POST", "/api/settings", f'{{"key":"{key}","value":[{v},{v},{v},{v}]}}'.encode(), post)
        ok(s == 400 and alive(), f"POST /api/settings {key} [{v}, …]: {s}", f"{d[:200]!r}")
request("POST", "/api/settings/reset", b"", post)

# --- The control socket's commands, with the same values.
for v in JSON:
    ctl(f'{{"cmd":"hold","seconds":{v}}}', f"hold seconds {v!r}", False)
    for cmd in ["tap", "press", "release", "photo", "status"]:
        # A number where none belongs is still read through its bounds: none of these is a hold's.
        ctl(f'{{"cmd":"{cmd}","seconds":{v}}}', f"{cmd} with seconds {v!r}", False)
    n = number(v)
    ctl(f'{{"cmd":"sim","lux":{v}}}', f"sim lux {v!r}", n is not None and 0 <= n <= 1_000_000)
    for x, y in [(v, "0.5"), ("0.5", v)]:
        valid = all(number(t) is not None and 0 <= number(t) <= 1 for t in (x, y))
        ctl(f'{{"cmd":"focus","x":{x},"y":{y}}}', f"focus x {x!r} y {y!r}", valid)
    ctl(f'{{"cmd":"record","action":{v}}}', f"record action {v!r}", False)
    ctl(f'{{"cmd":"get","key":{v}}}', f"get key {v!r}", False)
    ctl(f'{{"cmd":"reset","key":{v}}}', f"reset key {v!r}", False)
    ctl(f'{{"cmd":"set","key":"camera.exposure.ev","value":{v}}}', f"set camera.exposure.ev {v!r}",
        n is not None and -8 <= n <= 8)
    ctl(f'{{"cmd":"set","key":"camera.exposure.shutterUs","value":{v}}}', f"set camera.exposure.shutterUs {v!r}",
        isinstance(n, int) and 0 <= n <= 1_000_000_000)
    control('{"cmd":"reset"}')
for v in TEXT:
    # The camera by index as text ("1"): only camera 0 exists on this board.
    ctl(json.dumps({"cmd": "camera", "camera": v}), f"camera {v!r}", v == "0")
control('{"cmd":"sim","lux":400}')
control('{"cmd":"focus","action":"reset"}')
control('{"cmd":"reset"}')

# --- Still up, still working.
code = control('{"cmd":"tap"}')
ok(code and code.get("ok") and code.get("files"), "after all that a tap still takes a photo", code)
s, _, d = request("GET", "/api/files?page=1&perPage=100", headers=auth)
ok(s == 200 and js(d)["itemCount"] >= 2, "and the page lists it", d[:200])
webcheck.passed("web fuzz: ")
