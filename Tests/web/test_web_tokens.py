#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""API tokens and the still-image URL, against a real shutterd on the simulated board.

Run by Tests/ShutterServiceTests/WebTokenEndToEndTests.swift, which starts shutterd with
the web page on 127.0.0.1, makes a view and a control token with `shutterctl web-token
add` and passes: BASE_URL, SHUTTERCTL, SOCKET, STORAGE, VIEW_TOKEN, CONTROL_TOKEN.
Plain http.client (headers as sent; a source address per check that trips the back-off,
so the others are not slowed). One line per check; exit 1 on the first failure.
Verdicts come from what the server answers and reports (status.preview.encoded),
never from how long it took; figures are printed.
"""
import webcheck
from webcheck import ok
import base64, http.client, json, os, struct, subprocess, sys, threading, time, urllib.parse

BASE = urllib.parse.urlparse(os.environ["BASE_URL"])
HOST, PORT = BASE.hostname, BASE.port
VIEW, CONTROL = os.environ["VIEW_TOKEN"], os.environ["CONTROL_TOKEN"]




def request(method, path, headers=None, source="127.0.0.1", body=None):
    c = http.client.HTTPConnection(HOST, PORT, timeout=30, source_address=(source, 0))
    c.request(method, path, body, headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def basic(token, user="homeassistant"):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()}


def js(data):
    try:
        return json.loads(data)
    except ValueError:
        return {}


def jpeg_size(data):
    """(width, height) from a baseline or progressive JPEG's SOF marker; None if it is no JPEG."""
    if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        return None
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return (w, h)
        i += 2 + length
    return None


def first_mjpeg_frame(headers):
    """The first part of /preview.mjpg: (status, content type, JPEG bytes)."""
    c = http.client.HTTPConnection(HOST, PORT, timeout=30)
    c.request("GET", "/preview.mjpg", headers=headers)
    r = c.getresponse()
    ctype = r.getheader("Content-Type") or ""
    if r.status != 200:
        data = r.read()
        c.close()
        return r.status, ctype, data
    buf = b""
    while b"\xff\xd9" not in buf[buf.find(b"\xff\xd8"):] or buf.find(b"\xff\xd8") < 0:
        chunk = r.read1(65536)
        if not chunk:
            break
        buf += chunk
    c.close()
    start = buf.find(b"\xff\xd8")
    end = buf.find(b"\xff\xd9", start) + 2
    return r.status, ctype, buf[start:end]


def status(headers=None):
    s, _, data = request("GET", "/api/status", headers or bearer(VIEW))
    return js(data).get("status", {})


def ctl(*args):
    p = subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args], capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


# --- A view token reads, by Bearer and by Basic (any user name).
for name, h in [("Bearer", bearer(VIEW)), ("Basic", basic(VIEW)), ("Basic, empty user", basic(VIEW, user=""))]:
    s, hd, data = request("GET", "/api/status", h)
    ok(s == 200 and js(data).get("ok") is True, f"view token ({name}) reads /api/status", s)
s, hd, data = request("GET", "/api/files", bearer(VIEW))
ok(s == 200 and "items" in js(data), "view token lists /api/files", s)

for name, h in [("Bearer", bearer(VIEW)), ("Basic", basic(VIEW))]:
    s, ctype, frame = first_mjpeg_frame(h)
    ok(s == 200 and ctype.startswith("multipart/x-mixed-replace"), f"view token ({name}) streams /preview.mjpg", (s, ctype))
    ok(jpeg_size(frame) is not None, f"its first part is a whole JPEG ({name})", len(frame))
preview_size = jpeg_size(frame)

for name, h in [("Bearer", bearer(VIEW)), ("Basic", basic(VIEW))]:
    s, hd, snap = request("GET", "/api/snapshot.jpg", h)
    ok(s == 200 and hd.get("content-type") == "image/jpeg", f"view token ({name}) gets /api/snapshot.jpg", (s, hd.get("content-type")))
    ok(jpeg_size(snap) == preview_size, f"the snapshot is a JPEG at the preview's size {preview_size}", jpeg_size(snap))

# The live events are a read too.
c = http.client.HTTPConnection(HOST, PORT, timeout=30)
c.request("GET", "/api/events", headers=bearer(VIEW))
r = c.getresponse()
first = b""
while r.status == 200 and b"event: state" not in first:
    chunk = r.read1(4096)
    if not chunk:
        break
    first += chunk
c.close()
ok(r.status == 200 and b"event: state" in first, "view token watches /api/events (a state event)", (r.status, first[:80]))

# --- What a view token may not do, and what a control token does without CSRF.
before = set(os.listdir(os.environ["STORAGE"] + "/DCIM/100SHUTR")) if os.path.isdir(os.environ["STORAGE"] + "/DCIM/100SHUTR") else set()
s, hd, data = request("POST", "/api/photo", bearer(VIEW))
ok(s == 403 and "scope is view" in js(data).get("error", ""), "view token refused POST /api/photo (403)", (s, data))
s, hd, data = request("POST", "/api/settings", basic(VIEW), body=json.dumps({"key": "camera.exposure.ev", "value": 1}))
ok(s == 403, "view token refused POST /api/settings (403)", s)
s, hd, data = request("POST", "/api/photo", bearer(CONTROL))
items = js(data).get("items") or []
ok(s == 200 and js(data).get("ok") is True and len(items) == 1, "control token takes a photo, no CSRF token", (s, data))
after = set(os.listdir(os.environ["STORAGE"] + "/DCIM/100SHUTR"))
ok(items[0]["name"] in after - before, "the photo it names is on the card", (items, after - before))
s, hd, data = request("DELETE", f"/api/files/{items[0]['number']}", bearer(VIEW))
ok(s == 403 and items[0]["name"] in os.listdir(os.environ["STORAGE"] + "/DCIM/100SHUTR"), "view token may not delete", s)

