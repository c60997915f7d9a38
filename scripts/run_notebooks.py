#!/usr/bin/env python3
"""Executes the course notebooks headlessly with the GoNB kernel and checks them.

Usage (with the venv's python; `make test-notebooks` does this):

    .venv/bin/python scripts/run_notebooks.py [--timeout S] [NOTEBOOK.ipynb ...]

Without arguments it runs every notebooks/*.ipynb. Each notebook runs in a fresh
kernel whose working directory is the notebook's directory (as in JupyterLab).
A notebook fails, and execution of it stops, at the first code cell that

  * produces an `error` output (GoNB: failed compile, panic, non-zero exit),
  * writes to stderr (GoNB reports a failed `!shell` command only as
    "exit status N" on stderr; Go programs that panic write there too),
  * does not satisfy its assertions, given as cell metadata:

        "coalesce": {
            "expect": ["regex", ...],   # each must match (re.search, MULTILINE) the
                                        # cell's text/plain, text/html, text/markdown
                                        # and stream outputs, concatenated
            "expect_png": true,         # an image/png or image/svg+xml output exists
            "allow_stderr": true,       # stderr output is fine in this cell
            "allow_error": true         # error output is fine (also: tag raises-exception)
        }

  * or runs longer than the per-cell timeout (--timeout, env NOTEBOOK_TIMEOUT, 120 s).

After it ran, a notebook fails when a markdown cell states a number that no code
cell writes or prints and that is no definition of the allow-list (course issue
11; the check is internal/notebook/cmd/numbers, `go doc ./internal/notebook
Definitions` lists the allow-list).

When they have all run, the executed notebooks, in course order, go through the
leak test (cmd/leaks, course issue 23): the run fails when one shows a
question's answer before the learner answered it, in that notebook or an
earlier one (the shipped placeholders answer nothing): a value lab's outputs say
they showed (their grader.Shown record), a number stated in a markdown cell or
printed by a cell's own code. The ten slowest cells are listed.


Time is reported, not judged: each notebook's wall time, the total, the CPU
time of everything the run started, and a line holding the total to the goal
(--goal, env NOTEBOOK_GOAL, 120 s: every notebook on a quiet 2-core machine).
A slow or busy machine is no defect. Only a hang fails: a cell past its
timeout, or the whole run past the hang guard (--hang-guard, env
NOTEBOOK_HANG_GUARD, 1200 s: ten times the goal), which stops every kernel.

Every spec a course notebook (notebooks/*.ipynb) measures or profiles goes,
through the kernels' env COALESCE_SPEC_LOG, to build/notebooks/NAME.specs.jsonl.
When every course notebook ran, their union must equal
lab/testdata/notebook-specs.jsonl, the list lab's GPU test measures live;
--update-specs rewrites the committed file from the logs.

Executed copies go to build/notebooks/NAME.ipynb and NAME.html (also when the
notebook fails, for debugging), and the kernel's own log to NAME.kernel.log.
build/notebooks/run.json describes the run, for a check that reads the
executed notebooks instead of running them again (the leak check of course
issue 23): per notebook its path, the sha256 of the source that ran, the
executed copy, whether every cell ran and passed, and its time. The last line
printed is "N passed, M failed".
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import html
import json
import os
import resource
import signal
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMITTED_SPECS = ROOT / "lab" / "testdata" / "notebook-specs.jsonl"
SPEC_LOG_ENV = "COALESCE_SPEC_LOG"  # lab.SpecLogEnv
KNOWN_KEYS = {"expect", "expect_png", "allow_stderr", "allow_error"}
IMAGE_MIMES = ("image/png", "image/svg+xml")
TEXT_MIMES = ("text/plain", "text/html", "text/markdown")


def die(msg: str, code: int = 2) -> None:
    print(f"run_notebooks: ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


try:
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
except ImportError as e:  # pragma: no cover - depends on the environment
    die(f"{e}. Run this with the venv's python after `make setup` "
        "(e.g. .venv/bin/python scripts/run_notebooks.py).")


class CellCheckFailed(Exception):
    """A cell's outputs failed the checks; the message says why."""


