#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The web server under load, with tools nobody here wrote (issue 20, item 1).

Run by Tests/ShutterServiceTests/WebEndToEndTests.swift against a real shutterd on
the simulated board; env: BASE_URL, PASSWORD, SHUTTERCTL, SOCKET, SHUTTERD_PID.

1. `ab -n 2000 -c 8|16|32` (-l: a status differs in length from one to the next) from one address on /api/status (logged in), /login and
   /files/N: every request answered 2xx (no reset), throughput printed.
2. slowloris (`slowhttptest -H`, 300 connections from 127.0.0.1 for 40 s): meanwhile a
   photo is taken (`shutterctl tap`), another address (127.0.0.2) is served, and a
   preview already streaming (from 127.0.0.3) keeps receiving frames; after it, the
   attacking address is served again.
   Past 32 connections from one address a request gets 503 and Retry-After.
3. The daemon's RSS after all that within 20 MB of before.

Verdicts come from what the server and the tools report. The times are printed
against the issue's targets; the asserted bounds are several times looser, so a
loaded machine does not fail the test, while a blocked server (which waits for the
30 s idle timeout) still does.
"""
import webcheck
from webcheck import ok
import http.client, json, os, re, subprocess, sys, threading, time, urllib.parse

BASE = urllib.parse.urlparse(os.environ["BASE_URL"])
HOST, PORT = BASE.hostname, BASE.port
PID = int(os.environ["SHUTTERD_PID"])




def request(method, path, body=None, headers=None, source="127.0.0.1", timeout=30):
    c = http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(source, 0))
    h = dict(headers or {})
    if body is not None:
        body = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def shutterctl(*args):
    p = subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


s, h, d = request("POST", "/api/login", {"password": os.environ["PASSWORD"]})
ok(s == 200, "logged in", d)
cookie = h["set-cookie"].split(";")[0]
code, out = shutterctl("tap")
ok(code == 0, "a photo to download", out)
s, _, d = request("GET", "/api/files", headers={"Cookie": cookie})
number = json.loads(d)["items"][0]["number"]
before = rss_kib()
print(f"figure rss before load: {before} KiB", flush=True)

# --- 1. ab from one address.
for path, auth in (("/api/status", True), ("/login", False), (f"/files/{number}", True)):
    for c in (8, 16, 32):
        args = ["ab", "-q", "-l", "-n", "2000", "-c", str(c), "-s", "30"]
        if auth:
            args += ["-C", cookie]
        p = subprocess.run(args + [f"http://{HOST}:{PORT}{path}"], capture_output=True, text=True, timeout=300)
        text = p.stdout + p.stderr
        complete = re.search(r"Complete requests:\s+(\d+)", text)
        failed = re.search(r"Failed requests:\s+(\d+)", text)
        rate = re.search(r"Requests per second:\s+([\d.]+)", text)
        non2xx = re.search(r"Non-2xx responses:\s+(\d+)", text)
        ok(p.returncode == 0 and complete and int(complete.group(1)) == 2000 and failed and int(failed.group(1)) == 0
           and not non2xx, f"ab -n 2000 -c {c} {path}: every request answered 2xx", text[-1500:])
        print(f"figure ab -c {c} {path}: {rate.group(1)} requests/s", flush=True)

# --- 1b. Past 32 connections from one address: 503 with Retry-After, not a reset.
import socket
idle = []
for _ in range(32):
    k = socket.create_connection((HOST, PORT), timeout=10, source_address=("127.0.0.4", 0))
    idle.append(k)
time.sleep(0.5)
s, h, d = request("GET", "/login", source="127.0.0.4")
ok(s == 503 and h.get("retry-after") == "1", "the 33rd connection from one address: 503 with Retry-After", (s, h, d))
for k in idle:
    k.close()
time.sleep(0.5)
s, _, _ = request("GET", "/login", source="127.0.0.4")
ok(s == 200, "served again once its connections closed", s)

# --- 2. slowloris from 127.0.0.1.
preview_parts = [0]
preview_stop = threading.Event()


def watch_preview():
    c = http.client.HTTPConnection(HOST, PORT, timeout=30, source_address=("127.0.0.3", 0))
    c.request("GET", "/preview.mjpg", headers={"Cookie": cookie})
    r = c.getresponse()
    while not preview_stop.is_set():
        line = r.fp.readline()
        if not line:
            break
        if line.startswith(b"--ShutterPreviewFrame"):
            preview_parts[0] += 1
    c.close()


viewer = threading.Thread(target=watch_preview, daemon=True)
viewer.start()
time.sleep(2)
ok(preview_parts[0] > 0, "the preview streams before the attack", preview_parts)

attack = subprocess.Popen(["slowhttptest", "-H", "-c", "300", "-r", "300", "-i", "10", "-l", "40", "-x", "24",
                           "-p", "3", "-u", f"http://{HOST}:{PORT}/login"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(8)  # its connections are open and trickling headers
parts_at = preview_parts[0]
t = time.monotonic()
code, out = shutterctl("tap")
tap_seconds = time.monotonic() - t
ok(code == 0, "a photo during the attack", out)
print(f"figure photo during slowloris: {tap_seconds:.2f} s (target < 2 s)", flush=True)
t = time.monotonic()
s, _, _ = request("GET", "/login", source="127.0.0.2", timeout=25)
other_seconds = time.monotonic() - t
ok(s == 200, "another address is served during the attack", s)
print(f"figure another address served during slowloris: {other_seconds:.2f} s (target < 2 s)", flush=True)
time.sleep(5)
during = preview_parts[0] - parts_at
ok(during > 0, "the preview already streaming keeps its frames during the attack", during)
print(f"figure preview frames during {5 + tap_seconds + other_seconds:.1f} s of the attack: {during}", flush=True)
ok(tap_seconds < 10 and other_seconds < 10, "neither waited for the attacker (bound 10 s; a blocked server waits 30 s)")
report, _ = attack.communicate(timeout=120)
ok("Test ended" in report or "test ended" in report.lower() or attack.returncode == 0, "slowhttptest ran its 40 s",
   report[-800:])
t = time.monotonic()
served = False
while time.monotonic() - t < 15:
    try:
        s, _, _ = request("GET", "/login", timeout=5)
        if s == 200:
            served = True
            break
    except OSError:
        pass
    time.sleep(0.2)
again = time.monotonic() - t
ok(served, "the attacking address is served again after the attack")
print(f"figure attacking address served again after: {again:.2f} s (target < 5 s)", flush=True)
preview_stop.set()

# --- 3. Memory.
time.sleep(1)
after = rss_kib()
print(f"figure rss after load: {after} KiB ({(after - before) / 1024:+.1f} MiB)", flush=True)
ok(after - before < 20 * 1024, "RSS after the load within 20 MB of before", f"{before} -> {after} KiB")
webcheck.passed()
