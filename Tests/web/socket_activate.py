#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""socket_activate.py [NAME=][ADDR]:PORT... [--private-network] PROGRAM ARGS...: what
systemd does for socket units with Accept=no, without waiting for a first connection:
binds and listens on each address, puts the sockets at fd 3, 4, ... in order, sets
LISTEN_PID (this pid, kept by exec), LISTEN_FDS and LISTEN_FDNAMES (a socket's NAME, as
FileDescriptorName= gives it; "web" when not named), and execs PROGRAM. With
--private-network PROGRAM runs in a network namespace of its own with nothing in it
(`unshare --net`, root only; same pid), as PrivateNetwork=yes runs a service: the passed
sockets still work, since they were made outside it."""
import os, socket, sys

args = sys.argv[1:]
binds = []
while args and (args[0][:1] in "[0123456789" or "=" in args[0].split(":", 1)[0]):
    spec = args.pop(0)
    name, _, addr = spec.rpartition("=") if "=" in spec.split(":", 1)[0] else ("web", "", spec)
    binds.append((name, addr))
private = bool(args) and args[0] == "--private-network"
if private:
    args.pop(0)
sockets = []
for name, addr in binds:
    host, port = addr.rsplit(":", 1)
    family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host.strip("[]"), int(port)))
    s.listen(64)
    sockets.append(s)
# Each at its place from fd 3, whatever numbers they were given.
dups = [os.dup(s.fileno()) for s in sockets]
for s in sockets:
    s.close()
for i, fd in enumerate(dups):
    os.dup2(fd, 3 + i)
    os.set_inheritable(3 + i, True)
for fd in dups:
    if fd >= 3 + len(dups):
        os.close(fd)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS=str(len(binds)),
                  LISTEN_FDNAMES=":".join(name for name, _ in binds))
if private:
    os.execv("/usr/bin/unshare", ["unshare", "--net"] + args)
os.execv(args[0], args)
