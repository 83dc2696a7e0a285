#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Live preview watched during a recording: the preview gets frames, the recorder
drops none because of it (judged by what shutterd reports: counters.droppedFrames,
status.preview), the clip is whole. Env as test_web_api.py; RECORD_SECONDS."""
import http.client, json, os, subprocess, sys, threading, time, urllib.parse

u = urllib.parse.urlparse(os.environ["BASE_URL"])
seconds = float(os.environ.get("RECORD_SECONDS", "6"))


def req(method, path, body=None, headers=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request(method, path, json.dumps(body) if body is not None else None, headers or {})
    r = c.getresponse()
    data = r.read()
    return r, json.loads(data) if data[:1] == b"{" else data


r, j = req("POST", "/api/login", {"password": os.environ["PASSWORD"]}, {"Content-Type": "application/json"})
cookie = r.getheader("Set-Cookie").split(";")[0]
auth = {"Cookie": cookie}
post = {**auth, "X-CSRF-Token": j["csrf"], "Content-Type": "application/json"}
_, before = req("GET", "/api/status", headers=auth)

parts = 0
stop = threading.Event()


def watch():
    global parts
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", "/preview.mjpg", headers=auth)
    r = c.getresponse()
    assert r.getheader("Content-Type").startswith("multipart/x-mixed-replace"), r.getheader("Content-Type")
    buf = b""
    while not stop.is_set():
        chunk = r.read1(65536)
        if not chunk:
            break
        buf += chunk
        parts += buf.count(b"\xff\xd8")
        buf = buf[-1:]
    c.close()


t = threading.Thread(target=watch, daemon=True)
t.start()
time.sleep(1)
_, started = req("POST", "/api/record", {"action": "start"}, post)
time.sleep(seconds)
_, stopped = req("POST", "/api/record", {"action": "stop"}, post)
stop.set()
t.join(10)
_, after = req("GET", "/api/status", headers=auth)
dropped = after["status"]["counters"]["droppedFrames"] - before["status"]["counters"]["droppedFrames"]
preview = after["status"].get("preview", {})
print(json.dumps({"recordSeconds": seconds, "previewPartsReceived": parts, "preview": preview,
                  "droppedFramesDuringClip": dropped, "clip": stopped.get("items")}))
fail = []
if not (started.get("ok") and stopped.get("ok") and stopped.get("items")):
    fail.append(f"recording failed: {started} {stopped}")
if parts < 3:
    fail.append(f"only {parts} preview parts received")
if preview.get("encoded", 0) < 3:
    fail.append(f"status.preview says {preview}")
if dropped != 0:
    fail.append(f"the recorder dropped {dropped} frames while the preview was watched")
if fail:
    print("FAIL " + "; ".join(fail))
    sys.exit(1)
print("ok   preview watched while recording: parts received, no frame dropped")
