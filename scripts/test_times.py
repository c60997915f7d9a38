#!/usr/bin/env python3
"""Runs go test over the course and reports where its time goes.

Usage (`make test-times` does this):

    scripts/test_times.py [--top N] [--goal S] [--json FILE] [PACKAGES ...]

It runs `go test -count=1 -json PACKAGES` (default ./...) and prints the N
slowest tests (default 10; subtests are counted in their test), the
packages by wall time, the whole run's wall and CPU time (user + system of
go and every test binary, which the machine's other load does not inflate
as much as the wall), the load average at the start, and the run held to
the goal (--goal, 60 s: `go test ./...` on a quiet 2-core machine, course
issue 22). A run over the goal is a finding, never a failure; the exit
status is go test's. --json FILE keeps go test's output.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("packages", nargs="*", default=["./..."])
    ap.add_argument("--top", type=int, default=10, help="how many of the slowest tests (default 10)")
    ap.add_argument("--goal", type=float, default=60, help="the run's goal in seconds (default 60)")
    ap.add_argument("--json", type=Path, help="also write go test's -json output here")
    args = ap.parse_args()

    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run(["go", "test", "-count=1", "-json", *args.packages], cwd=ROOT,
                          stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    if args.json:
        args.json.write_text(proc.stdout, encoding="utf-8")

    tests, packages, failed = [], [], []
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if e.get("Action") not in ("pass", "fail") or "Elapsed" not in e:
            continue
        pkg = e["Package"].removeprefix("github.com/coalescing-course/coalesce").lstrip("/") or "."
        if e.get("Test"):
            if "/" not in e["Test"]:
                tests.append((e["Elapsed"], pkg, e["Test"]))
        else:
            packages.append((e["Elapsed"], pkg))
        if e["Action"] == "fail":
            failed.append(f"{pkg} {e.get('Test', '')}".strip())

    print(f"the {args.top} slowest tests (wall, s):")
    for elapsed, pkg, test in sorted(tests, reverse=True)[:args.top]:
        print(f"  {elapsed:7.2f}  {pkg:24s} {test}")
    print("packages (wall, s):")
    for elapsed, pkg in sorted(packages, reverse=True):
        if elapsed >= 1:
            print(f"  {elapsed:7.2f}  {pkg}")
    cpu = kids.ru_utime + kids.ru_stime
    print(f"go test: {wall:.1f}s wall, {cpu:.1f}s CPU ({kids.ru_utime:.1f} user + "
          f"{kids.ru_stime:.1f} system), load average {load:.1f} on {os.cpu_count()} cores at the start")
    verdict = "within it" if wall <= args.goal else "over it: a speed finding, not a failure"
    print(f"go test: goal {args.goal:.0f}s on a quiet 2-core machine: {wall:.1f}s, {verdict}")
    if failed:
        print("FAIL " + ", ".join(failed))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
