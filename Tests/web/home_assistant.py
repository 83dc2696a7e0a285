#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""docs/home-automation.md's Home Assistant configuration, driven the way Home Assistant drives it, with
clients that are not ours: Python's requests (what the MJPEG integration's setup and
rest_command/REST sensor use: HTTP Basic, a Bearer header) and ffmpeg (the MJPEG
stream's first frames, the password in the URL as a user types it into a player).

Env as test_web_tokens.py: BASE_URL, VIEW_TOKEN, CONTROL_TOKEN, OUT_DIR (a scratch
directory). Exit 1 on the first failure; 77 when requests is missing (skipped).
"""
import webcheck
from webcheck import ok
import json, os, subprocess, sys, urllib.parse

try:
    import requests
    from requests.auth import HTTPBasicAuth
except ImportError:
    print("SKIP python3-requests missing: deploy/install-deps.sh --test installs it")
    sys.exit(77)

BASE = os.environ["BASE_URL"].rstrip("/")
VIEW, CONTROL = os.environ["VIEW_TOKEN"], os.environ["CONTROL_TOKEN"]
OUT = os.environ["OUT_DIR"]
# What docs/home-automation.md tells a user to type into Home Assistant.
MJPEG_URL = BASE + "/preview.mjpg"
STILL_URL = BASE + "/api/snapshot.jpg"
USERNAME = "homeassistant"  # any name: the token is the password




def jpeg_frames(chunks, count):
    """Whole JPEGs from an MJPEG byte stream, as the integration cuts them (SOI to EOI)."""
    buf, frames = b"", []
    for chunk in chunks:
        buf += chunk
        while True:
            start = buf.find(b"\xff\xd8")
            end = buf.find(b"\xff\xd9", start + 2) if start >= 0 else -1
            if start < 0 or end < 0:
                break
            frames.append(buf[start:end + 2])
            buf = buf[end + 2:]
            if len(frames) == count:
                return frames
    return frames


auth = HTTPBasicAuth(USERNAME, VIEW)

# MJPEG IP Camera, setup: the integration checks the MJPEG URL with Basic first
# (Digest only after a 401), streaming, and closes it.
r = requests.get(MJPEG_URL, auth=auth, stream=True, timeout=10)
ok(r.status_code == 200, "setup: the MJPEG URL answers HTTP Basic with a view token", r.status_code)
ok(r.headers["Content-Type"].startswith("multipart/x-mixed-replace"), "as multipart/x-mixed-replace", r.headers["Content-Type"])
frames = jpeg_frames(r.iter_content(chunk_size=4096), 3)
r.close()
ok(len(frames) == 3, "the stream's first three frames are whole JPEGs", len(frames))

# The camera entity's still image (dashboards poll it).
r = requests.get(STILL_URL, auth=auth, timeout=10)
ok(r.status_code == 200 and r.headers["Content-Type"] == "image/jpeg", "the still image URL with HTTP Basic", r.status_code)
ok(r.content[:2] == b"\xff\xd8" and r.content[-2:] == b"\xff\xd9", "is a whole JPEG", len(r.content))
still = r.content

# rest_command shutter_photo: POST with the control token as Bearer.
r = requests.post(BASE + "/api/photo", headers={"Authorization": f"Bearer {CONTROL}"}, timeout=60)
body = r.json()
ok(r.status_code == 200 and body.get("ok") is True and body.get("items"), "rest_command: a photo with a control token", (r.status_code, body))

# The REST sensor: /api/status with the view token; value_template value_json.status.state.
r = requests.get(BASE + "/api/status", headers={"Authorization": f"Bearer {VIEW}"}, timeout=10)
value_json = r.json()
ok(r.status_code == 200 and value_json["status"]["state"] == "idle", "REST sensor: state", value_json.get("status", {}).get("state"))
ok(value_json["status"]["counters"]["photos"] >= 1, "its attributes: status.counters", value_json["status"]["counters"])

# ffmpeg, the password in the URL: it sends Basic after the challenge of the MJPEG URL.
u = urllib.parse.urlparse(BASE)
url = f"{u.scheme}://{USERNAME}:{VIEW}@{u.netloc}/preview.mjpg"
pattern = os.path.join(OUT, "ha-frame-%d.jpg")
p = subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "mpjpeg", "-i", url, "-frames:v", "3", pattern],
                   capture_output=True, text=True, timeout=60)
ok(p.returncode == 0, "ffmpeg reads the MJPEG stream with HTTP Basic", p.stderr[-500:])
probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "json",
                        pattern % 3], capture_output=True, text=True)
stream = json.loads(probe.stdout or "{}").get("streams", [{}])[0]
ok(stream.get("codec_name") == "mjpeg", "its third frame decodes as a JPEG", stream)
sp = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "json", "-"],
                    input=still, capture_output=True)
still_stream = json.loads(sp.stdout or b"{}").get("streams", [{}])[0]
ok((stream.get("width"), stream.get("height")) == (still_stream.get("width"), still_stream.get("height")),
   "the still image is the stream's size", (stream, still_stream))
# Last (it slows this address down for a second, as a wrong password does): a wrong
# token gets 401 with a Basic challenge.
r = requests.get(STILL_URL, auth=HTTPBasicAuth(USERNAME, "wrong"), timeout=10)
ok(r.status_code == 401 and r.headers.get("WWW-Authenticate", "").startswith("Basic"), "a wrong token: 401, Basic challenge", r.status_code)
print(json.dumps({"frameSize": [stream.get("width"), stream.get("height")], "stillBytes": len(still)}))
webcheck.passed()
