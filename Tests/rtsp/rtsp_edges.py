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


def rss():
    with open(f"/proc/{os.environ['DAEMON_PID']}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def open_files():
    return len(os.listdir(f"/proc/{os.environ['DAEMON_PID']}/fd"))


def photos():
    return ctl("status")[1].get("status", {}).get("counters", {}).get("photos", 0)


def address(i):
    """The i-th loopback address other than 127.0.0.1 (all of 127/8 is this machine)."""
    return f"127.0.{i // 250}.{i % 250 + 2}"


def idle():
    """Peers that connect and send nothing, from many addresses, for IDLE_SECONDS: what they
    hold is bounded, every tap meanwhile is saved, the control socket and a viewer work after."""
    import resource
    import selectors
    import threading
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    seconds = float(os.environ.get("IDLE_SECONDS", "20"))
    want = int(os.environ.get("IDLE_CONNECTIONS", "1000"))
    photos_before = photos()
    taps = []

    peers_done = threading.Event()

    def tapper():
        while not peers_done.is_set():
            code, reply = ctl("tap")
            taps.append((code, reply.get("files", reply)))
            time.sleep(0.5)

    t = threading.Thread(target=tapper)
    t.start()
    sel = selectors.DefaultSelector()
    held, made, failed, most_files, most_connections, n = set(), 0, 0, 0, 0, 0
    # For IDLE_SECONDS and until WANT connections were made (at most three times as long):
    # a slow machine makes them all the same, later.
    start = time.monotonic()

    def going():
        t = time.monotonic() - start
        return t < 3 * seconds and (t < seconds or made < want)

    while going():
        for key, _ in sel.select(timeout=0):
            try:
                gone = key.fileobj.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                held.discard(key.fileobj)
        while len(held) < want and going():
            n += 1
            try:
                s = socket.create_connection((HOST, PORT), timeout=1, source_address=(address(n % 50), 0))
            except OSError:
                failed += 1
                break
            made += 1
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            held.add(s)
        most_files = max(most_files, open_files())
        most_connections = max(most_connections, live().get("rtspConnections", 0))
        time.sleep(0.2)
    peers_done.set()
    t.join()
    for s in held:
        s.close()
    figures = live()
    print(f"idle peers for {time.monotonic() - start:.0f} s: {made} connections made ({failed} failed to connect), at most "
          f"{most_connections} held by the service, {most_files} descriptors open in it; turned away "
          f"{figures.get('rtspTurnedAway')}, closed idle {figures.get('rtspIdleClosed')}")
    check(made >= want, f"the peers made at least {want} connections")
    check(most_connections <= int(os.environ.get("MAX_CONNECTIONS", "32")), "the connections held are bounded")
    check(figures.get("rtspTurnedAway", 0) > 0, "peers over the bound were turned away")
    check(figures.get("rtspIdleClosed", 0) > 0, "peers that sent nothing were closed")
    bad = [t for t in taps if t[0] != 0]
    check(len(taps) > 0 and not bad, f"every tap answered with its file ({len(taps)} taps; failed: {bad[:3]})")
    check(photos() - photos_before == len(taps), f"every tap saved a photo ({photos() - photos_before} of {len(taps)})")
    start = time.monotonic()
    code, _ = ctl("status")
    check(code == 0, f"the control socket answers after ({time.monotonic() - start:.2f} s)")
    v = play("/live")
    got = frames_over([v], 2)[0]
    v.stop()
    check(got > 10, f"a viewer plays after ({got} frames in 2 s)")


def announce():
    """Unauthenticated requests with large bodies and headers: nothing is buffered beyond a
    few KB (the service's resident memory), and the stream goes on."""
    import threading
    v = play("/live")
    base = rss()
    peak = [base]
    sampling = threading.Event()

    def sample():
        while not sampling.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.05)

    t = threading.Thread(target=sample)
    t.start()
    sent = []

    def body_sender(i):
        c = Conn(HOST, PORT, None, source=address(i))
        head = (f"ANNOUNCE rtsp://{HOST}:{PORT}/live RTSP/1.0\r\nCSeq: 1\r\nContent-Type: application/sdp\r\n"
                f"Content-Length: {200 << 20}\r\n\r\n").encode()
        chunk = b"v" * (1 << 20)
        n = 0
        try:
            c.sock.sendall(head)
            for _ in range(64):
                c.sock.sendall(chunk)
                n += len(chunk)
        except OSError:
            pass
        sent.append(n)
        c.close()

    def header_sender(i, line_bytes, lines, options_first=False):
        c = Conn(HOST, PORT, None, source=address(i))
        n = 0
        start = time.monotonic()
        answer = "none"
        try:
            if options_first:  # one request answered first: the peer is past the first-request deadline
                c.request("OPTIONS", c.url("/live"))
            c.sock.sendall(f"OPTIONS rtsp://{HOST}:{PORT}/live RTSP/1.0\r\nCSeq: 1\r\n".encode())
            line = b"X-Pad: " + b"p" * line_bytes + b"\r\n"
            for _ in range(lines):
                c.sock.sendall(line)
                n += len(line)
            c.sock.sendall(b"\r\n")
            c.sock.settimeout(10)
            answer = c.sock.recv(64).split(b"\r\n")[0].decode("latin-1") or "closed"
        except OSError as e:
            answer = f"closed ({e.__class__.__name__})"
        sent.append(n)
        print(f"a request with {lines} header line(s) of {line_bytes} bytes"
              f"{' after an OPTIONS' if options_first else ''}: {answer} after "
              f"{time.monotonic() - start:.2f} s")
        c.close()

    senders = [threading.Thread(target=body_sender, args=(i,)) for i in range(2)]
    senders += [threading.Thread(target=header_sender, args=(2, 16 << 20, 1)),
                threading.Thread(target=header_sender, args=(3, 100, 100_000)),
                threading.Thread(target=header_sender, args=(4, 100, 300_000, True))]
    for s in senders:
        s.start()
    for s in senders:
        s.join(120)
    time.sleep(0.5)
    sampling.set()
    t.join()
    after = frames_over([v], 2)[0]
    v.stop()
    grew = (peak[0] - base) / (1 << 20)
    print(f"bodies and headers sent: {sum(sent) / (1 << 20):.0f} MB; resident {base / (1 << 20):.1f} MB before, "
          f"peak {peak[0] / (1 << 20):.1f} MB (+{grew:.1f} MB)")
    check(grew < 16, f"the service's memory stayed within 16 MB of where it was (+{grew:.1f} MB)")
    check(after > 10, f"the viewer played on ({after} frames in 2 s)")


