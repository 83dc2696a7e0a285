#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Live events (issue 20 item 4) on a real shutterd: `/api/events` (Server-Sent
Events, read here by hand from the raw stream) and `shutterctl events`.

Run by Tests/ShutterServiceTests/WebEndToEndTests.swift; env: BASE_URL, PASSWORD,
SHUTTERCTL, SOCKET. A photo taken with `shutterctl tap` arrives as a `file` event
within 1 s of the tap's reply (printed), its deletion as a `deleted` event; a recording's state carries the seconds
the service reports; `shutterctl events --count N` prints N JSON lines.
"""
import webcheck
from webcheck import ok
import http.client, json, os, subprocess, sys, threading, time, urllib.parse

BASE = urllib.parse.urlparse(os.environ["BASE_URL"])
HOST, PORT = BASE.hostname, BASE.port




def shutterctl(*args, timeout=60):
    return subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args],
                          capture_output=True, text=True, timeout=timeout)


c = http.client.HTTPConnection(HOST, PORT, timeout=30)
c.request("POST", "/api/login", body=json.dumps({"password": os.environ["PASSWORD"]}),
          headers={"Content-Type": "application/json"})
r = c.getresponse()
r.read()
ok(r.status == 200, "logged in")
cookie = r.getheader("Set-Cookie").split(";")[0]

c = http.client.HTTPConnection(HOST, PORT, timeout=30)
c.request("GET", "/api/events")
r = c.getresponse()
r.read()
ok(r.status == 401, "/api/events needs a login", r.status)

events = []  # (monotonic time, type, data)
lock = threading.Lock()


def read_events():
    c = http.client.HTTPConnection(HOST, PORT, timeout=60)
    c.request("GET", "/api/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream", (r.status, r.getheaders())
    kind = None
    while True:
        line = r.fp.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            with lock:
                events.append((time.monotonic(), kind, json.loads(line[6:])))


threading.Thread(target=read_events, daemon=True).start()


def wait_for(pred, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with lock:
            hit = [e for e in events if pred(e)]
        if hit:
            return hit[0]
        time.sleep(0.02)
    return None


first = wait_for(lambda e: True)
ok(first is not None and first[1] == "state", "the first event is the current state", first)

p = shutterctl("tap")
replied = time.monotonic()
ok(p.returncode == 0, "shutterctl tap", p.stderr)
path = json.loads(p.stdout)["files"][0]
name = path.split("/")[-1]
e = wait_for(lambda e: e[1] == "file" and e[2].get("name") == name)
ok(e is not None, "the photo arrives as a file event", events[-5:])
gap = e[0] - replied
print(f"figure file event after the tap's reply: {gap * 1000:.0f} ms (target < 1000 ms)", flush=True)
ok(gap < 1.0, "within 1 s of the reply", gap)
d = e[2]
ok(d.get("kind") == "photo" and d.get("url") == f"/files/{d.get('number')}" and "path" not in d
   and d.get("thumbnail") == f"/files/{d.get('number')}/thumbnail", "named by number and URL, no path on the card", d)

p = shutterctl("delete", "last")
ok(p.returncode == 0, "shutterctl delete last", p.stdout + p.stderr)
e = wait_for(lambda e: e[1] == "deleted" and e[2].get("number") == d["number"])
ok(e is not None and "path" not in e[2], "its deletion arrives as a deleted event, by number", events[-3:])

lines = subprocess.Popen([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], "events", "--count", "6"],
                         stdout=subprocess.PIPE, text=True)
time.sleep(0.3)
p = shutterctl("hold", "2.5")
ok(p.returncode == 0, "shutterctl hold 2.5", p.stderr)
out, _ = lines.communicate(timeout=30)
parsed = [json.loads(l) for l in out.splitlines()]
ok(len(parsed) == 6 and all("event" in o for o in parsed), "shutterctl events --count 6: six JSON lines", out)
ok(parsed[0]["event"] == "state", "shutterctl events starts from the state", parsed[0])
rec = [o for o in parsed if o.get("state") == "recording"]
ok(rec and rec[0].get("elapsedSeconds") == 0 and rec[0].get("remainingSeconds") == 3,
   "the recording's seconds as the service reports them", rec)
with lock:
    web_rec = [d for (_, k, d) in events if k == "state" and d.get("state") == "recording"]
ok([d["elapsedSeconds"] for d in web_rec] == [0, 1, 2], "the page is told the elapsed seconds once a second", web_rec)
e = wait_for(lambda e: e[1] == "file" and e[2].get("kind") == "video")
ok(e is not None, "the clip arrives as a file event")
webcheck.passed()
