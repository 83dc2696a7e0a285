#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The web API and its security, against a real shutterd on the simulated board.

Run by Tests/ShutterServiceTests/WebEndToEndTests.swift, which starts shutterd with
the web server on 127.0.0.1 and passes: BASE_URL, STORAGE (storage.root), SHUTTERCTL,
SOCKET, PASSWORD. Plain http.client (raw paths, headers as sent). One line per check;
exit 1 on the first failure. Verdicts come from what the server answers, never from
how long it took.
"""
import webcheck
from webcheck import ok
import hashlib, http.client, json, os, socket, subprocess, sys, time, urllib.parse

BASE = urllib.parse.urlparse(os.environ["BASE_URL"])
HOST, PORT = BASE.hostname, BASE.port
STORAGE = os.environ["STORAGE"]
DCIM = os.path.join(STORAGE, "DCIM")
PASSWORD = os.environ["PASSWORD"]




def request(method, path, body=None, headers=None, source="127.0.0.1"):
    c = http.client.HTTPConnection(HOST, PORT, timeout=30, source_address=(source, 0))
    h = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    c.putrequest(method, path, skip_accept_encoding=True)
    for k, v in h.items():
        c.putheader(k, v)
    if body is not None:
        c.putheader("Content-Length", str(len(body)))
    c.endheaders(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def js(data):
    try:
        return json.loads(data)
    except ValueError:
        return {}


def media_files():
    out = []
    for d in sorted(os.listdir(DCIM)) if os.path.isdir(DCIM) else []:
        out += [os.path.join(DCIM, d, f) for f in sorted(os.listdir(os.path.join(DCIM, d)))]
    return out


def shutterctl(*args):
    p = subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, js(p.stdout)


def login(source="127.0.0.1"):
    s, h, d = request("POST", "/api/login", {"password": PASSWORD}, source=source)
    ok(s == 200, f"login from {source}", f"{s} {d[:200]}")
    cookie = h["set-cookie"].split(";")[0]
    ok("HttpOnly" in h["set-cookie"] and "SameSite=Strict" in h["set-cookie"], "session cookie HttpOnly, SameSite=Strict",
       h["set-cookie"])
    ok(len(cookie.split("=", 1)[1]) == 43, "session id: 32 random bytes (43 base64url characters)")
    return cookie, js(d)["csrf"]


# --- 1. Nothing without a session. A photo first, so there is a file to ask for.
code, reply = shutterctl("tap")
ok(code == 0 and reply.get("ok"), "a photo by shutterctl tap", reply)
before = media_files()
for method, path in [("GET", "/api/status"), ("GET", "/api/files"), ("GET", "/files/1000001"),
                     ("HEAD", "/files/1000001"), ("GET", "/files/1000001/thumbnail"), ("GET", "/static/app.js"),
                     ("POST", "/api/photo"), ("POST", "/api/record"), ("POST", "/api/logout"),
                     ("DELETE", "/api/files/1000001"), ("GET", "/api/session"), ("GET", "/preview.mjpg"),
                     ("GET", "/nonexistent"), ("GET", "/files/"), ("GET", "/api/settings"), ("POST", "/api/settings"),
                     ("POST", "/api/settings/reset"), ("POST", "/api/focus")]:
    body = {"action": "start"} if path == "/api/record" else None
    body = {"key": "camera.exposure.ev", "value": 3} if path == "/api/settings" and method == "POST" else body
    s, h, d = request(method, path, body,
                      headers={"Cookie": "shutter_session=forged-" + "x" * 36})
    ok(s == 401, f"{method} {path} without a session: 401", f"got {s}")
s, h, _ = request("GET", "/")
ok(s == 303 and h.get("location") == "/login", "GET / without a session: 303 to /login", f"{s} {h}")
s, _, d = request("GET", "/login")
ok(s == 200 and b"password" in d, "the login page is public")
ok(media_files() == before, "no file taken or deleted without a session")
code, reply = shutterctl("get", "camera.exposure.ev")
ok(reply.get("value") == 0 and reply.get("source") == "config", "no setting changed without a session", reply)

# --- 2. Wrong passwords slow down, per client address.
s, h, d = request("POST", "/api/login", {"password": "wrong-1"})
ok(s == 401 and js(d).get("retryAfterSeconds") == 1, "first wrong password: 401, retry after 1 s", d)
s, h, d = request("POST", "/api/login", {"password": PASSWORD})
ok(s == 429 and int(h.get("retry-after", "0")) >= 1, "an attempt before then is refused unchecked (even the right one): 429",
   f"{s} {d}")
s, h, d = request("POST", "/api/login", {"password": "wrong-x"}, source="127.0.0.2")
ok(s == 401 and js(d).get("retryAfterSeconds") == 1, "another address is not slowed by the first one's failures", d)
time.sleep(1.1)
s, h, d = request("POST", "/api/login", {"password": "wrong-2"})
ok(s == 401 and js(d).get("retryAfterSeconds") == 2, "second wrong password in a row: retry after 2 s", d)
time.sleep(2.1)
s, h, d = request("POST", "/api/login", {"password": "wrong-3"})
ok(s == 401 and js(d).get("retryAfterSeconds") == 4, "third: 4 s (doubling)", d)
s, h, d = request("POST", "/api/login", {"password": PASSWORD + "\u0000anything"}, source="127.0.0.5")
ok(s == 401, "the password followed by a NUL and more is a wrong password (not cut at the NUL)", f"{s} {d}")
s, h, d = request("POST", "/api/login", {"nopassword": 1}, source="127.0.0.3")
ok(s == 400, "a login body without a password: 400")
time.sleep(4.1)
cookie, csrf = login()
auth = {"Cookie": cookie}
s, h, d = request("POST", "/api/login", {"password": "wrong-4"})
ok(s == 401 and js(d).get("retryAfterSeconds") == 1, "a right password clears the address's record", d)

# --- 3. State changes need the CSRF token and the same origin.
before = media_files()
s, _, d = request("POST", "/api/photo", headers=auth)
ok(s == 403, "POST /api/photo without X-CSRF-Token: 403", f"{s} {d}")
s, _, d = request("POST", "/api/photo", headers={**auth, "X-CSRF-Token": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")})
ok(s == 403, "POST with a wrong X-CSRF-Token: 403", f"{s} {d}")
for _ in range(40):  # a session whose token has a K (about half have one)
    s, h, d = request("POST", "/api/login", {"password": PASSWORD}, source="127.0.0.6")
    k_cookie, k_csrf = h["set-cookie"].split(";")[0], js(d)["csrf"]
    if "K" in k_csrf:
        break
kelvin = k_csrf.replace("K", "\u212a").encode()
s, _, d = request("POST", "/api/photo", headers={"Cookie": k_cookie, "X-CSRF-Token": kelvin})
ok("K" in k_csrf and s == 403, "the token with K written as U+212A KELVIN SIGN: 403 (bytes compared, not Unicode)",
   f"{s} {d}")
request("POST", "/api/logout", headers={"Cookie": k_cookie, "X-CSRF-Token": k_csrf})
s, _, d = request("POST", "/api/photo", headers={**auth, "X-CSRF-Token": csrf, "Origin": "http://evil.example"})
ok(s == 403, "POST with the token but another site's Origin: 403", f"{s} {d}")
s, _, d = request("POST", "/api/login", {"password": PASSWORD}, headers={"Origin": "http://evil.example"}, source="127.0.0.4")
ok(s == 403, "login from another site's page (Origin): 403", f"{s} {d}")
s, _, d = request("DELETE", f"/api/files/1000001", headers=auth)
ok(s == 403, "DELETE without X-CSRF-Token: 403")
for path, body in [("/api/settings", {"key": "camera.exposure.ev", "value": 3}), ("/api/settings/reset", {}),
                   ("/api/focus", {"x": 0.5, "y": 0.5})]:
    s, _, d = request("POST", path, body, headers=auth)
    ok(s == 403, f"POST {path} without X-CSRF-Token: 403", f"{s} {d}")
    s, _, d = request("POST", path, body, headers={**auth, "X-CSRF-Token": csrf, "Origin": "http://evil.example"})
    ok(s == 403, f"POST {path} from another site's Origin: 403", f"{s} {d}")
code, reply = shutterctl("get")
ok(all(x["source"] == "config" for x in reply["settings"]), "no setting changed by the refused requests")
ok(media_files() == before, "nothing taken or deleted by the refused requests")
post = {**auth, "X-CSRF-Token": csrf, "Origin": f"http://{HOST}:{PORT}"}

# --- 4. The API answers like shutterctl.
s, _, d = request("GET", "/api/status", headers=auth)
ok(s == 200 and js(d)["status"]["state"] == "idle", "GET /api/status: the service's status", d[:200])
def card_path(number, ext):
    return os.path.join(DCIM, f"{number // 10000}SHUTR", f"SHTR{number % 10000:04d}.{ext}")


def no_card_paths(value):
    """True when no string in a reply names a place on the card (issue 23 item 6)."""
    if isinstance(value, dict):
        return all(no_card_paths(v) for v in value.values())
    if isinstance(value, list):
        return all(no_card_paths(v) for v in value)
    return not (isinstance(value, str) and (STORAGE in value or value.startswith("/") and not value.startswith("/files/")))


s, _, d = request("POST", "/api/photo", headers=post)
j = js(d)
ok(s == 200 and j["ok"] and len(j["items"]) == 1 and j["items"][0]["name"].endswith(".JPG") and j["moment"],
   "POST /api/photo: the photo it took", d)
photo_number = j["items"][0]["number"]
photo_path = card_path(photo_number, "JPG")
ok(os.path.exists(photo_path) and j["items"][0]["url"] == f"/files/{photo_number}", "its file and URL")
ok("files" not in j and no_card_paths(j), "the reply names the photo by number and URL, not by its path on the card", d)
s, _, d = request("POST", "/api/record", {"action": "start"}, headers=post)
j = js(d)
ok(s == 200 and j["ok"] and j["note"] == "recording" and j["items"][0]["name"].endswith(".MP4"),
   "POST /api/record start: the clip's name", d)
ok("files" not in j and no_card_paths(j), "no path on the card in the record reply", d)
clip_number = j["items"][0]["number"]
s, _, d = request("POST", "/api/record", {"action": "start"}, headers=post)
ok(s == 409 and js(d).get("busy"), "a second record start: 409 busy, as shutterctl", d)
s, _, d = request("DELETE", f"/api/files/{clip_number}", headers=post)
ok(s == 409 and js(d).get("busy"), "the clip being recorded cannot be deleted: 409 busy", f"{s} {d}")
s, _, d = request("DELETE", "/api/files/last", headers=post)
ok(s == 409 and js(d)["error"].startswith("busy: recording SHTR") and os.path.exists(photo_path),
   "DELETE /api/files/last while recording: 409 with the reason, as shutterctl delete last", f"{s} {d}")
s, _, d = request("GET", f"/files/{clip_number}", headers=auth)
ok(s == 404, "nor downloaded while it is written")
time.sleep(2.5)
s, _, d = request("POST", "/api/record", {"action": "stop"}, headers=post)
j = js(d)
ok(s == 200 and j["ok"] and j["items"] and j["items"][0]["name"].endswith(".MP4") and no_card_paths(j),
   "POST /api/record stop: the clip, by number, no path on the card", d)
clip_path = card_path(j["items"][0]["number"], "MP4")
s, _, d = request("POST", "/api/record", {"action": "sideways"}, headers=post)
ok(s == 400, "record with a bad action: 400")

# --- 4b. Camera settings: get, set, reset and focus on the control socket's path.
s, _, d = request("GET", "/api/settings", headers=auth)
j = js(d)
keys = [x["key"] for x in j.get("settings", [])]
code, reply = shutterctl("get")
ok(s == 200 and j["ok"] and keys == [x["key"] for x in reply["settings"]] and "camera.exposure.ev" in keys
   and "flash.mode" in keys, f"GET /api/settings: every runtime setting, as shutterctl get ({len(keys)})", d[:200])
by = {x["key"]: x for x in j["settings"]}
ok(by["camera.exposure.ev"]["value"] == 0 and by["camera.exposure.ev"]["source"] == "config"
   and by["camera.exposure.ev"]["input"] == {"type": "number", "min": -8, "max": 8}
   and "-8...8" in by["camera.exposure.ev"]["allowed"], "ev: its value, source, the number input and what is allowed",
   by["camera.exposure.ev"])
ok(by["camera.whiteBalance.mode"]["input"]["type"] == "choice" and "daylight" in by["camera.whiteBalance.mode"]["input"]["choices"]
   and by["video.torch"]["input"] == {"type": "bool"} and by["camera.whiteBalance.gains"]["input"] == {"type": "json"},
   "choices, a checkbox and JSON text where they fit", [by[k]["input"] for k in ("camera.whiteBalance.mode", "video.torch")])
s, _, d = request("POST", "/api/settings", {"key": "camera.exposure.ev", "value": 1.5}, headers=post)
j = js(d)
ok(s == 200 and j["ok"] and j["key"] == "camera.exposure.ev" and j["value"] == 1.5 and j["source"] == "runtime",
   "POST /api/settings ev 1.5: set at runtime", d)
s, _, d = request("GET", "/api/settings", headers=auth)
ev = {x["key"]: x for x in js(d)["settings"]}["camera.exposure.ev"]
ok(ev["value"] == 1.5 and ev["source"] == "runtime" and ev.get("effective") == 1.5, "GET /api/settings shows it: runtime, in effect", ev)
code, reply = shutterctl("get", "camera.exposure.ev")
ok(reply.get("value") == 1.5 and reply.get("source") == "runtime", "and shutterctl get agrees", reply)
s, _, d = request("POST", "/api/settings", {"key": "camera.whiteBalance.gains", "value": [1.5, 2.0]}, headers=post)
ok(s == 200 and js(d)["value"] == [1.5, 2.0], "a JSON array value", d)
s, _, d = request("POST", "/api/settings", {"key": "camera.whiteBalance.gains", "value": None}, headers=post)
ok(s == 200 and js(d)["value"] is None and js(d)["source"] == "runtime", "null is a value (back to automatic)", d)
s, _, d = request("POST", "/api/settings", {"key": "camera.exposure.ev", "value": 9}, headers=post)
err = js(d).get("error", "")
ok(s == 400 and "camera.exposure.ev" in err and "-8...8" in err, "ev 9 refused (400), naming the key and what is allowed", d)
s, _, d = request("POST", "/api/settings", {"key": "camera.exposure.evv", "value": 1}, headers=post)
ok(s == 400 and "did you mean" in js(d).get("error", ""), "an unknown key refused with did you mean", d)
s, _, d = request("POST", "/api/settings", {"key": "video.fps", "value": 25}, headers=post)
ok(s == 400 and "restart" in js(d).get("error", ""), "a key that needs a restart refused, saying so", d)
s, _, d = request("POST", "/api/settings", {"key": "camera.exposure.ev"}, headers=post)
ok(s == 400 and "value" in js(d).get("error", ""), "a body without a value: 400", d)
code, reply = shutterctl("get", "camera.exposure.ev")
ok(reply.get("value") == 1.5, "the refused values changed nothing", reply)
s, _, d = request("POST", "/api/focus", {"x": 0.3, "y": 0.8}, headers=post)
j = js(d)
windows = {x["key"]: x for x in j.get("settings", [])}
ok(s == 200 and j["ok"] and windows["camera.focus.window"]["source"] == "runtime"
   and windows["camera.exposure.window"]["source"] == "runtime", "POST /api/focus 0.3 0.8: both windows set", d)
s, _, d = request("POST", "/api/focus", {"x": 1.5, "y": "middle"}, headers=post)
ok(s == 400 and "0 to 1" in js(d).get("error", ""), "focus outside the picture refused with what is allowed", d)
s, _, d = request("POST", "/api/settings/reset", {"key": "camera.exposure.ev"}, headers=post)
j = js(d)
ok(s == 200 and j["key"] == "camera.exposure.ev" and j["value"] == 0 and j["source"] == "config", "reset one key: back to config", d)
s, _, d = request("POST", "/api/settings/reset", {"key": "camera.exposure.nope"}, headers=post)
ok(s == 400 and "camera.exposure.nope" in js(d).get("error", ""), "reset of an unknown key refused, naming it", d)
s, _, d = request("POST", "/api/settings/reset", headers=post)
j = js(d)
reset_keys = sorted(x["key"] for x in j.get("settings", []))
ok(s == 200 and reset_keys == ["camera.exposure.window", "camera.focus.window", "camera.whiteBalance.gains"],
   "reset without a key: every runtime change", d)
code, reply = shutterctl("get")
ok(all(x["source"] == "config" for x in reply["settings"]), "nothing left at runtime")

# --- 5. Files: newest first, paged; downloads byte-identical; Range.
s, _, d = request("GET", "/api/files?page=1&perPage=2", headers=auth)
j = js(d)
numbers = [i["number"] for i in j["items"]]
ok(s == 200 and j["itemCount"] == 3 and j["pageCount"] == 2 and numbers == sorted(numbers, reverse=True)
   and numbers[0] == clip_number, "GET /api/files: newest first, paged", d)
s, _, d = request("GET", "/api/files?page=2&perPage=2", headers=auth)
ok([i["number"] for i in js(d)["items"]] == [1000001], "page 2 holds the oldest")
for number, path, ctype in [(photo_number, photo_path, "image/jpeg"), (clip_number, clip_path, "video/mp4")]:
    disk = open(path, "rb").read()
    s, h, d = request("GET", f"/files/{number}", headers=auth)
    ok(s == 200 and hashlib.sha256(d).digest() == hashlib.sha256(disk).digest() and h["content-type"] == ctype
       and h.get("accept-ranges") == "bytes", f"download {os.path.basename(path)} byte-identical ({len(d)} bytes)")
    size = len(disk)
    s, h, d = request("GET", f"/files/{number}", headers={**auth, "Range": "bytes=100-1099"})
    ok(s == 206 and d == disk[100:1100] and h["content-range"] == f"bytes 100-1099/{size}", "Range bytes=100-1099: 206")
    s, h, d = request("GET", f"/files/{number}", headers={**auth, "Range": f"bytes={size - 10}-"})
    ok(s == 206 and d == disk[-10:] and h["content-range"] == f"bytes {size - 10}-{size - 1}/{size}", "open-ended range")
    s, h, d = request("GET", f"/files/{number}", headers={**auth, "Range": "bytes=-300"})
    ok(s == 206 and d == disk[-300:], "suffix range bytes=-300")
    s, h, d = request("GET", f"/files/{number}", headers={**auth, "Range": f"bytes={size}-"})
    ok(s == 416 and h["content-range"] == f"bytes */{size}", "a range past the end: 416 bytes */size")
    s, h, d = request("GET", f"/files/{number}", headers={**auth, "Range": "bytes=0-1,5-6"})
    ok(s == 200 and d == disk, "several ranges: the whole file (allowed by RFC 9110)")
    s, h, d = request("HEAD", f"/files/{number}", headers=auth)
    ok(s == 200 and d == b"" and int(h["content-length"]) == size, "HEAD: the length, no body")
s, h, d = request("GET", f"/files/{photo_number}/thumbnail", headers=auth)
ok(s == 200 and d[:2] == b"\xff\xd8" and 0 < len(d) < 65536, "a photo's thumbnail is its EXIF JPEG thumbnail")

# --- 6. Crafted names: 404, nothing outside DCIM read.
secret = os.path.join(STORAGE, "secret.txt")
open(secret, "w").write("TOP-SECRET-CONTENT")
os.makedirs(os.path.join(DCIM, "100SHUTR"), exist_ok=True)
os.symlink(secret, os.path.join(DCIM, "100SHUTR", "SHTR0099.JPG"))
os.symlink(secret, os.path.join(DCIM, "100SHUTR", "SHTR0098.MP4"))
for path in ["/files/../secret.txt", "/files/..%2fsecret.txt", "/files/%2e%2e%2fsecret.txt", "/files//etc/passwd",
             "/files/%2Fetc%2Fpasswd", "/files/0", "/files/-1", "/files/1000000", "/files/9999999", "/files/99999999",
             "/files/1000001%00", "/files/1000001/../../secret.txt", "/files/100SHUTR%2FSHTR0001.JPG",
             "/files/SHTR0001.JPG", "/files/1000099", "/files/1000098", "/files/1000099/thumbnail", "/files/1009999",
             "/files/%201000001", "/files/1000001%00.txt", "/files/1e6", "/files/0x0F4241", "/api/files/../../secret.txt"]:
    s, _, d = request("GET", path, headers=auth)
    ok(s == 404 and b"TOP-SECRET" not in d, f"GET {path}: 404", f"{s} {d[:100]}")
for path in ["/api/files/1000099", "/api/files/..%2f..%2fsecret.txt", "/api/files/9999999"]:
    s, _, d = request("DELETE", path, headers=post)
    ok(s == 404, f"DELETE {path}: 404", f"{s}")
ok(open(secret).read() == "TOP-SECRET-CONTENT" and os.path.islink(os.path.join(DCIM, "100SHUTR", "SHTR0099.JPG")),
   "the file outside DCIM and the planted links are untouched")
s, _, d = request("GET", "/api/files?perPage=100", headers=auth)
ok(all(i["number"] not in (1000098, 1000099) for i in js(d)["items"]), "symlinks are not listed")
s, _, d = request("GET", "/static/", headers=auth)
ok(s == 404, "no directory listings")

# --- 6b. Links below DCIM are never followed (issue 23 item 2): a DCF directory that is a
# link out of DCIM, a photo that is a link to a real photo outside, a clip's poster that is
# a link: GET, HEAD, thumbnail and DELETE are 404, the list leaves them out, nothing outside
# is read or deleted.
import shutil
outside = STORAGE.rstrip("/") + "-outside"
os.makedirs(outside, exist_ok=True)
real_jpeg = open(photo_path, "rb").read()
for name in ["SHTR0005.JPG", "SHTR0007.JPG"]:
    open(os.path.join(outside, name), "wb").write(real_jpeg)
shutil.copy(clip_path, os.path.join(outside, "SHTR0006.MP4"))
open(os.path.join(outside, "SHTR0006.THM"), "wb").write(real_jpeg)
outside_before = {n: open(os.path.join(outside, n), "rb").read() for n in os.listdir(outside)}
os.symlink(outside, os.path.join(DCIM, "998SHUTR"))
os.symlink(os.path.join(outside, "SHTR0007.JPG"), os.path.join(DCIM, "100SHUTR", "SHTR0097.JPG"))
clip_thm = clip_path[:-4] + ".THM"
s, _, d = request("GET", f"/files/{clip_number}/thumbnail", headers=auth)
ok(os.path.exists(clip_thm) and s == 200 and d == open(clip_thm, "rb").read(),
   "a clip's own poster is its thumbnail (read through the directory's fd)", f"{s}")
if os.path.exists(clip_thm):
    os.rename(clip_thm, clip_thm + ".real")
os.symlink(os.path.join(outside, "SHTR0006.THM"), clip_thm)
for number in [9980005, 9980006, 1000097]:
    for method, path in [("GET", f"/files/{number}"), ("HEAD", f"/files/{number}"), ("GET", f"/files/{number}/thumbnail")]:
        s, _, d = request(method, path, headers={**auth, "Range": "bytes=0-99"} if "thumb" not in path else auth)
        ok(s == 404 and real_jpeg[:100] not in d, f"{method} {path} through a link: 404", f"{s} {d[:60]}")
    s, _, d = request("DELETE", f"/api/files/{number}", headers=post)
    ok(s == 404, f"DELETE /api/files/{number} through a link: 404", f"{s} {d[:100]}")
s, _, d = request("GET", f"/files/{clip_number}/thumbnail", headers=auth)
ok(s == 404 and d != real_jpeg, "a clip whose poster is a link: no thumbnail", f"{s}")
s, _, d = request("GET", "/api/files?perPage=100", headers=auth)
listed = {i["number"]: i for i in js(d)["items"]}
ok(s == 200 and not {9980005, 9980006, 1000097} & set(listed), "linked directory and file are not listed", sorted(listed))
ok("thumbnail" not in listed[clip_number], "nor a linked poster offered as a thumbnail", listed[clip_number])
ok({n: open(os.path.join(outside, n), "rb").read() for n in os.listdir(outside)} == outside_before
   and os.path.islink(os.path.join(DCIM, "998SHUTR")) and os.path.islink(os.path.join(DCIM, "100SHUTR", "SHTR0097.JPG")),
   "everything outside DCIM and the links themselves are untouched")
os.unlink(clip_thm)
if os.path.exists(clip_thm + ".real"):
    os.rename(clip_thm + ".real", clip_thm)

# --- 7. Delete after the clip is finished.
s, _, d = request("DELETE", f"/api/files/{clip_number}", headers=post)
ok(s == 200 and not os.path.exists(clip_path), "DELETE a finished clip: gone from the card", d)
s, _, d = request("GET", f"/files/{clip_number}", headers=auth)
ok(s == 404, "and no longer served")
s, _, d = request("GET", "/api/files?perPage=1", headers=auth)
newest = js(d)["items"][0]
ok(newest["kind"] == "photo", "the newest file is a photo", newest)
s, _, d = request("DELETE", "/api/files/last", headers=post)
ok(s == 200 and js(d) == {"ok": True, "deleted": newest["number"], "name": newest["name"]}
   and not os.path.exists(card_path(newest["number"], "JPG")), "DELETE /api/files/last: the photo just taken, gone", d)
code, reply = shutterctl("files")
ok(code == 0 and newest["number"] not in [i["number"] for i in reply["items"]], "shutterctl files no longer lists it")

# --- 7b. The page's files: a strong ETag (the SHA-256), 304 for If-None-Match, HEAD.
for path, headers in [("/login", {}), ("/static/login.js", {}), ("/static/app.css", {}), ("/", auth), ("/static/app.js", auth)]:
    s, h, d = request("GET", path, headers=headers)
    etag = h.get("etag", "")
    ok(s == 200 and etag == '"' + hashlib.sha256(d).hexdigest() + '"' and h.get("cache-control") == "no-cache",
       f"GET {path}: ETag is the SHA-256 of the body, Cache-Control: no-cache", f"{s} {h}")
    s, h, again = request("GET", path, headers={**headers, "If-None-Match": etag})
    ok(s == 304 and again == b"" and h.get("etag") == etag, f"GET {path} If-None-Match: 304, no body", f"{s} {again[:60]}")
    s, h, head = request("HEAD", path, headers=headers)
    ok(s == 200 and head == b"" and h.get("etag") == etag, f"HEAD {path}: 200, the ETag, no body", f"{s}")
s, _, d = request("GET", "/", headers={"If-None-Match": etag})
ok(s == 303, "the page itself needs a session, If-None-Match or not", f"{s}")
s, _, d = request("GET", "/api/camera", headers=auth)
ok(s == 200 and js(d)["cameras"][0]["inUse"], "GET /api/camera: the cameras, as shutterctl camera", d)

# --- 8. A 1 GB body is cut off before it is read.
def huge(path, extra):
    sock = socket.create_connection((HOST, PORT), timeout=30)
    sock.sendall((f"POST {path} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nContent-Type: application/json\r\n{extra}"
                  f"Content-Length: 1000000000\r\n\r\n").encode() + b"{" + b" " * 4096)
    resp = b""
    sent = 4097
    sock.settimeout(30)
    while b"\r\n\r\n" not in resp:
        chunk = sock.recv(4096)
        if not chunk:
            break
        resp += chunk
    # The server answered and closes: further bytes cannot be delivered for long.
    try:
        for _ in range(64):
            sock.sendall(b" " * 65536)
            sent += 65536
    except OSError:
        pass
    sock.close()
    return resp, sent
resp, sent = huge("/api/login", "")
ok(resp.startswith(b"HTTP/1.1 413"), "a login claiming a 1 GB body: 413 before it is sent", resp[:60])
ok(sent < 10_000_000, f"the connection ended after {sent} of 1000000000 bytes")
resp, sent = huge("/api/photo", f"Cookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n")
ok(resp.startswith(b"HTTP/1.1 413"), "the same with a session: 413", resp[:60])
s, _, d = request("POST", "/api/record", b'{"action":"start"' + b" " * 8000 + b"}", headers={**post, "Content-Type": "application/json"})
ok(s == 413, "an 8 KB body: 413 (limit 4 KiB)")
# Chunked: no length up front. A body past 4 KiB that ends is answered 413 once it has
# ended (libmicrohttpd cannot answer mid-body); one that goes on past 64 KiB is cut off.
sock = socket.create_connection((HOST, PORT), timeout=30)
sock.sendall((f"POST /api/record HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nCookie: {cookie}\r\nX-CSRF-Token: {csrf}\r\n"
              f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
             + b"1000\r\n" + b"{" + b" " * 4095 + b"\r\n" + b"1000\r\n" + b" " * 4095 + b"}\r\n0\r\n\r\n")
resp = b""
while b"\r\n\r\n" not in resp:
    chunk = sock.recv(4096)
    if not chunk:
        break
    resp += chunk
sock.close()
ok(resp.startswith(b"HTTP/1.1 413"), "an 8 KiB chunked body: 413", resp[:80])
sock = socket.create_connection((HOST, PORT), timeout=30)
sock.sendall((f"POST /api/login HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
dropped = False
try:
    for _ in range(2000):
        sock.sendall(b"1000\r\n" + b" " * 4096 + b"\r\n")
except OSError:
    dropped = True
if not dropped:
    sock.settimeout(10)
    try:
        dropped = sock.recv(100) in (b"",) or True
    except OSError:
        dropped = True
sock.close()
ok(dropped, "a chunked body past the limit: the connection is dropped")

# --- 9. 200 idle connections do not stop a photo by the button.
idle = []
for _ in range(200):
    try:
        idle.append(socket.create_connection((HOST, PORT), timeout=5))
    except OSError:
        pass
n_before = len(media_files())
code, reply = shutterctl("press")
# Held past button.stabilityMs (20 ms): the thin shutterctl starts in a few ms, and a
# release within 20 ms of its press is a bounce, not a press.
time.sleep(0.15)
code2, reply2 = shutterctl("release")
ok(code == 0 and code2 == 0 and reply2.get("ok") and reply2["files"] and reply2["files"][0].endswith(".JPG"),
   f"with {len(idle)} idle web connections open, press/release takes a photo", reply2)
code, reply = shutterctl("tap")
ok(code == 0 and reply.get("ok") and len(media_files()) == n_before + 2, "and tap another")
for sock in idle:
    sock.close()
deadline = time.time() + 40
while True:
    try:
        s, _, d = request("GET", "/api/status", headers=auth)
        if s == 200:
            break
    except OSError:
        pass
    if time.time() > deadline:
        ok(False, "the web server serves again once the idle connections are gone")
    time.sleep(0.2)
ok(True, "the web server serves again once the idle connections are gone")

# --- 10. Logout ends the session.
s, _, _ = request("POST", "/api/logout", headers=post)
ok(s == 200, "logout")
s, _, _ = request("GET", "/api/status", headers=auth)
ok(s == 401, "the old cookie no longer works")
webcheck.passed("web api: ")