# --- Revocation applies to the very next request, without a restart.
code, temp, err = ctl("web-token", "add", "temporary", "--scope", "view")
ok(code == 0 and len(temp) == 43, "web-token add prints the token alone", (code, temp, err))
s, hd, _ = request("GET", "/api/status", bearer(temp), source="127.0.0.60")
ok(s == 200, "the new token works at once", s)
code, out, err = ctl("web-token", "revoke", "temporary")
ok(code == 0 and js(out).get("ok") is True, "web-token revoke", (code, out, err))
s, hd, data = request("GET", "/api/status", bearer(temp), source="127.0.0.60")
ok(s == 401 and "www-authenticate" in hd, "the revoked token gets 401 on its next request", (s, hd))

# --- A wrong token backs off like a password: 401 with Retry-After, then 429 unchecked.
s, hd, data = request("GET", "/api/snapshot.jpg", basic("not-a-token"), source="127.0.0.70")
ok(s == 401 and hd.get("retry-after") == "1" and js(data).get("retryAfterSeconds") == 1, "a wrong token: 401, retry after 1 s", (s, hd))
ok(hd.get("www-authenticate", "").startswith("Basic"), "with a Basic challenge (the request carried Authorization)")
s, hd, data = request("GET", "/api/snapshot.jpg", basic(VIEW), source="127.0.0.70")
ok(s == 429 and "retry-after" in hd, "the next try from that address before then: 429 unchecked", s)
time.sleep(float(hd.get("retry-after", "1")) + 0.1)
s, hd, data = request("GET", "/api/snapshot.jpg", basic("still-wrong"), source="127.0.0.70")
ok(s == 401 and hd.get("retry-after") == "2", "a second wrong one: 2 s", (s, hd.get("retry-after")))
s, hd, data = request("GET", "/api/snapshot.jpg", basic(VIEW), source="127.0.0.71")
ok(s == 200, "another address is not slowed", s)

# --- The page's own fetches never get a Basic challenge; the snapshot and preview URLs without a cookie do.
s, hd, _ = request("GET", "/api/status")
ok(s == 401 and "www-authenticate" not in hd, "/api/status without credentials: 401, no challenge (no browser dialog)", hd)
s, hd, _ = request("GET", "/api/snapshot.jpg", {"Cookie": "shutter_session=gone"})
ok(s == 401 and "www-authenticate" not in hd, "the snapshot with an old cookie (the page's <img>): no challenge", hd)
s, hd, _ = request("GET", "/api/snapshot.jpg")
ok(s == 401 and hd.get("www-authenticate", "").startswith("Basic"), "the snapshot with nothing: a Basic challenge", hd)

# --- Ten viewers at once cost one encode (what shutterd reports: status.preview.encoded).
# Nobody watches the preview now; its encoder stops once the server has seen the
# streams above close (waited for by what shutterd reports, not by a fixed time).
deadline = time.time() + 20
last = status()["preview"]["encoded"]
while time.time() < deadline:
    time.sleep(0.6)
    now = status()["preview"]["encoded"]
    if now == last:
        break
    last = now
time.sleep(0.3)  # the cached frame is older than 200 ms now: the ten need a new one
encoded_before = status()["preview"]["encoded"]
results = [None] * 10
barrier = threading.Barrier(10)


def fetch(i):
    barrier.wait()
    # One source address each: the per-address connection limit is not what this measures.
    results[i] = request("GET", "/api/snapshot.jpg", basic(VIEW), source=f"127.0.1.{i + 1}") + (time.monotonic(),)


started = time.monotonic()
threads = [threading.Thread(target=fetch, args=(i,)) for i in range(10)]
[t.start() for t in threads]
[t.join(60) for t in threads]
spread = max(r[3] for r in results) - started
encodes = status()["preview"]["encoded"] - encoded_before
distinct = {r[2] for r in results}
print(json.dumps({"parallelSnapshots": 10, "encodes": encodes, "distinctFrames": len(distinct),
                  "allAnsweredWithinMs": round(spread * 1000)}))
ok(all(r[0] == 200 and jpeg_size(r[2]) == preview_size for r in results), "ten parallel snapshots: all 200, all JPEGs at the preview's size")
ok(encodes == len(distinct), "each encode was served, none wasted", (encodes, len(distinct)))
if spread <= 0.2:
    ok(encodes == 1, "ten requests within 200 ms cost one encode", encodes)
else:
    # All ten sent at once but answered over more than 200 ms (a slow machine): only
    # the sharing can be judged, and still far fewer encodes than requests.
    ok(encodes < 10, f"ten requests spread over {spread:.2f} s shared their encodes", encodes)

webcheck.passed()