def html_to_text(s: str) -> str:
    """Rough text of GoNB's HTML error reports, good enough for a log."""
    s = re.sub(r"(?is)<(style|script)\b.*?</\1>", "", s)
    s = re.sub(r"(?i)<br\s*/?>|</div>|</p>", "\n", s)
    s = html.unescape(re.sub(r"<[^>]+>", "", s))
    return re.sub(r"\n\s*\n+", "\n", s).strip()


def strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", s)


def as_text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def describe_outputs(outputs) -> str:
    """Human-readable dump of a cell's outputs (errors and text), for failure reports."""
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(f"[{out.get('name')}] {as_text(out.get('text', ''))}")
        elif kind == "error":
            tb = "\n".join(as_text(t) for t in out.get("traceback", [])) or out.get("evalue", "")
            parts.append(f"[error {out.get('ename')}] {tb}")
        elif kind in ("display_data", "execute_result"):
            data = out.get("data", {})
            if "text/html" in data:
                parts.append("[html] " + html_to_text(as_text(data["text/html"])))
            elif "text/plain" in data:
                parts.append("[text] " + as_text(data["text/plain"]))
            else:
                parts.append(f"[{', '.join(sorted(data))}]")
    text = strip_ansi("\n".join(p.rstrip() for p in parts)).strip()
    if len(text) > 6000:
        text = text[:3000] + "\n... (cut) ...\n" + text[-3000:]
    return text or "(no output)"


def cell_text(outputs) -> str:
    chunks = []
    for out in outputs:
        if out.get("output_type") == "stream":
            chunks.append(as_text(out.get("text", "")))
        elif out.get("output_type") in ("display_data", "execute_result", "update_display_data"):
            data = out.get("data", {})
            chunks.extend(as_text(data[m]) for m in TEXT_MIMES if m in data)
    return "\n".join(chunks)


def check_cell(cell) -> None:
    """Raises CellCheckFailed if the cell's outputs are not acceptable."""
    meta = cell.get("metadata", {})
    spec = meta.get("coalesce", {}) or {}
    if not isinstance(spec, dict):
        raise CellCheckFailed(f'metadata "coalesce" must be an object, got {spec!r}')
    unknown = set(spec) - KNOWN_KEYS
    if unknown:
        raise CellCheckFailed(f'unknown key(s) {sorted(unknown)} in metadata "coalesce" '
                              f"(known: {sorted(KNOWN_KEYS)})")
    outputs = cell.get("outputs", [])
    allow_error = bool(spec.get("allow_error")) or "raises-exception" in meta.get("tags", [])
    allow_stderr = bool(spec.get("allow_stderr")) or allow_error

    if not allow_error and any(o.get("output_type") == "error" for o in outputs):
        raise CellCheckFailed("the cell produced an error")
    if not allow_stderr and any(o.get("output_type") == "stream" and o.get("name") == "stderr"
                                for o in outputs):
        raise CellCheckFailed("the cell wrote to stderr "
                              '(set metadata coalesce.allow_stderr if that is intended)')

    expects = spec.get("expect", [])
    if isinstance(expects, str):
        expects = [expects]
    text = strip_ansi(cell_text(outputs))
    for pattern in expects:
        try:
            rx = re.compile(pattern, re.MULTILINE)
        except re.error as e:
            raise CellCheckFailed(f"bad expect regex {pattern!r}: {e}") from None
        if not rx.search(text):
            raise CellCheckFailed(f"expected output matching /{pattern}/ not found")
    if spec.get("expect_png") and not any(
            m in o.get("data", {}) for o in outputs for m in IMAGE_MIMES):
        raise CellCheckFailed("expected an image output (image/png or image/svg+xml), none found")


class CheckingClient(NotebookClient):
    """NotebookClient that checks each code cell right after it ran and stops at the first bad one."""

    current_index: int | None = None

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self.current_index = cell_index
        cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if cell.cell_type == "code":
            check_cell(cell)
        return cell


