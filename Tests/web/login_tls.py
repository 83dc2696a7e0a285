#!/usr/bin/env python3
"""The web page under TLS (web.tlsCertificate / web.tlsKey): a client that trusts the
certificate (CA_FILE) logs in and reads the status; the session cookie is Secure;
a plain-HTTP request to the same port gets no page."""
import http.client, json, os, ssl, sys, urllib.parse

u = urllib.parse.urlparse(os.environ["BASE_URL"])
ctx = ssl.create_default_context(cafile=os.environ["CA_FILE"])
c = http.client.HTTPSConnection(u.hostname, u.port, timeout=30, context=ctx)
c.request("POST", "/api/login", json.dumps({"password": os.environ["PASSWORD"]}), {"Content-Type": "application/json"})
r = c.getresponse()
body = r.read()
if r.status != 200:
    print("FAIL login over TLS", r.status, body)
    sys.exit(1)
set_cookie = r.getheader("Set-Cookie")
flags = [f.strip().lower() for f in set_cookie.split(";")[1:]]
if "secure" not in flags or "httponly" not in flags:
    print("FAIL the session cookie under TLS is not Secure and HttpOnly:", set_cookie)
    sys.exit(1)
c.request("GET", "/api/status", headers={"Cookie": set_cookie.split(";")[0]})
r = c.getresponse()
status = json.loads(r.read())
if r.status != 200 or not status.get("ok"):
    print("FAIL status over TLS", r.status, status)
    sys.exit(1)
print("ok   TLS: logged in, cookie flags", "; ".join(flags), "- state", status["status"]["state"])

plain = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
try:
    plain.request("GET", "/api/status")
    r = plain.getresponse()
    r.read()
    print("FAIL plain HTTP on the TLS port answered", r.status)
    sys.exit(1)
except (http.client.HTTPException, OSError) as e:
    print("ok   plain HTTP on the TLS port gets no page:", type(e).__name__)
