#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The page's own logic for live events, in Debian's headless chromium, against a small
stand-in server (this file) that serves the page's files from PAGE_DIR (the repository's
Sources/ShutterWeb/Page) and answers the API with what the test says, /api/events
included: what the page does with each event of the contract (docs/control-and-api.md "The API"), that it
ignores what it does not know, that it falls back to polling /api/status when there are no
events, and the camera switch. Started by Tests/ShutterServiceTests/WebPageEventsTests.swift.
One line per check; exit 1 on the first failure.
"""
import webcheck
from webcheck import ok
import json, os, queue, sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

PAGE = os.environ["PAGE_DIR"]
TYPES = {"html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8"}




def item(n, kind="photo"):
    name = f"SHTR{n % 10000:04d}." + ("JPG" if kind == "photo" else "MP4")
    return {"number": n, "name": name, "kind": kind, "url": f"/files/{n}", "directory": "100SHUTR", "bytes": 1000, "modified": 0}


class World:
    """What the stand-in service holds; the handler reads it under the lock."""
    def __init__(self):
        self.lock = threading.Lock()
        self.items = [item(1000002, "video"), item(1000001)]
        self.events_enabled = True
        self.streams = []          # one queue per open /api/events
        self.hits = {}             # path -> count
        self.posts = []            # (path, body)
        self.cameras = [{"index": 0, "model": "imx708", "id": "a", "inUse": True},
                        {"index": 1, "model": "imx219", "id": "b", "inUse": False}]

    def hit(self, path):
        with self.lock:
            self.hits[path] = self.hits.get(path, 0) + 1

    def count(self, path):
        with self.lock:
            return self.hits.get(path, 0)

    def send(self, event, data):
        with self.lock:
            for q in self.streams:
                q.put((event, data))


world = World()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0]
        world.hit(path)
        files = {"/": "index.html", "/login": "login.html", "/static/app.css": "app.css", "/static/app.js": "app.js"}
        if path in files:
            name = files[path]
            return self.reply(200, open(os.path.join(PAGE, name), "rb").read(), TYPES[name.rsplit(".", 1)[1]])
        if path == "/api/status":
            with world.lock:
                cam = next(c for c in world.cameras if c["inUse"])
            return self.reply(200, {"ok": True, "status": {"state": "idle", "freeBytes": 5e9, "camera": cam,
                                                           "leds": {"status": {"on": True, "pattern": "ready"}}}})
        if path == "/api/files":
            with world.lock:
                items = list(world.items)
            return self.reply(200, {"ok": True, "page": 1, "perPage": 12, "pageCount": 1, "itemCount": len(items), "items": items})
        if path == "/api/camera":
            with world.lock:
                return self.reply(200, {"ok": True, "cameras": world.cameras})
        if path == "/api/session":
            return self.reply(200, {"ok": True, "csrf": "token"})
        if path == "/api/settings":
            return self.reply(200, {"ok": True, "settings": []})
        if path == "/api/events":
            if not world.events_enabled:
                return self.reply(404, {"ok": False, "error": "not found"})
            q = queue.Queue()
            with world.lock:
                world.streams.append(q)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            try:
                self.wfile.write(b'event: state\ndata: {"state":"ready"}\n\n')
                self.wfile.flush()
                while True:
                    try:
                        event, data = q.get(timeout=1)
                    except queue.Empty:
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()
                        continue
                    if event is None:
                        return
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return
            finally:
                with world.lock:
                    world.streams.remove(q)
                self.close_connection = True
        if path.startswith("/files/"):
            return self.reply(404, {"ok": False})
        self.reply(404, {"ok": False, "error": "not found"})

    def do_POST(self):
        path = self.path
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with world.lock:
            world.posts.append((path, json.loads(body or b"{}"), self.headers.get("X-CSRF-Token")))
        if path == "/api/camera":
            with world.lock:
                for c in world.cameras:
                    c["inUse"] = not c["inUse"]
                cam = next(c for c in world.cameras if c["inUse"])
            return self.reply(200, {"ok": True, "camera": cam, "note": f"switched to camera {cam['index']} ({cam['model']})"})
        self.reply(200, {"ok": True})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
BASE = f"http://127.0.0.1:{server.server_address[1]}"

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
    opts.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
wait = WebDriverWait(driver, 15, ignored_exceptions=[NoSuchElementException, StaleElementReferenceException])
text = lambda id: driver.find_element(By.ID, id).text
tags = lambda: driver.execute_script("return [...document.querySelectorAll('#items li')].map(li => +li.dataset.number)")
try:
    driver.get(BASE + "/")
    wait.until(lambda d: d.execute_script("return document.body.dataset.live") == "events")
    ok(True, "the page listens to /api/events")
    wait.until(lambda d: text("status").startswith("Ready"))
    ok(True, "the first state event: " + text("status"))
    driver.execute_script("window.notReloaded = true")
    status_polls = world.count("/api/status")
    time.sleep(3.5)
    ok(world.count("/api/status") <= status_polls + 1, "no polling of /api/status while the events come",
       f"{world.count('/api/status') - status_polls} more")

    world.send("state", {"state": "recording", "elapsedSeconds": 12, "remainingSeconds": 48})
    wait.until(lambda d: d.find_element(By.ID, "record").get_attribute("data-elapsed") == "12")
    ok(text("record") == "Stop recording · 12 s", "the record button shows the elapsed time the service sent: " + text("record"))
    ok("12 s (48 s left)" in text("status"), "and the status the time left: " + text("status"))
    world.send("state", {"state": "recording", "elapsedSeconds": 75, "remainingSeconds": 0})
    wait.until(lambda d: text("record") == "Stop recording · 1:15")
    ok(True, "a minute and more as m:ss")
    world.send("state", {"state": "saving"})
    wait.until(lambda d: text("record") == "Start recording" and text("status").startswith("Saving"))
    ok(True, "saving: the button is back to Start recording")
    world.send("state", {"state": "saving", "detail": "taking-photo"})
    wait.until(lambda d: text("status").startswith("Taking a photo"))
    ok(True, "the service's finer word, when it sends one: " + text("status"))
    world.send("state", {"state": "error", "ledCode": 3, "message": "card full"})
    wait.until(lambda d: "card full" in text("status") and "code 3" in text("status"))
    ok(True, "an error with its LED code: " + text("status"))
    world.send("state", {"state": "ready", "somethingNew": [1, 2]})
    world.send("lens-changed", {"whatever": True})
    wait.until(lambda d: text("status").startswith("Ready"))
    ok(True, "an unknown event and an unknown field are ignored")

    wait.until(lambda d: tags() == [1000002, 1000001])
    with world.lock:
        world.items.insert(0, item(1000003))
    sent = time.time()
    world.send("file", {"number": 1000003, "name": "SHTR0003.JPG", "kind": "photo", "url": "/files/1000003",
                        "thumbnail": "/files/1000003/thumbnail"})
    wait.until(lambda d: tags()[:1] == [1000003])
    ok(True, f"a file event: the photo is first in the gallery ({time.time() - sent:.2f} s after the event)")
    ok(driver.execute_script("return window.notReloaded === true"), "without a reload")

    with world.lock:
        world.items = [i for i in world.items if i["number"] != 1000002]
    world.send("deleted", {"number": 1000002})
    wait.until(lambda d: 1000002 not in tags())
    ok(tags() == [1000003, 1000001], "a deleted event takes it out of the gallery", tags())

    # The camera switch: two cameras, so the button shows; it asks for the next one.
    wait.until(lambda d: d.find_element(By.ID, "camera-switch").is_displayed())
    ok("imx708" in text("camera"), "two cameras: the switch shows, with the camera in use: " + text("camera"))
    driver.find_element(By.ID, "camera-switch").click()
    wait.until(lambda d: "switched to camera 1" in text("result"))
    with world.lock:
        posted = [p for p in world.posts if p[0] == "/api/camera"]
    ok(posted and posted[-1][1] == {"camera": "next"} and posted[-1][2] == "token",
       "Switch camera: POST /api/camera {camera: next} with the CSRF token", posted)
    wait.until(lambda d: "imx219" in text("camera"))
    ok(True, "the camera in use after the switch: " + text("camera"))
    cams = world.count("/api/camera")
    world.send("camera", {"id": "a"})
    wait.until(lambda d: world.count("/api/camera") > cams)
    ok(True, "a camera event: the cameras are read again")

    # No events (an older shutterd, or a proxy in the way): polling every 3 s, as before.
    world.events_enabled = False
    world.send(None, None)  # ends the open stream; the browser's reconnect gets 404
    wait.until(lambda d: d.execute_script("return document.body.dataset.live") == "polling")
    ok(True, "without /api/events the page falls back to polling")
    polls = world.count("/api/status")
    time.sleep(10)
    got = world.count("/api/status") - polls
    ok(got >= 2, f"and polls /api/status every 3 s ({got} in 10 s)")

    # A page opened against a server without events at all.
    driver.get(BASE + "/")
    wait.until(lambda d: d.execute_script("return document.body.dataset.live") == "polling")
    wait.until(lambda d: text("status").startswith("Ready") and len(tags()) == 2)
    ok(True, "a server without /api/events: the page works by polling: " + text("status"))
finally:
    driver.quit()
    server.shutdown()
webcheck.passed("page events: ")