def check_kernel(name: str) -> str:
    """Fails loudly unless the kernelspec exists and its program is there; returns its dir."""
    ksm = KernelSpecManager()
    try:
        spec = ksm.get_kernel_spec(name)
    except NoSuchKernel:
        die(f"Jupyter kernel {name!r} is not installed (searched {ksm.kernel_dirs}). "
            "Run `make setup` (scripts/install.sh) first; with a custom KERNEL_PREFIX, "
            "set JUPYTER_PATH=$KERNEL_PREFIX/share/jupyter.")
    prog = spec.argv[0]
    if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
        die(f"kernel {name!r} ({spec.resource_dir}) runs {prog!r}, which is missing or not "
            "executable. Run `make setup` (or FORCE=1 scripts/install.sh) to rebuild it.")
    return spec.resource_dir


def cell_label(nb, index: int) -> str:
    cell = nb.cells[index]
    code_no = sum(1 for c in nb.cells[: index + 1] if c.cell_type == "code")
    first = next((ln for ln in cell.source.splitlines() if ln.strip()), "").strip()
    if len(first) > 70:
        first = first[:67] + "..."
    return f"cell {index + 1} (code cell {code_no}, `{first}`)"


def where_now(nb, client) -> str:
    idx = client.current_index
    return cell_label(nb, idx) if idx is not None else "kernel start-up"


def outputs_now(nb, client) -> str:
    idx = client.current_index
    return describe_outputs(nb.cells[idx].get("outputs", [])) if idx is not None else ""


def export_html(nb, dest: Path) -> str | None:
    try:
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter().from_notebook_node(nb)
        dest.write_text(body, encoding="utf-8")
        return None
    except Exception as e:  # a broken export must not hide the execution result
        return f"HTML export failed: {type(e).__name__}: {e}"


def check_numbers(checker: Path, executed: Path) -> str:
    """Runs the numbers check on an executed notebook; returns what it found ("" if fine)."""
    res = subprocess.run([str(checker), str(executed)], capture_output=True, text=True)
    if res.returncode == 0:
        return ""
    found = (res.stdout + res.stderr).strip().replace(f"{executed}: ", "")
    return ("a markdown cell states a number no code cell writes or prints (print the result "
            "in a cell, or say it without the number; definitions: go doc ./internal/notebook "
            f"Definitions):\n{found}")


def spec_log_of(out_dir: Path, name: str) -> Path:
    """The log of the specs notebook NAME measures (COALESCE_SPEC_LOG)."""
    return (out_dir / f"{name}.specs.jsonl").resolve()


def check_leaks(checker: Path, executed: list[Path]) -> str:
    """Runs the leak test on executed notebooks in course order; returns what it found ("" if none)."""
    present = [str(p) for p in executed if p.is_file()]
    if not present:
        return ""
    t0 = time.monotonic()
    res = subprocess.run([str(checker), *present], capture_output=True, text=True)
    print(f"leaks: {len(present)} notebooks checked in {time.monotonic() - t0:.1f}s", flush=True)
    if res.returncode == 0:
        return ""
    return ("the leak test found answers shown before their question was answered "
            f"(cmd/leaks):\n{(res.stdout + res.stderr).strip()}")


def cell_times(executed: list[Path]) -> list[tuple[float, str]]:
    """Each executed code cell's wall time (nbclient's timing metadata), slowest first."""
    import datetime
    out = []
    for p in executed:
        if not p.is_file():
            continue
        nb = nbformat.read(p, as_version=4)
        for i, c in enumerate(nb.cells):
            t = c.get("metadata", {}).get("execution", {})
            a, b = t.get("iopub.execute_input"), t.get("shell.execute_reply")
            if c.cell_type != "code" or not a or not b:
                continue
            dt = (datetime.datetime.fromisoformat(b.replace("Z", "+00:00")) -
                  datetime.datetime.fromisoformat(a.replace("Z", "+00:00"))).total_seconds()
            out.append((dt, f"{p.stem} {cell_label(nb, i)}"))
    return sorted(out, reverse=True)


def read_specs(*paths: Path) -> list[str]:
    specs = set()
    for path in paths:
        if path.is_file():
            specs |= {ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()}
    return sorted(specs)