def guesses():
    """Ten wrong passwords a second from one address; the page's password from another is
    accepted every time."""
    import base64
    import threading
    password = os.environ["PASSWORD"].encode()
    stop = threading.Event()
    wrong = [0, 0]

    def guesser():
        c = Conn(HOST, PORT, b"guess", source=address(7))
        i = 0
        while not stop.is_set():
            i += 1
            c.auth = base64.b64encode(b"viewer:guess %d" % i).decode()
            status, _, _ = c.request("DESCRIBE", c.url("/live"))
            wrong[0] += 1
            wrong[1] += status == 401
            time.sleep(0.1)
        c.close()

    t = threading.Thread(target=guesser)
    t.start()
    time.sleep(1)
    answers = []
    for i in range(10):
        c = Conn(HOST, PORT, password, source=address(8))
        answers.append(c.request("DESCRIBE", c.url("/live"))[0])
        c.close()
        time.sleep(0.3)
    c = Conn(HOST, PORT, password, source=address(7))
    from_guesser = c.request("DESCRIBE", c.url("/live"))[0]
    c.close()
    stop.set()
    t.join()
    print(f"{wrong[0]} guesses ({wrong[1]} answered 401); the owner's 10 tries from another address: {answers}; "
          f"the right password from the guesser's address: {from_guesser}")
    check(wrong[0] >= 20 and wrong[1] == wrong[0], "every guess refused")
    check(answers == [200] * 10, "the owner's password accepted every time")
    check(from_guesser == 401, "the guesser's own address waits")


