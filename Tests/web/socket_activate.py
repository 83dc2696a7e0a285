#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""socket_activate.py [ADDR]:PORT PROGRAM ARGS...: what systemd does for a socket unit
with Accept=no, without waiting for a first connection: binds and listens, puts the
socket at fd 3, sets LISTEN_PID (this pid, kept by exec) and LISTEN_FDS=1, and execs
PROGRAM."""
import os, socket, sys

addr, prog, args = sys.argv[1], sys.argv[2], sys.argv[2:]
host, port = addr.rsplit(":", 1)
family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
s = socket.socket(family, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host.strip("[]"), int(port)))
s.listen(16)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1", LISTEN_FDNAMES="web")
os.execv(prog, args)
