#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The web page under TLS (web.tlsCertificate / web.tlsKey): a client that trusts the
certificate (CA_FILE) logs in and reads the status; the session cookie is Secure;
a plain-HTTP request to the same port gets no page; TLS 1.0 and 1.1 are refused; a
client's renegotiation is refused with the no_renegotiation alert (openssl s_client,
the tool testssl.sh drives), and the server still serves afterwards."""
import http.client, json, os, ssl, subprocess, sys, urllib.parse, warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # TLSVersion.TLSv1: old on purpose

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

for version in [ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1]:
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.load_verify_locations(os.environ["CA_FILE"])
    old.minimum_version = old.maximum_version = version
    try:
        old.set_ciphers("ALL:@SECLEVEL=0")
        with ssl.create_connection((u.hostname, u.port), timeout=10) as raw, old.wrap_socket(raw, server_hostname=u.hostname):
            print("FAIL", version.name, "accepted")
            sys.exit(1)
    except (ssl.SSLError, OSError) as e:
        print("ok  ", version.name, "refused:", type(e).__name__)

# "R" asks s_client to renegotiate (TLS 1.2: TLS 1.3 has none); the server must answer
# with the no_renegotiation alert, which s_client reports as an error.
p = subprocess.run(["openssl", "s_client", "-connect", f"{u.hostname}:{u.port}", "-no_tls1_3", "-CAfile", os.environ["CA_FILE"]],
                   input=b"R\n", capture_output=True, timeout=30)
text = (p.stdout + p.stderr).decode(errors="replace")
if "RENEGOTIATING" not in text or "no renegotiation" not in text:
    print("FAIL renegotiation not refused with no_renegotiation:", text[-800:])
    sys.exit(1)
print("ok   renegotiation refused with no_renegotiation (s_client exit", p.returncode, ")")
c = http.client.HTTPSConnection(u.hostname, u.port, timeout=30, context=ctx)
c.request("GET", "/api/status", headers={"Cookie": set_cookie.split(";")[0]})
r = c.getresponse()
r.read()
if r.status != 200:
    print("FAIL the page after a refused renegotiation:", r.status)
    sys.exit(1)
print("ok   the page still serves after a refused renegotiation")