def nul():
    """A NUL in the Basic password does not end it: the token followed by junk is refused."""
    c = Conn(HOST, PORT, TOKEN + b"\0junk")
    with_nul = c.request("DESCRIBE", c.url("/live"))[0]
    c.close()
    c = Conn(HOST, PORT, TOKEN, source=address(1))
    plain = c.request("DESCRIBE", c.url("/live"))[0]
    c.close()
    print(f"token + NUL + junk: {with_nul}; the token: {plain}")
    check(with_nul == 401, "the token with a NUL and junk is refused")
    check(plain == 200, "the token alone is accepted")


def reconnects():
    """With the viewers' places all but full, a viewer that leaves (closes its connection,
    no TEARDOWN) and comes straight back finds its place: COUNT times."""
    count = int(os.environ.get("RECONNECTS", "300"))
    others = [play("/live") for _ in range(3)]
    refused, other, start = 0, [], time.monotonic()
    for i in range(count):
        c = Conn(HOST, PORT, TOKEN)
        url = c.url("/live")
        c.request("DESCRIBE", url)
        status, headers, _ = c.request("SETUP", url + "/stream=0",
                                       {"Transport": "RTP/AVP/TCP;unicast;interleaved=0-1"})
        if status == 200:
            c.session = headers.get("session", "").split(";")[0]
            status, _, _ = c.request("PLAY", url, {"Range": "npt=0.000-"})
        refused += status == 503
        if status not in (200, 503):
            other.append(status)
        c.close()
    took = time.monotonic() - start
    got = frames_over(others, 2)
    for v in others:
        v.stop()
    print(f"{count} immediate reconnects in {took:.1f} s: {refused} refused (503), other answers {other[:5]}; "
          f"the other viewers meanwhile: {got} frames in 2 s")
    check(refused == 0 and not other, "every immediate reconnect played")
    check(all(g > 10 for g in got), "the other viewers played on")


def tunnel():
    """RTSP over HTTP is not offered: a tunnel's GET and POST (the same cookie, on connections
    that logged in, as the first request and after a DESCRIBE) get no tunnel, the daemon stays
    up, and a viewer plays after. (GStreamer's tunnel merge asserted in GLib: a CRITICAL.)"""
    import base64
    auth = "Authorization: Basic " + base64.b64encode(b"viewer:" + TOKEN).decode() + "\r\n"
    get = f"GET /live HTTP/1.0\r\nx-sessioncookie: abcdef\r\nAccept: application/x-rtsp-tunnelled\r\n{auth}\r\n"
    post = (f"POST /live HTTP/1.0\r\nx-sessioncookie: abcdef\r\nContent-Type: application/x-rtsp-tunnelled\r\n"
            f"Content-Length: 32767\r\n{auth}\r\n")
    answers = []
    for round_ in range(20):
        conns = []
        for i, first in enumerate([get, post, None, None]):
            c = Conn(HOST, PORT, TOKEN, source=address(200 + i), timeout=2)
            if first is None:
                c.request("DESCRIBE", c.url("/live"))
                c.sock.sendall((get if i == 2 else post).encode())
            else:
                c.sock.sendall(first.encode())
            conns.append(c)
        for c in conns:
            try:
                c.sock.settimeout(0.2)
                data = c.sock.recv(4096)
                answers.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
            except OSError:
                answers.append("(nothing)")
        for c in conns:
            c.close()
    tunnels = sum(a.startswith("HTTP/1.0 200") or a.startswith("HTTP/1.1 200") for a in answers)
    print(f"{len(answers)} tunnel requests: {tunnels} opened a tunnel; answers {sorted(set(answers))[:6]}")
    check(tunnels == 0, "no RTSP-over-HTTP tunnel is opened")
    # The connections closed here are let go by the server in their own time (a loaded
    # machine's); a viewer that came while the stream was being taken down would get 503.
    deadline = time.monotonic() + 30
    while live().get("rtspConnections", 0) > 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    try:
        v = play("/live")
    except SystemExit as e:  # the known race (noted in issue 41): once more, after it is over
        print(f"first viewer after the tunnels: {e}; again in 3 s")
        time.sleep(3)
        v = play("/live")
    got = frames_over([v], 2)[0]
    v.stop()
    check(got > 10, f"a viewer plays after ({got} frames in 2 s)")


