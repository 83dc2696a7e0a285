#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The man pages (docs/man/*.scd) against the programs and the schema (issue 31):

  - each page is rendered with scdoc, as deploy/deb/build.sh does (a syntax error fails);
  - every option in `shutterd --help` appears in shutterd(8), and every option and every
    command in `shutterctl --help` in shutterctl(1) (a command as a bold term);
  - every configuration key of ConfigSchema.keys (`Key(path: "...")` in
    Sources/ShutterCore/Config/ConfigSchema.swift, and the sensor controls' keys in
    Sources/ShutterCore/Camera/CameraControlTable.swift, spelled the same way) appears in
    shutter.json(5), and the page names no key under a schema section that the schema lacks.

Prints what is missing, naming the page and the item, and exits 1 if anything is.

  check-man-pages.py [--bin DIR] [--man DIR] [--schema FILE] [--controls FILE]

--bin defaults to .build/debug (make check-scripts runs after the debug build); the test
of this checker (deploy/test-check-man-pages.sh) points it at fake programs and pages.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = {"shutterd": "shutterd.8.scd", "shutterctl": "shutterctl.1.scd"}
CONFIG_PAGE = "shutter.json.5.scd"


def render(path):
    """The page as roff (scdoc), or raises with scdoc's message."""
    with open(path, "rb") as f:
        p = subprocess.run(["scdoc"], stdin=f, capture_output=True)
    if p.returncode != 0:
        raise ValueError(p.stderr.decode(errors="replace").strip() or f"scdoc exited {p.returncode}")
    return p.stdout.decode()


def plain(roff):
    """Roff as plain text: font changes, zero-width and character escapes dropped."""
    t = re.sub(r"^\.\\\".*$", "", roff, flags=re.M)  # comments
    t = re.sub(r"\\f[BIRP]|\\f\(..|\\f\[[A-Z]*\]", "", t)
    t = t.replace("\\&", "").replace("\\(aq", "'").replace("\\*(Aq", "'").replace("\\(dq", '"')
    t = t.replace("\\-", "-").replace("\\e", "\\").replace("\\(em", "-").replace("\\(en", "-")
    return t


def has_token(text, token):
    return re.search(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", text) is not None


def help_of(exe):
    p = subprocess.run([exe, "--help"], capture_output=True, timeout=60)
    if p.returncode != 0:
        raise ValueError(f"{exe} --help exited {p.returncode}: {p.stderr.decode(errors='replace').strip()}")
    return p.stdout.decode()


def options(help_text):
    return sorted(set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", help_text)))


def commands(help_text):
    """shutterctl's commands: lines indented by exactly two spaces start with one; more
    follow ` | ` on the same line (`tap | photo`, `web-token add ... | web-token list`)."""
    found = []
    for line in help_text.splitlines():
        m = re.match(r"^  (?! )(.*)$", line)
        if not m:
            continue
        for alt in m.group(1).split(" | "):
            w = re.match(r"([a-z][a-z0-9-]*)", alt.strip())
            if w and w.group(1) not in found:
                found.append(w.group(1))
    return found


def schema_keys(*paths):
    keys = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            keys += re.findall(r'Key\(path: "([^"]+)"', f.read())
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "debug"))
    ap.add_argument("--man", default=os.path.join(ROOT, "docs", "man"))
    ap.add_argument("--schema", default=os.path.join(ROOT, "Sources", "ShutterCore", "Config", "ConfigSchema.swift"))
    ap.add_argument("--controls", default=os.path.join(ROOT, "Sources", "ShutterCore", "Camera", "CameraControlTable.swift"))
    a = ap.parse_args()
    problems = []
    counts = []

    def fail(msg):
        problems.append(msg)
        print(f"check-man-pages: FAIL {msg}")

    try:
        subprocess.run(["scdoc"], input=b"X(1)\n", capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("check-man-pages: FAIL scdoc is missing (sh deploy/install-deps.sh --test installs it)")
        return 1

    texts = {}
    for name in list(PAGES.values()) + [CONFIG_PAGE]:
        path = os.path.join(a.man, name)
        try:
            roff = render(path)
        except OSError as e:
            fail(f"{name}: cannot read it: {e}")
            continue
        except ValueError as e:
            fail(f"{name}: scdoc refuses it: {e}")
            continue
        texts[name] = (roff, plain(roff))

    for prog, page in PAGES.items():
        exe = os.path.join(a.bin, prog)
        if not os.access(exe, os.X_OK):
            fail(f"no {exe} (build it first: swift build --product {prog})")
            continue
        try:
            h = help_of(exe)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            fail(f"{prog} --help: {e}")
            continue
        if page not in texts:
            continue
        roff, text = texts[page]
        opts = options(h)
        if len(opts) < 2:
            fail(f"{prog} --help lists {len(opts)} options: the check would prove nothing")
        for o in opts:
            if not has_token(text, o):
                fail(f"{page} lacks the option {o}, which `{prog} --help` lists")
        cmds = commands(h) if prog == "shutterctl" else []
        if prog == "shutterctl" and len(cmds) < 5:
            fail(f"shutterctl --help lists {len(cmds)} commands: the check would prove nothing")
        for c in cmds:
            # A command is a bold term: \fBcmd\fR or the start of a bold run (\fBweb-token add\fR).
            if not re.search(r"\\fB" + re.escape(c) + r"(?![\w-])", roff):
                fail(f"{page} lacks the command {c} (as a bold term), which `{prog} --help` lists")
        counts.append(f"{prog}: {len(opts)} options" + (f", {len(cmds)} commands" if cmds else ""))

    keys = schema_keys(a.schema, a.controls)
    if len(keys) < 50:
        fail(f"{a.schema} declares {len(keys)} keys: the check would prove nothing")
    if not any(k.startswith("camera.exposure.") for k in keys):
        fail(f"{a.controls} declares no camera.exposure.* key: the check would miss the sensor controls")
    if CONFIG_PAGE in texts:
        _, text = texts[CONFIG_PAGE]
        for k in keys:
            if not has_token(text, k):
                fail(f"{CONFIG_PAGE} lacks the key {k}, which ConfigSchema.keys declares")
        sections = {k.split(".")[0] for k in keys}
        groups = {".".join(k.split(".")[:i]) for k in keys for i in range(1, k.count(".") + 1)}
        named = set(re.findall(r"(?<![\w./-])([a-z]+(?:\.[A-Za-z]+)+)(?![\w-])", text))
        for n in sorted(named):
            if n.split(".")[0] in sections and n not in keys and n not in groups:
                fail(f"{CONFIG_PAGE} names {n}, which ConfigSchema.keys does not declare")
        counts.append(f"shutter.json: {len(keys)} keys")

    if problems:
        print(f"check-man-pages: FAIL {len(problems)} problem(s) in {a.man}")
        return 1
    print(f"check-man-pages: ok   every option, command and key is in its man page ({'; '.join(counts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