def compare_specs(logs: list[Path], update: bool) -> str:
    """Compares the specs the course notebooks measured with the committed list; returns the problem."""
    log = ", ".join(str(p) for p in logs) if len(logs) < 3 else f"{logs[0].parent}/*.specs.jsonl"
    got, want = read_specs(*logs), read_specs(COMMITTED_SPECS)
    if update:
        COMMITTED_SPECS.parent.mkdir(parents=True, exist_ok=True)
        COMMITTED_SPECS.write_text("".join(s + "\n" for s in got), encoding="utf-8")
        print(f"specs: wrote {len(got)} to {COMMITTED_SPECS.relative_to(ROOT)}", flush=True)
        return ""
    new, gone = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    if not new and not gone:
        print(f"specs: the notebooks measure the {len(got)} specs of "
              f"{COMMITTED_SPECS.relative_to(ROOT)}", flush=True)
        return ""
    lines = [f"the specs the notebooks measure ({log}) differ from {COMMITTED_SPECS.relative_to(ROOT)}:"]
    lines += [f"  + {s}" for s in new] + [f"  - {s}" for s in gone]
    lines.append("  regenerate it with `make notebook-specs` (runs every notebook), then commit it")
    return "\n".join(lines)


def run_one(path: Path, args, out_dir: Path) -> tuple[bool, str, bool]:
    """Runs one notebook; returns (ok, message, whether every cell ran)."""
    nb = nbformat.read(path, as_version=4)
    name = path.stem
    kernel_log = out_dir / f"{name}.kernel.log"
    client = CheckingClient(
        nb,
        kernel_name=args.kernel,
        timeout=args.timeout,
        startup_timeout=args.startup_timeout,
        allow_errors=True,  # errors are judged by check_cell, which also knows allow_error
        interrupt_on_timeout=False,
        record_timing=True,
        coalesce_streams=True,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    ok, msg = True, ""
    with open(kernel_log, "w") as log:
        try:
            # Kernel stdout/stderr (GoNB's own logging) go to the log file, not the console.
            # Attempts (lab.Check) go to build/, not beside the notebook, and
            # start afresh each run: JPY_SESSION_NAME names the file, as
            # Jupyter Server does (internal/attempt).
            attempts = out_dir / "attempts"
            (attempts / f"{name}.json").unlink(missing_ok=True)
            spec_log = spec_log_of(out_dir, name)
            spec_log.unlink(missing_ok=True)
            env = {**os.environ, "COALESCE_ATTEMPTS": str(attempts),
                   "JPY_SESSION_NAME": str(path.resolve()),
                   SPEC_LOG_ENV: str(spec_log)}
            client.execute(stdout=log, stderr=log, env=env)
        except CellCheckFailed as e:
            ok, msg = False, f"{where_now(nb, client)}: {e}\n{outputs_now(nb, client)}"
        except CellTimeoutError:
            ok, msg = False, (f"{where_now(nb, client)}: timed out (per-cell limit {args.timeout}s; "
                              f"raise it with --timeout or NOTEBOOK_TIMEOUT)\n{outputs_now(nb, client)}")
        except DeadKernelError as e:
            ok, msg = False, f"{where_now(nb, client)}: the kernel died: {e} (kernel log: {kernel_log})"
        except Exception as e:  # noqa: BLE001 - any failure of the run is a notebook failure
            ok, msg = False, (f"{where_now(nb, client)}: {type(e).__name__}: {e} "
                              f"(kernel log: {kernel_log})")

    out_nb = out_dir / f"{name}.ipynb"
    nbformat.write(nb, out_nb)
    if not args.no_html:
        err = export_html(nb, out_dir / f"{name}.html")
        if err and ok:
            ok, msg = False, err
    ran = ok
    if ok:
        found = check_numbers(args.numbers, out_nb)
        if found:
            ok, msg = False, found
    return ok, msg, ran


def timed_run(path: Path, args) -> tuple[bool, str, bool, float]:
    """run_one, timed, with any exception turned into a failure."""
    t0 = time.monotonic()
    try:
        ok, msg, ran = run_one(path, args, args.out)
    except Exception as e:  # noqa: BLE001 - e.g. an unreadable notebook
        ok, msg, ran = False, f"{type(e).__name__}: {e}", False
    return ok, msg, ran, time.monotonic() - t0


def descendants(pid: int) -> list[int]:
    """The processes below pid, children first: the kernels a worker started
    run in sessions of their own, so a signal to the worker does not reach them."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kills the pool's workers and every process they started (kernels, go builds)."""
    workers = [p.pid for p in list(getattr(pool, "_processes", {}).values())]
    for pid in [d for w in workers for d in descendants(w)] + workers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def longest_first(paths: list[Path], out_dir: Path) -> list[Path]:
    """The notebooks in the order to start them: the longest first, so that
    no long one starts last and runs alone; by the last run's times
    (out_dir/run.json), else by size."""
    last = {}
    try:
        last = {ROOT / n["notebook"]: n["seconds"]
                for n in json.loads((out_dir / "run.json").read_text(encoding="utf-8"))["notebooks"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return sorted(paths, key=lambda p: (last.get(p.resolve(), 0), p.stat().st_size), reverse=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cpu_seconds() -> float:
    """User plus system time of this process and the children it has waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="notebooks to run (default: notebooks/*.ipynb)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("NOTEBOOK_TIMEOUT", "120")),
                    help="per-cell timeout in seconds (env NOTEBOOK_TIMEOUT; default 120)")
    ap.add_argument("--startup-timeout", type=int, default=60, help="kernel start timeout (s)")
    ap.add_argument("--kernel", default=os.environ.get("NOTEBOOK_KERNEL", "gonb"),
                    help="kernelspec name (default gonb)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "notebooks",
                    help="where executed copies and HTML go (default build/notebooks)")
    ap.add_argument("--no-html", action="store_true", help="skip the HTML export")
    ap.add_argument("--update-specs", action="store_true",
                    help=f"rewrite {COMMITTED_SPECS.relative_to(ROOT)} from the specs the notebooks measure")
    ap.add_argument("--goal", type=float, default=float(os.environ.get("NOTEBOOK_GOAL", "120")),
                    help="the seconds every notebook should take together on a quiet 2-core "
                         "machine, reported beside the total, never a failure "
                         "(env NOTEBOOK_GOAL; default 120)")
    ap.add_argument("--hang-guard", type=float, default=float(os.environ.get("NOTEBOOK_HANG_GUARD", "1200")),
                    help="fail, stopping every kernel, when the run takes longer than this: a "
                         "hang, not a slow machine (env NOTEBOOK_HANG_GUARD; default 1200, "
                         "ten times the goal)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("NOTEBOOK_JOBS", str(min(2, os.cpu_count() or 1)))),
                    help="notebooks run at once, each in its own kernel "
                         "(env NOTEBOOK_JOBS; default the cores, at most 2)")
    args = ap.parse_args()

    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not paths:
        die("no notebooks to run (notebooks/*.ipynb is empty)")
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        die(f"no such notebook: {', '.join(missing)}")
    names = [p.stem for p in paths]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        die(f"notebooks share a name, their outputs would collide: {dups}")

    check_kernel(args.kernel)
    args.out.mkdir(parents=True, exist_ok=True)
    course = {p.resolve() for p in (ROOT / "notebooks").glob("*.ipynb")}
    every = course <= {p.resolve() for p in paths}
    if args.update_specs and not every:
        die("--update-specs needs every notebook to run (give no notebook names)")
    args.numbers = args.out / "numbers"
    args.leaks = args.out / "leaks"
    for tool, pkg in ((args.numbers, "./internal/notebook/cmd/numbers"), (args.leaks, "./cmd/leaks")):
        build = subprocess.run(["go", "build", "-o", str(tool), pkg], cwd=ROOT, capture_output=True, text=True)
        if build.returncode != 0:
            die(f"building {pkg} failed:\n{build.stdout}{build.stderr}")
    if os.environ.get("NOTEBOOK_TOTAL_BUDGET"):
        print("run_notebooks: NOTEBOOK_TOTAL_BUDGET no longer fails a run: a slow machine is no "
              "defect; NOTEBOOK_HANG_GUARD bounds a hang", file=sys.stderr, flush=True)

    t_all, cpu_all = time.monotonic(), cpu_seconds()
    load = os.getloadavg()[0]
    passed = failed = 0
    all_ran = True
    results, hung = [], []
    # Each notebook runs in a kernel of its own, so several run at once: a
    # cell's time is mostly GoNB compiling it, and the CI machine has two
    # cores. Results are reported as notebooks finish.
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs))
    try:
        futures = {pool.submit(timed_run, path, args): path for path in longest_first(paths, args.out)}
        try:
            for f in concurrent.futures.as_completed(futures, timeout=args.hang_guard):
                results.append((futures[f], f.result()))
        except concurrent.futures.TimeoutError:
            hung = [futures[f] for f in futures if not f.done()]
            stop_workers(pool)
    finally:
        pool.shutdown(wait=not hung, cancel_futures=True)
    wall, cpu = time.monotonic() - t_all, cpu_seconds() - cpu_all

    def shown(path: Path) -> Path:
        try:
            return path.resolve().relative_to(ROOT)
        except ValueError:
            return path

    manifest = []
    for path, (ok, msg, ran, dt) in results:
        if path.resolve() in course:
            all_ran = all_ran and ran
        copy = args.out / f"{path.stem}.ipynb"
        manifest.append({"notebook": str(shown(path)), "source_sha256": sha256(path),
                         "executed": str(shown(copy)), "ran_every_cell": ran, "passed": ok,
                         "seconds": round(dt, 1)})
        if ok:
            passed += 1
            print(f"PASS {shown(path)} ({dt:.1f}s)", flush=True)
        else:
            failed += 1
            where = f"\n     executed copy: {copy}" if copy.is_file() else ""
            print(f"FAIL {shown(path)} ({dt:.1f}s): {msg.rstrip()}{where}", flush=True)
    for path in hung:
        failed += 1
        all_ran = False
        print(f"FAIL {shown(path)}: still running when the run reached its hang guard of "
              f"{args.hang_guard:.0f}s (NOTEBOOK_HANG_GUARD); its kernel was stopped", flush=True)
    print(f"notebooks: total wall time {wall:.1f}s, {cpu:.1f}s CPU (load average {load:.1f} "
          f"on {os.cpu_count()} cores at the start)", flush=True)
    if not hung:
        verdict = "within it" if wall <= args.goal else "over it: a speed finding, not a failure"
        print(f"notebooks: goal {args.goal:.0f}s for every notebook on a quiet 2-core machine: "
              f"{wall:.1f}s, {verdict}", flush=True)
    status = 1 if failed else 0
    executed = [args.out / f"{p.stem}.ipynb" for p in sorted(paths, key=lambda p: p.name)]
    times = cell_times(executed)
    if times:
        print(f"cells: the {min(10, len(times))} slowest of {len(times)} (wall time, "
              f"{args.jobs} notebooks at once; a GoNB cell compiles, then runs):", flush=True)
        for dt, where in times[:10]:
            print(f"  {dt:6.1f}s  {where}", flush=True)
    # The leak test reads the course notebooks, in course order: the fixtures of
    # scripts/testdata show what they test, not lessons.
    lessons = [args.out / f"{p.stem}.ipynb" for p in sorted(paths, key=lambda p: p.name) if p.resolve() in course]
    leaks = check_leaks(args.leaks, lessons)
    if leaks:
        print(f"FAIL {leaks}", flush=True)
        status = 1
    (args.out / "run.json").write_text(json.dumps({
        "notebooks": manifest, "complete": not hung and len(results) == len(paths),
        "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
        "goal_seconds": args.goal, "passed": passed, "failed": failed,
        "leaks": bool(leaks)}, indent=1) + "\n", encoding="utf-8")
    # A notebook that failed only the numbers check ran every cell: its specs count.
    if every and all_ran:
        logs = sorted(spec_log_of(args.out, p.stem) for p in paths if p.resolve() in course)
        problem = compare_specs(logs, args.update_specs)
        if problem:
            print(f"FAIL {problem}", flush=True)
            status = 1
    print(f"{passed} passed, {failed} failed", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