def fuzz():
    """Mutated requests (seeded, FUZZ_COUNT of them within FUZZ_SECONDS): the service answers
    or closes, never dies, and a viewer plays after."""
    import base64
    import random
    seed = int(os.environ.get("FUZZ_SEED", str(int(time.time()))))
    count = int(os.environ.get("FUZZ_COUNT", "1500"))
    seconds = float(os.environ.get("FUZZ_SECONDS", "60"))
    rng = random.Random(seed)
    auth = "Authorization: Basic " + base64.b64encode(b"viewer:" + TOKEN).decode() + "\r\n"
    url = f"rtsp://{HOST}:{PORT}/live"
    corpus = [
        f"OPTIONS {url} RTSP/1.0\r\nCSeq: 1\r\n\r\n",
        f"DESCRIBE {url} RTSP/1.0\r\nCSeq: 2\r\nAccept: application/sdp\r\n{auth}\r\n",
        f"SETUP {url}/stream=0 RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n{auth}\r\n",
        f"SETUP {url}/stream=0 RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP;unicast;client_port=5000-5001\r\n{auth}\r\n",
        f"PLAY {url} RTSP/1.0\r\nCSeq: 4\r\nSession: 12345678\r\nRange: npt=0.000-\r\n{auth}\r\n",
        f"GET_PARAMETER {url} RTSP/1.0\r\nCSeq: 5\r\nSession: 12345678\r\n{auth}\r\n",
        f"SET_PARAMETER {url} RTSP/1.0\r\nCSeq: 6\r\nContent-Type: text/parameters\r\nContent-Length: 9\r\n{auth}\r\nfoo: bar\n",
        f"ANNOUNCE {url} RTSP/1.0\r\nCSeq: 7\r\nContent-Type: application/sdp\r\nContent-Length: 20\r\n\r\nv=0\r\no=- 0 0 IN IP4 \r\n",
        f"TEARDOWN {url} RTSP/1.0\r\nCSeq: 8\r\nSession: 12345678\r\n{auth}\r\n",
        f"GET /live HTTP/1.0\r\nx-sessioncookie: abcdef\r\nAccept: application/x-rtsp-tunnelled\r\n\r\n",
        "$\x00\x00\x04abcd",
    ]
    tokens = [b"\0", b"\r", b"\n", b"\r\n\r\n", b":", b"$", b" ", b"\xff", b"-1", b"99999999999999999999",
              b"Content-Length: ", b"Session: ", b"Transport: ", b"interleaved=255-256", b"%00", b"rtsp://",
              b"Authorization: Basic ", b"A" * 5000, b"=" * 7]

    def mutate(data):
        data = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            op = rng.randrange(5)
            at = rng.randrange(len(data) + 1)
            if op == 0 and data:
                data[min(at, len(data) - 1)] = rng.randrange(256)
            elif op == 1:
                data[at:at] = rng.choice(tokens)
            elif op == 2 and data:
                del data[at:at + rng.randint(1, 40)]
            elif op == 3:
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 30)))
            else:
                data = data[:at]
        return bytes(data)

    start, sent, answered, closed, n, c = time.monotonic(), 0, 0, 0, 0, None
    while sent < count and time.monotonic() - start < seconds:
        if c is None:
            n += 1
            try:
                c = Conn(HOST, PORT, None, source=address(100 + n % 40), timeout=2)
            except OSError:
                time.sleep(0.05)
                continue
        try:
            c.sock.sendall(mutate(rng.choice(corpus).encode("latin-1")))
            sent += 1
            c.sock.settimeout(0.01)
            data = c.sock.recv(65536)
            if data:
                answered += 1
            else:
                closed += 1
                c.close()
                c = None
        except socket.timeout:
            pass
        except OSError:
            closed += 1
            c.close()
            c = None
        if c is not None and rng.random() < 0.2:
            c.close()
            c = None
    if c:
        c.close()
    print(f"fuzz seed {seed}: {sent} mutated requests in {time.monotonic() - start:.1f} s, {answered} answered, "
          f"{closed} connections closed by the server")
    check(sent >= min(count, 200), "the fuzz run sent its requests")
    code, _ = ctl("status")
    check(code == 0, "the service answers after the fuzz run")
    v = play("/live")
    got = frames_over([v], 2)[0]
    v.stop()
    check(got > 10, f"a viewer plays after the fuzz run ({got} frames in 2 s)")


