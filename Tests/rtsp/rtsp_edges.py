#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The live RTSP stream's edges against a real shutterd (LiveEdgeTests runs each scenario):
RTSP_HOST, RTSP_PORT, TOKEN (a view token), PASSWORD (the page's), SHUTTERCTL, SOCKET.
Exit 0 when the scenario holds; every figure is printed."""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rtsp_client import Conn, Viewer  # noqa: E402

HOST = os.environ.get("RTSP_HOST", "127.0.0.1")
PORT = int(os.environ.get("RTSP_PORT", "8554"))
TOKEN = os.environ.get("TOKEN", "").encode()
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def ctl(*args):
    out = subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args],
                         capture_output=True, text=True, timeout=60)
    try:
        return out.returncode, json.loads(out.stdout or "{}")
    except json.JSONDecodeError:
        return out.returncode, {}


def live():
    return ctl("status")[1].get("status", {}).get("preview", {}).get("live", {})


def play(path="/live", password=TOKEN, source=None):
    v = Viewer(HOST, PORT, path, password, source)
    v.start()
    if not v.playing.wait(20):
        v.stop()
        raise SystemExit(f"viewer on {path} did not play: status {v.status} error {v.error}")
    return v


def frames_over(viewers, seconds):
    before = [v.frames for v in viewers]
    time.sleep(seconds)
    return [v.frames - b for v, b in zip(viewers, before)]


def bare_setup(path, password=TOKEN, transport="RTP/AVP/TCP;unicast;interleaved=0-1"):
    """A SETUP on a connection that did no DESCRIBE first; its status."""
    c = Conn(HOST, PORT, password)
    try:
        status, _, _ = c.request("SETUP", c.url(path), {"Transport": transport})
        return status
    finally:
        c.close()


def freeze():
    """No client, URL or order stops an admitted viewer's frames."""
    a = play("/live")
    rate = frames_over([a], 2)[0] / 2
    print(f"viewer A alone: {rate:.1f} frames/s")
    check(rate > 5, "viewer A receives frames")
    b = play("/live?x=1")
    time.sleep(3)
    got_b = b.frames
    b.stop()
    check(got_b > 0, f"a second client on /live?x=1 plays too ({got_b} frames in 3 s)")
    statuses = [bare_setup("/live/stream=0"), bare_setup("/live/stream=0", password=b"wrong"),
                bare_setup("/elsewhere/stream=0"), bare_setup("/live/stream=0", transport="RTP/AVP;multicast"),
                bare_setup("/live?y=2/stream=0")]
    print(f"bare SETUPs answered {statuses}")
    after = frames_over([a], 3)[0]
    check(after >= rate * 3 * 0.5, f"viewer A after them: {after} frames in 3 s (alone: {rate * 3:.0f})")

    viewers = [a] + [play("/live" if i % 2 else f"/live?n={i}") for i in range(1, 4)]
    fifth = bare_setup("/live/stream=0")
    described = Viewer(HOST, PORT, "/live", TOKEN)
    described.start()
    described.done.wait(20)
    print(f"a fifth: bare SETUP {fifth}, DESCRIBE+SETUP {described.status}")
    check(described.status == 503, "a fifth viewer is refused with 503")
    got = frames_over(viewers, 3)
    check(all(g >= rate * 3 * 0.5 for g in got), f"all four viewers after the fifth was refused: {got} frames in 3 s")
    for v in viewers:
        v.stop()
        check(v.error is None, f"viewer ended cleanly ({v.error})")


SCENARIOS = {"freeze": freeze}

if __name__ == "__main__":
    SCENARIOS[sys.argv[1]]()
    print("FAILED: " + "; ".join(failures) if failures else "all held")
    sys.exit(1 if failures else 0)
