# SPDX-License-Identifier: BSD-2-Clause
"""The web scripts' one way to check a thing: `ok` counts it and prints "ok   WHAT", or
prints "FAIL WHAT DETAIL" and exits 1 at the first failure; `passed` prints the count
(the Swift tests that run these scripts look for "checks passed")."""
import sys

count = 0


def ok(cond, what, detail=""):
    global count
    count += 1
    if not cond:
        print(f"FAIL {what} {detail}", flush=True)
        sys.exit(1)
    print(f"ok   {what}", flush=True)


def passed(label=""):
    print(f"{label}{count} checks passed", flush=True)
