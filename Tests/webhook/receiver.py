#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A webhook receiver for WebhookTests: `receiver.py PORT DIR [CERT KEY]` (with CERT and
KEY: https, TLS with that certificate). How it answers is read from
DIR/mode at each request: "ok" (200), "fail" (500) or "slow" (waits 5 s, then 200). Each
request is one JSON line in DIR/requests.jsonl: the event id header, the answer, whether the
answer reached the client ("delivered"), the content type, the event's fields, and the size
of an attached file."""
import json
import os
import socket
import sys
import time
from email.parser import BytesParser
from email.policy import default
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, DIR = int(sys.argv[1]), sys.argv[2]


def client_gone(sock):
    """The client closed its end (it gave up waiting): a read sees the end of the stream."""
    if hasattr(sock, "do_handshake"):
        return False  # TLS: a peek is not possible on an SSL socket; assume it waited
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        mode = open(os.path.join(DIR, "mode")).read().strip() if os.path.exists(os.path.join(DIR, "mode")) else "ok"
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        ctype = self.headers.get("Content-Type", "")
        event, file_bytes = {}, None
        try:
            if ctype.startswith("multipart/form-data"):
                msg = BytesParser(policy=default).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
                for part in msg.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    data = part.get_payload(decode=True)
                    if name == "event":
                        event = json.loads(data)
                    elif name == "file":
                        file_bytes = len(data)
            else:
                event = json.loads(body)
        except Exception as e:  # noqa: BLE001 - the test reads what went wrong
            event = {"unreadable": str(e)}
        code = 500 if mode == "fail" else 200
        if mode == "slow":
            time.sleep(5)
        delivered = not client_gone(self.connection)
        try:
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.wfile.flush()
        except OSError:
            delivered = False
        line = {"id": self.headers.get("X-Shutter-Event-Id"), "code": code, "delivered": delivered, "mode": mode,
                "type": ctype.split(";")[0], "event": event, "file_bytes": file_bytes, "time": time.time()}
        with open(os.path.join(DIR, "requests.jsonl"), "a") as f:
            f.write(json.dumps(line) + "\n")


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
if len(sys.argv) > 4:
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
