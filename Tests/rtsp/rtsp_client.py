# SPDX-License-Identifier: BSD-2-Clause
"""A small RTSP client for the live stream's edge tests (rtsp_edges.py): raw requests on
one TCP connection, and a viewer that plays over TCP (interleaved) and counts the frames
it receives (RTP packets with the marker bit on the video channel)."""
import base64
import re
import socket
import struct
import threading
import time


class Conn:
    """One RTSP connection; `source` binds the client side to another loopback address."""

    def __init__(self, host, port, password=None, source=None, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.host, self.port = host, port
        self.cseq = 0
        self.buf = b""
        self.auth = base64.b64encode(b"viewer:" + password).decode() if password is not None else None
        self.session = None

    def url(self, path):
        return f"rtsp://{self.host}:{self.port}{path}"

    def send(self, method, url, headers=None, body=b""):
        self.cseq += 1
        lines = [f"{method} {url} RTSP/1.0", f"CSeq: {self.cseq}", "User-Agent: shutter-edge-test"]
        if self.auth:
            lines.append("Authorization: Basic " + self.auth)
        if self.session:
            lines.append("Session: " + self.session)
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        self.buf += data

    def read(self):
        """("rtp", channel, payload) or ("response", status, headers, body)."""
        while True:
            if self.buf[:1] == b"$":
                if len(self.buf) >= 4:
                    channel, length = self.buf[1], struct.unpack(">H", self.buf[2:4])[0]
                    if len(self.buf) >= 4 + length:
                        payload = self.buf[4:4 + length]
                        self.buf = self.buf[4 + length:]
                        return ("rtp", channel, payload)
            elif self.buf:
                end = self.buf.find(b"\r\n\r\n")
                if end >= 0:
                    head = self.buf[:end].decode("latin-1").split("\r\n")
                    headers = {}
                    for line in head[1:]:
                        k, _, v = line.partition(":")
                        headers[k.strip().lower()] = v.strip()
                    length = int(headers.get("content-length", "0"))
                    if len(self.buf) >= end + 4 + length:
                        body = self.buf[end + 4:end + 4 + length]
                        self.buf = self.buf[end + 4 + length:]
                        m = re.match(r"RTSP/1\.0 (\d+)", head[0])
                        return ("response", int(m.group(1)) if m else 0, headers, body)
            self._fill()

    def request(self, method, url, headers=None, body=b"", on_rtp=None):
        self.send(method, url, headers, body)
        while True:
            m = self.read()
            if m[0] == "response":
                return m[1], m[2], m[3]
            if on_rtp:
                on_rtp(m[1], m[2])

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Viewer(threading.Thread):
    """DESCRIBE, SETUP of every track over TCP, PLAY, then counts video frames until stopped;
    a GET_PARAMETER every 3 s keeps the session."""

    def __init__(self, host, port, path, password, source=None):
        super().__init__(daemon=True)
        self.host, self.port, self.path, self.password, self.source = host, port, path, password, source
        self.frames = 0
        self.audio_packets = 0
        self.status = None  # the first non-200 answer, or 200 once playing
        self.error = None
        self.playing = threading.Event()
        self.done = threading.Event()
        self._halt = threading.Event()
        self.conn = None

    def _count(self, channel, payload):
        if channel == 0 and len(payload) > 1 and payload[1] & 0x80:
            self.frames += 1
        elif channel == 2:
            self.audio_packets += 1

    def run(self):
        try:
            c = self.conn = Conn(self.host, self.port, self.password, self.source)
            url = c.url(self.path)
            status, headers, body = c.request("DESCRIBE", url, {"Accept": "application/sdp"})
            if status != 200:
                self.status = status
                return
            base = headers.get("content-base", url + "/")
            controls = re.findall(r"a=control:(\S+)", body.decode("latin-1"))
            tracks = [c for c in controls if c != "*"]
            for i, control in enumerate(tracks):
                track = control if control.startswith("rtsp://") else base.rstrip("/") + "/" + control
                status, headers, _ = c.request("SETUP", track,
                                               {"Transport": f"RTP/AVP/TCP;unicast;interleaved={2 * i}-{2 * i + 1}"})
                if status != 200:
                    self.status = status
                    return
                c.session = headers.get("session", "").split(";")[0]
            status, _, _ = c.request("PLAY", base, {"Range": "npt=0.000-"}, on_rtp=self._count)
            self.status = status
            if status != 200:
                return
            self.playing.set()
            c.sock.settimeout(1.0)
            last_keepalive = time.monotonic()
            while not self._halt.is_set():
                if time.monotonic() - last_keepalive > 3:
                    c.send("GET_PARAMETER", base)
                    last_keepalive = time.monotonic()
                try:
                    m = c.read()
                except socket.timeout:
                    continue
                if m[0] == "rtp":
                    self._count(m[1], m[2])
            try:
                c.sock.settimeout(2.0)
                c.send("TEARDOWN", base)
            except OSError:
                pass
        except Exception as e:  # noqa: BLE001 - reported by the scenario
            self.error = repr(e)
        finally:
            if self.conn:
                self.conn.close()
            self.done.set()

    def stop(self):
        self._halt.set()
        self.join(10)
