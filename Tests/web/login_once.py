#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Logs in once at BASE_URL and reads the status: the smallest proof a web server answers."""
import http.client, json, os, sys, urllib.parse

u = urllib.parse.urlparse(os.environ["BASE_URL"])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("POST", "/api/login", json.dumps({"password": os.environ["PASSWORD"]}), {"Content-Type": "application/json"})
r = c.getresponse()
body = r.read()
if r.status != 200:
    print("FAIL login", r.status, body)
    sys.exit(1)
cookie = r.getheader("Set-Cookie").split(";")[0]
c.request("GET", "/api/status", headers={"Cookie": cookie})
r = c.getresponse()
status = json.loads(r.read())
if r.status != 200 or not status.get("ok"):
    print("FAIL status", r.status, status)
    sys.exit(1)
print("ok   logged in and read the status:", status["status"]["state"])
