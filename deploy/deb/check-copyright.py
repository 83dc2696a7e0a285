#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The package's copyright file against what its programs actually carry (issue 31).

  check-copyright.py DEB                          the .deb's copyright and /usr/bin/*
  check-copyright.py --copyright FILE EXE...      a copyright file and executables

The file must be machine-readable (DEP-5: the Format header, Files paragraphs with
Copyright and License, every licence named in a Files paragraph with its text), carry
Shutter's own licence (the repository's LICENSE text, BSD-2-Clause) for `Files: *`, and
then, from the executables:

  - a static Swift runtime (swift5_* metadata sections, no libswiftCore.so needed):
    a Files paragraph naming libswiftCore under Apache-2.0 with Swift-exception, whose
    text holds the Runtime Library Exception and points to common-licenses/Apache-2.0;
  - static Foundation (its module names in the Swift metadata, no libFoundation*.so):
    a paragraph naming Foundation, same licence; full Foundation beyond
    FoundationEssentials (swift-corelibs' Foundation, FoundationInternationalization):
    a paragraph naming libFoundation.a, libFoundationInternationalization or
    libCoreFoundation; static Dispatch likewise (libdispatch);
  - ICU's data inside (an "icudtNNl" package name, no libicu*.so): a paragraph naming
    ICU under Unicode-3.0 with its text;
  - libavcodec linked dynamically (ldd, else readelf's NEEDED for another architecture):
    a note naming libavcodec and GPL-2+.

A paragraph for a static component no executable carries fails too (the file must not
claim what is not there, e.g. ICU once Foundation's ICU is dropped). Prints each finding;
exit 1 naming what is wrong.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMAT = "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"


def paragraphs(text):
    """DEP-5 paragraphs as lists of (field, value) with continuation lines joined by \\n."""
    out = []
    cur = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip() == "":
            if cur:
                out.append(cur)
                cur = []
            continue
        if line[0] in " \t":
            if not cur:
                raise ValueError(f"line {n}: a continuation line with no field before it")
            f, v = cur[-1]
            cur[-1] = (f, v + "\n" + line[1:])
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)$", line)
        if not m:
            raise ValueError(f"line {n}: not a field: {line!r}")
        cur.append((m.group(1), m.group(2)))
    if cur:
        out.append(cur)
    return [dict((f.lower(), v) for f, v in p) for p in out]


def license_names(expr):
    """'BSD-2-Clause and Apache-2.0 with Swift-exception' -> the two names."""
    return [n.strip() for n in re.split(r"\s+(?:and|or)\s+|[(),]", expr) if n.strip()]


def norm(s):
    return " ".join(s.replace("\n.", "\n").split())


def facts(exe):
    with open(exe, "rb") as f:
        data = f.read()
    needed = []
    rel = subprocess.run(["readelf", "-dW", exe], capture_output=True, text=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", rel.stdout)
    libs = set(needed)
    how = "readelf NEEDED"
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True)
    if ldd.returncode == 0 and "=>" in ldd.stdout:
        libs |= set(re.findall(r"^\s*(\S+\.so[.\d]*)\s+=>", ldd.stdout, flags=re.M))
        how = "ldd"
    sections = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True).stdout
    # Static or not: what the executable itself needs (ldd adds its libraries' libraries:
    # shutterd reaches Debian's libicu through libavcodec's libxml2).
    dyn = lambda prefix: any(l.startswith(prefix) for l in needed)
    swift_meta = "swift5_" in sections
    swift_static = swift_meta and not dyn("libswiftCore.so")
    return {
        "libs": libs, "how": how,
        "swift": swift_static,
        "foundation": swift_static and not dyn("libFoundation") and
        (b"20FoundationEssentials" in data or b"10Foundation" in data),
        "dispatch": swift_static and not dyn("libdispatch.so") and
        (b"8Dispatch" in data or b"libdispatch" in data or b"20FoundationEssentials" in data),
        # Full Foundation (swift-corelibs-foundation and FoundationInternationalization,
        # which bring ICU), beyond FoundationEssentials: their module names in the metadata.
        "foundation_full": swift_static and not dyn("libFoundation") and
        (b"10Foundation" in data or b"30FoundationInternationalization" in data),
        "icu": re.search(rb"icudt\d+l", data) is not None and not dyn("libicu"),
        "avcodec": any(l.startswith("libavcodec.so") for l in libs),
    }


def check(copyright_path, exes, license_path):
    problems = []
    say = lambda m: print(f"check-copyright: {m}")

    def fail(m):
        problems.append(m)
        say("FAIL " + m)

    text = open(copyright_path, encoding="utf-8").read()
    try:
        paras = paragraphs(text)
    except ValueError as e:
        fail(f"{copyright_path} is not DEP-5: {e}")
        return problems
    if not paras or paras[0].get("format", "").strip() != FORMAT:
        fail(f"the first paragraph has no 'Format: {FORMAT}' (DEP-5 header)")
        return problems
    header = paras[0]
    if not header.get("upstream-name"):
        fail("the header has no Upstream-Name")
    files = [p for p in paras[1:] if "files" in p]
    standalone = {p["license"].split("\n")[0].strip(): p["license"].split("\n", 1)[1] if "\n" in p["license"] else ""
                  for p in paras[1:] if "files" not in p and "license" in p}
    for p in files:
        for field in ("copyright", "license"):
            if not p.get(field, "").strip():
                fail(f"the Files paragraph '{p['files'].split()[0]}' has no {field.capitalize()}")
    texts = {}
    for p in files:
        first, _, body = p.get("license", "").partition("\n")
        for name in license_names(first):
            t = standalone.get(name, "") or (body if len(license_names(first)) == 1 else "")
            if not t.strip():
                fail(f"the licence '{name}' (Files: {p['files'].split()[0]}) has no text: no 'License: {name}' paragraph")
            texts[name] = t
    for name in standalone:
        if name not in texts:
            fail(f"the 'License: {name}' paragraph is used by no Files paragraph")

    def stanza(word, lic):
        """Files paragraphs whose Files or Comment name `word` and whose License has `lic`."""
        return [p for p in files if re.search(word, p["files"] + " " + p.get("comment", ""), re.I)
                and lic in license_names(p["license"].split("\n")[0])]

    star = [p for p in files if p["files"].split() == ["*"]]
    if not star or "BSD-2-Clause" not in license_names(star[0]["license"].split("\n")[0]):
        fail("no 'Files: *' paragraph under BSD-2-Clause (Shutter's own licence)")
    elif license_path:
        lic = open(license_path, encoding="utf-8").read()
        body = lic[lic.index("Redistribution"):] if "Redistribution" in lic else lic
        if norm(body) not in norm(texts.get("BSD-2-Clause", "")):
            fail(f"the BSD-2-Clause text differs from {license_path}")

    all_text = norm(text)
    found = {k: [] for k in ("swift", "foundation", "foundation_full", "dispatch", "icu", "avcodec")}
    for exe in exes:
        f = facts(exe)
        name = os.path.basename(exe)
        carried = [k for k in found if f[k]]
        for k in carried:
            found[k].append(name)
        say(f"{name}: static Swift runtime {'yes' if f['swift'] else 'no'}, Foundation {'yes' if f['foundation'] else 'no'}, "
            f"(full Foundation {'yes' if f['foundation_full'] else 'no'}), Dispatch {'yes' if f['dispatch'] else 'no'}, ICU data {'yes' if f['icu'] else 'no'}; "
            f"libavcodec {'linked' if f['avcodec'] else 'not linked'} ({f['how']}, {len(f['libs'])} libraries)")
    shown = lambda word: word.replace("\\b", "").replace("\\.", ".").replace("|", " or ")
    exception = "As an exception, if you use this Software to compile your source code"
    rules = [("swift", r"libswiftCore", "Apache-2.0 with Swift-exception", "the Swift runtime"),
             ("foundation", r"Foundation", "Apache-2.0 with Swift-exception", "Foundation"),
             ("foundation_full", r"libFoundation\.a|libFoundationInternationalization|libCoreFoundation",
              "Apache-2.0 with Swift-exception", "full Foundation (beyond FoundationEssentials)"),
             ("dispatch", r"libdispatch", "Apache-2.0 with Swift-exception", "Dispatch"),
             ("icu", r"\bICU\b", "Unicode-3.0", "ICU and its data")]
    for key, word, lic, what in rules:
        have = stanza(word, lic)
        if found[key] and not have:
            fail(f"{', '.join(found[key])} carry {what} statically, but no Files paragraph names {shown(word)} under '{lic}'")
        elif not found[key] and stanza(word, lic):
            fail(f"a Files paragraph names {what} ({shown(word)}), but no executable carries it statically")
        elif have:
            say(f"ok   {what}: in {', '.join(found[key])}, and in the file under {lic}")
    if found["swift"] or found["foundation"] or found["dispatch"]:
        t = norm(texts.get("Apache-2.0 with Swift-exception", ""))
        if exception not in t:
            fail("the 'Apache-2.0 with Swift-exception' text lacks the Runtime Library Exception")
        if "/usr/share/common-licenses/Apache-2.0" not in t:
            fail("the 'Apache-2.0 with Swift-exception' text does not point to /usr/share/common-licenses/Apache-2.0")
    if found["icu"] and "UNICODE LICENSE V3" not in texts.get("Unicode-3.0", ""):
        fail("the Unicode-3.0 text is missing (UNICODE LICENSE V3)")
    if found["avcodec"]:
        if "libavcodec" in all_text and "GPL-2+" in all_text:
            say(f"ok   libavcodec linked by {', '.join(found['avcodec'])}: the file notes it and GPL-2+")
        else:
            fail(f"{', '.join(found['avcodec'])} link libavcodec (GPL-2+ in Debian), but the file has no note naming libavcodec and GPL-2+")
    return problems


def main(argv):
    license_path = os.path.join(ROOT, "LICENSE")
    if argv[:1] == ["--copyright"] and len(argv) >= 3:
        problems = check(argv[1], argv[2:], license_path)
    elif len(argv) == 1 and argv[0].endswith(".deb"):
        tmp = tempfile.mkdtemp()
        try:
            subprocess.run(["dpkg-deb", "-x", argv[0], tmp], check=True)
            exes = sorted(os.path.join(tmp, "usr/bin", e) for e in os.listdir(os.path.join(tmp, "usr/bin")))
            problems = check(os.path.join(tmp, "usr/share/doc/shutter/copyright"), exes, license_path)
        finally:
            shutil.rmtree(tmp)
    else:
        print(__doc__)
        return 64
    if problems:
        print(f"check-copyright: FAIL {len(problems)} problem(s)")
        return 1
    print("check-copyright: ok   the copyright file matches what the programs carry")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
