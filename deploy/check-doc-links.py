#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every relative link and #anchor in the documentation resolves: the file (or directory)
exists, and an anchor matches a heading of the file it points into, by GitHub's slug rules
(lowercase; punctuation dropped except '-'; spaces become '-'; a repeated slug gets -1,
-2, ...). Links inside code (fenced blocks, `inline code`) are not links and are skipped;
http(s):, mailto: and other scheme links are not checked (no network).

    check-doc-links.py [ROOT [FILE...]]

ROOT is the repository (default: the one this script is in); FILEs default to README.md,
CHANGELOG.md and docs/*.md under it. Prints "FILE:LINE: broken link TARGET (why)" for each
broken one and exits 1; exits 0 when all resolve. Seconds, no dependencies.
"""
import glob
import os
import re
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target), target up to whitespace or ')'; an optional "title".
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"`", "", text)                          # code spans keep their text
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)                     # inline HTML tags go
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                    # punctuation, except - and space
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor of a Markdown file: its headings' slugs, duplicates numbered."""
    if path not in cache:
        seen, out = {}, set()
        fenced = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if not m:
                    continue
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else "%s-%d" % (s, n))
        cache[path] = out
    return cache[path]


def links(path):
    """(line number, target) of every link outside code."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            for m in LINK.finditer(INLINE_CODE.sub("", line)):
                yield number, m.group(1)


def check(root, files):
    broken = []
    for doc in files:
        rel_doc = os.path.relpath(doc, root)
        for number, target in links(doc):
            if not target or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:, ...: not checked here
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            why = None
            if path and not os.path.exists(dest):
                why = "no such file: %s" % os.path.relpath(dest, root)
            elif anchor:
                if os.path.isdir(dest) or not dest.endswith(".md"):
                    why = "an anchor into a file that is not Markdown"
                elif anchor not in anchors(dest):
                    why = "no heading with anchor #%s in %s" % (anchor, os.path.relpath(dest, root))
            if why:
                broken.append("%s:%d: broken link %s (%s)" % (rel_doc, number, target, why))
    return broken


def main(argv):
    root = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = [os.path.abspath(f) for f in argv[2:]]
    if not files:
        files = [os.path.join(root, f) for f in ("README.md", "CHANGELOG.md")]
        files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    missing = [f for f in files if not os.path.isfile(f)]
    for f in missing:
        print("check-doc-links: FAIL no such document: %s" % os.path.relpath(f, root))
    broken = check(root, [f for f in files if os.path.isfile(f)])
    for b in broken:
        print(b)
    if broken or missing:
        print("check-doc-links: FAIL %d broken link(s) in %d file(s)" % (len(broken), len(files)))
        return 1
    print("check-doc-links: ok, every relative link and anchor in %d file(s) resolves" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
