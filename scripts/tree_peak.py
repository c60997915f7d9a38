#!/usr/bin/env python3
"""Runs a command and reports its wall time and the peak resident memory of
its whole process tree (the command and every descendant, summed, sampled
every 0.1 s from /proc), and the growth of the directories named with -d:

    scripts/tree_peak.py -d GOCACHE=/tmp/x -d SANDBOX=/tmp/y -- coalesce grade -kernels ...

Each -d NAME=DIR is measured (bytes of its files) before and after. Used for
the figures of `coalesce grade -kernels` at scale (issue 24)."""

import argparse
import os
import resource
import subprocess
import sys
import time


def children_of():
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(pid))
    return kids


def tree_rss(root):
    kids = children_of()
    total, stack, n = 0, [root], 0
    while stack:
        pid = stack.pop()
        stack.extend(kids.get(pid, []))
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                n += 1
        except OSError:
            pass
    return total, n


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            total += st.st_size
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", action="append", default=[], help="NAME=DIR to measure before and after")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    dirs = [d.split("=", 1) for d in a.d]
    before = {n: du(p) for n, p in dirs}
    start = time.monotonic()
    p = subprocess.Popen(cmd)
    peak, peak_n, most = 0, 0, 0
    while p.poll() is None:
        rss, n = tree_rss(p.pid)
        if rss > peak:
            peak, peak_n = rss, n
        most = max(most, n)
        time.sleep(0.1)
    wall = time.monotonic() - start
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"exit status {p.returncode}; wall {wall:.1f} s; CPU {ru.ru_utime + ru.ru_stime:.1f} s (user+sys, the whole tree); "
          f"peak tree RSS {peak / 2**20:.0f} MiB ({peak_n} processes then; at most {most} at once); load average at the end {load}",
          file=sys.stderr)
    for n, path in dirs:
        after = du(path)
        print(f"{n} ({path}): {before[n] / 2**20:.1f} MiB before, {after / 2**20:.1f} MiB after, "
              f"growth {(after - before[n]) / 2**20:+.1f} MiB", file=sys.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