def memory():
    m = ctl("status")[1].get("status", {}).get("memory", {})
    return m.get("residentBytes", 0), m.get("heapBytes", 0)


def churn():
    """Viewers coming and going (half leave with a TEARDOWN, half by closing; a second viewer
    stays for stretches), a tap every tenth and a 2 s hold every fiftieth, for CHURN_SECONDS
    (or CHURN_CYCLES viewers): the service's resident memory after, against its steady state
    after one viewer. Prints a `churn-rss` line for make bench; the budget is CHURN_BUDGET_MB."""
    seconds = float(os.environ.get("CHURN_SECONDS", "0"))
    cycles = int(os.environ.get("CHURN_CYCLES", "200")) if not seconds else 1 << 30
    budget = float(os.environ.get("CHURN_BUDGET_MB", "32"))
    warm = play("/live")
    frames_over([warm], 2)
    warm.stop()
    time.sleep(1)
    base_rss, base_heap = memory()
    print(f"steady state (after one viewer): resident {base_rss / 2**20:.1f} MB, heap {base_heap / 2**20:.1f} MB")
    start = time.monotonic()
    peak, taps, holds, stayer, i, last_print = base_rss, 0, 0, None, 0, start
    while i < cycles and (not seconds or time.monotonic() - start < seconds):
        i += 1
        v = Viewer(HOST, PORT, "/live", TOKEN)
        v.start()
        v.playing.wait(20)
        deadline = time.monotonic() + 5
        while v.frames < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        if i % 2 == 0 and v.conn:
            try:
                v.conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        v.stop()
        if i % 10 == 0:
            taps += ctl("tap")[0] == 0
        if i % 50 == 0:
            holds += ctl("hold", "2")[0] == 0
        if i % 100 == 0:
            if stayer:
                stayer.stop()
                stayer = None
            else:
                stayer = play("/live")
        r, h = memory()
        peak = max(peak, r)
        if time.monotonic() - last_print > (300 if seconds > 600 else 20):
            last_print = time.monotonic()
            print(f"  {time.monotonic() - start:.0f} s, {i} viewers: resident {r / 2**20:.1f} MB, "
                  f"heap {h / 2**20:.1f} MB", flush=True)
    if stayer:
        stayer.stop()
    time.sleep(2)
    end_rss, end_heap = memory()
    grew = (end_rss - base_rss) / 2**20
    print(json.dumps({"bench": "churn-rss", "seconds": round(time.monotonic() - start), "viewers": i, "taps": taps,
                      "holds": holds, "steady_mb": round(base_rss / 2**20, 1), "after_mb": round(end_rss / 2**20, 1),
                      "peak_mb": round(peak / 2**20, 1), "grew_mb": round(grew, 1),
                      "heap_grew_mb": round((end_heap - base_heap) / 2**20, 2), "budget_mb": budget}))
    check(grew <= budget, f"resident memory after {i} viewers within {budget:.0f} MB of the steady state "
                          f"(+{grew:.1f} MB)")


SCENARIOS = {"churn": churn, "freeze": freeze, "idle": idle, "announce": announce, "guesses": guesses, "nul": nul,
             "reconnects": reconnects, "fuzz": fuzz, "tunnel": tunnel}

if __name__ == "__main__":
    SCENARIOS[sys.argv[1]]()
    print("FAILED: " + "; ".join(failures) if failures else "all held")
    sys.exit(1 if failures else 0)
