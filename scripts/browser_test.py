#!/usr/bin/env python3
"""Opens course notebooks in JupyterLab in headless Chromium, runs all cells, checks the page.

Usage (`make test-browser` does this, with the venv's python):

    .venv/bin/python scripts/browser_test.py [--timeout S] [NOTEBOOK.ipynb ...]

Notebooks: the arguments, else env BROWSER_NOTEBOOKS (space-separated), else
notebooks/index.ipynb and the first lesson notebooks/NN-*.ipynb (an error if
there is none: the course without a lesson is broken).

What happens:

  1. Each notebook is copied to build/browser/notebooks/ (inside the course
     module, so its setup cell finds the course root; the committed notebook
     is never opened, so nothing can save outputs into it).
  2. JupyterLab starts from this venv on 127.0.0.1, a free port, a random
     token, with its config, runtime, settings and workspace directories
     under build/browser/jupyter/ (nothing from $HOME; autosave off, all cells
     kept in the DOM, no news or update checks).
  3. Chromium (CHROMIUM, default /usr/bin/chromium) driven by Playwright
     opens each notebook, waits for the GoNB kernel to be idle, clicks
     Run > Run All Cells and waits, at most --timeout seconds per notebook
     (env BROWSER_TIMEOUT, default 180), until no cell shows [*] and the
     kernel is idle.
  4. Checks: every code cell ran (has an execution count); no error output
     (stderr, tracebacks, GoNB compile errors), except in cells whose
     metadata allows it (coalesce.allow_error / allow_stderr, tag
     raises-exception, as in run_notebooks.py); cells with
     coalesce.expect_png show an image; a lesson (any notebook but index)
     shows at least one rendered PNG <img>; a notebook that calls
     lab.Check shows the grader's verdict (div.coalesce-verdict) once per
     such cell: the notebook is opened as a learner would run it, with a
     number written into every prediction but the first, whose verdict must
     ask for a prediction and show nothing of the key; the others must show
     their "model" row.
  5. Screenshots go to build/browser/NAME-*.png (opened, top after the run,
     first plot, first verdict, and NAME-failed.png on failure), the page's
     HTML to NAME.html, JupyterLab's log to jupyter.log.

BROWSER_OUT=DIR writes all of it to DIR instead, and serves the copies from
there; BROWSER_LAB_USER=UID:GID (as root) runs JupyterLab and its kernels as
that user, as the course's image runs them for its learner.

BROWSER_LAB_URL=URL (with BROWSER_LAB_TOKEN) tests a JupyterLab already
running there instead of starting one, such as the course image's in a
container (make test-image): the copies are uploaded through its contents
API into BROWSER_LAB_DIR (default build/browser, relative to its root),
the settings above are written through its settings API, and the server
and its kernels are left running (the caller owns them). The page must
expose the app (exposeAppInBrowser: a labconfig/page_config.json in its
Jupyter config path does it without changing the server's command line).

JupyterLab and its kernels are shut down at the end, also on failure or
Ctrl-C. Without Chromium the test fails under CI (env CI=true) or
BROWSER_TEST_REQUIRED=1, and otherwise skips, loudly. The last line is
"browser: N passed, M failed".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# BROWSER_OUT moves the output (and JupyterLab's root with it when it is
# outside the course, since the notebooks it opens are the copies there;
# inside, the copies find the course as the lessons do); BROWSER_LAB_USER ("UID:GID")
# runs JupyterLab, and so the kernels, as that user, the image's learner
# (deploy's TestNonRootLearner does both, as root).
OUT = Path(os.environ["BROWSER_OUT"]).resolve() if os.environ.get("BROWSER_OUT") else ROOT / "build" / "browser"
SERVER_ROOT = ROOT if OUT.is_relative_to(ROOT) else OUT
LAB_USER = os.environ.get("BROWSER_LAB_USER", "")
# BROWSER_LAB_URL: a JupyterLab someone else started (the course image's, in
# a container), tested where it runs; RemoteLab below.
LAB_URL = os.environ.get("BROWSER_LAB_URL", "").rstrip("/")
LAB_DIR = os.environ.get("BROWSER_LAB_DIR", "build/browser").strip("/")
LESSON_RE = re.compile(r"^\d\d-.*\.ipynb$")

# Flags for Debian's Chromium on a closed network, headless, possibly as root.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-default-apps", "--disable-extensions",
]

# JupyterLab user settings written for the run (JSON5 files are plain JSON here).
LAB_SETTINGS = {
    # All cells in the DOM, so that every cell's outputs can be checked.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # Never save: the notebooks are copies, but a save would still be noise.
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    # No requests to the internet, no toasts over the screenshots.
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
}

# Output elements that mean failure: stderr streams and error tracebacks
# (JupyterLab renders both as application/vnd.jupyter.stderr) and GoNB's
# HTML compile-error report.
STDERR_ONLY_SELECTOR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
GONB_ERROR_SELECTOR = '.gonb-err-location, .gonb-err-line, .gonb-err-context'
CODE_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell"
PROMPT_RE = re.compile(r"\[(\s*|\*|\d+)\]")


def log(msg: str) -> None:
    print(f"browser: {msg}", flush=True)


def die(msg: str, code: int = 2) -> None:
    print(f"browser: ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


class Failure(Exception):
    """A notebook failed a check; the message says which and why."""


@dataclass
class CellSpec:
    """What the notebook file says about one code cell."""
    index: int  # among code cells, 0-based
    first_line: str
    allow_error: bool
    allow_stderr: bool
    expect_png: bool
    grader: bool
    unanswered: bool  # its lab.Check still holds lab.YourPrediction


@dataclass
class NotebookSpec:
    path: Path  # the committed notebook
    name: str
    lesson: bool
    cells: list[CellSpec] = field(default_factory=list)


def answer_like_a_learner(src: Path, dst: Path) -> None:
    """Copies a notebook with its predictions written in, as a learner
    would before running it: every lab.Check cell but the first gets a
    number in place of lab.YourPrediction, so the run shows both the
    placeholder's answer (nothing of the key) and real verdicts."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    first = True
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        text = "".join(cell.get("source", []))
        if "lab.YourPrediction" not in text:
            continue
        if first:
            first = False
            continue
        cell["source"] = text.replace("lab.YourPrediction", "4")
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_spec(path: Path) -> NotebookSpec:
    nb = json.loads(path.read_text(encoding="utf-8"))
    spec = NotebookSpec(path=path, name=path.stem, lesson=path.name != "index.ipynb")
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        meta = cell.get("metadata", {}) or {}
        c = meta.get("coalesce", {}) or {}
        allow_error = bool(c.get("allow_error")) or "raises-exception" in meta.get("tags", [])
        first = next((ln.strip() for ln in src.splitlines() if ln.strip()), "")
        spec.cells.append(CellSpec(
            index=len(spec.cells), first_line=first[:70],
            allow_error=allow_error, allow_stderr=allow_error or bool(c.get("allow_stderr")),
            expect_png=bool(c.get("expect_png")),
            grader=bool(re.search(r"\b(?:lab|grader)\.Check\s*\(", src)),
            unanswered="YourPrediction" in src,
        ))
    return spec


def default_notebooks() -> list[Path]:
    env = os.environ.get("BROWSER_NOTEBOOKS", "").split()
    if env:
        return [Path(p) for p in env]
    nbs = [ROOT / "notebooks" / "index.ipynb"]
    lessons = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON_RE.match(p.name))
    if not lessons:
        raise SystemExit("browser: notebooks/ has no lesson NN-*.ipynb to open")
    nbs.append(lessons[0])
    return nbs


def find_chromium() -> str | None:
    exe = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if os.sep not in exe:
        exe = shutil.which(exe) or exe
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Lab:
    """A JupyterLab server on loopback, started from this interpreter's venv."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = OUT / "jupyter.log"
        self._log = None

    def start(self, timeout: float = 90) -> None:
        jdir = self.workdir
        settings = jdir / "settings"
        for plugin, values in LAB_SETTINGS.items():
            pkg, name = plugin.rsplit("/", 1)
            f = settings / pkg / f"{name}.jupyterlab-settings"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(values, indent=1) + "\n")
        env = dict(os.environ)
        env.update({
            "JUPYTER_CONFIG_DIR": str(jdir / "config"),
            "JUPYTER_RUNTIME_DIR": str(jdir / "runtime"),
            "JUPYTER_DATA_DIR": str(jdir / "data"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(jdir / "workspaces"),
            "JUPYTER_PLATFORM_DIRS": "1",
        })
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={SERVER_ROOT}",
               "--MultiKernelManager.default_kernel_name=gonb",
               "--LabApp.expose_app_in_browser=True",
               "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        if LAB_USER:
            uid, _, gid = LAB_USER.partition(":")
            cmd = ["setpriv", f"--reuid={uid}", f"--regid={gid or uid}", "--clear-groups"] + cmd
            # The learner owns what JupyterLab and the kernels write: the
            # notebooks' copies (and the attempts beside them), its
            # settings and runtime files.
            for p in [OUT, *OUT.rglob("*")]:
                os.chown(p, int(uid), int(gid or uid))
        elif os.geteuid() == 0:
            cmd.append("--allow-root")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure(f"JupyterLab exited with status {self.proc.returncode} while starting:\n"
                              + self.log_tail())
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        raise Failure(f"JupyterLab did not answer on {self.base} within {timeout:.0f}s:\n" + self.log_tail())

    def log_tail(self, n: int = 30) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join("    " + ln for ln in lines[-n:])

    def stop(self) -> None:
        """Shuts the server and its kernels down: the REST shutdown, then SIGTERM, then SIGKILL."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                req = urllib.request.Request(f"{self.base}/api/shutdown", method="POST",
                                             headers={"Authorization": f"token {self.token}"})
                urllib.request.urlopen(req, timeout=5).close()
            except (urllib.error.URLError, OSError):
                pass
            for sig, wait in ((None, 15), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                if sig is not None:
                    try:
                        os.killpg(self.proc.pid, sig)
                    except ProcessLookupError:
                        break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # Kernels (GoNB, gopls, cell programs) live in the server's process
        # group unless they made their own; make sure none is left.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self._log:
            self._log.close()
        self.proc = None


class RemoteLab:
    """A JupyterLab already running at BROWSER_LAB_URL, not ours to start or
    stop: the notebooks' copies go to it through its contents API, the test's
    settings through its settings API (Lab writes both as files instead)."""

    def __init__(self, base: str, token: str):
        self.base = base
        self.token = token
        self.log_path = OUT / "jupyter.log"  # the server's log is its owner's

    def api(self, method: str, path: str, body=None, timeout: float = 30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method, headers={
            "Authorization": f"token {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raise Failure(f"{method} {self.base}{path}: HTTP {e.code}: {e.read()[:300]!r}") from None
        except (urllib.error.URLError, OSError) as e:
            raise Failure(f"{method} {self.base}{path}: {e}") from None
        return json.loads(raw) if raw else None

    def start(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.api("GET", "/api/status", timeout=5)
                break
            except Failure as e:
                if time.monotonic() > deadline:
                    raise Failure(f"JupyterLab at {self.base} did not answer within {timeout:.0f}s: {e}") from None
                time.sleep(0.5)
        for plugin, values in LAB_SETTINGS.items():
            pkg, name = plugin.rsplit("/", 1)
            self.api("PUT", f"/lab/api/settings/{pkg}:{name}", {"raw": json.dumps(values)})

    def upload(self, local: Path, remote: str) -> None:
        """Writes local to remote (a path below the server's root), making its folders."""
        parts = remote.split("/")[:-1]
        for i in range(len(parts)):
            d = "/".join(parts[: i + 1])
            try:
                self.api("GET", f"/api/contents/{d}?content=0")
            except Failure:
                self.api("PUT", f"/api/contents/{d}", {"type": "directory"})
        content = json.loads(local.read_text(encoding="utf-8"))
        self.api("PUT", f"/api/contents/{remote}", {"type": "notebook", "format": "json", "content": content})

    def log_tail(self, n: int = 30) -> str:
        return f"    (the server at {self.base} keeps its own log)"

    def stop(self) -> None:
        """Shuts down the kernels of the notebooks this test opened; the server stays."""
        try:
            for sess in self.api("GET", "/api/sessions") or []:
                if sess.get("path", "").startswith(LAB_DIR + "/"):
                    self.api("DELETE", f"/api/sessions/{sess['id']}")
        except Failure as e:
            log(f"warning: could not shut down the test's kernels: {e}")


# JavaScript run in the page. The app is exposed by --LabApp.expose_app_in_browser.
JS_STATE = """() => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  const ctx = w && w.sessionContext;
  const kernel = ctx && ctx.session && ctx.session.kernel;
  const cells = Array.from(document.querySelectorAll(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell'));
  return {
    app: !!app,
    path: w && w.context ? w.context.path : null,
    kernelName: kernel ? kernel.name : null,
    status: kernel ? kernel.status : (ctx ? 'nokernel' : null),
    connection: kernel ? kernel.connectionStatus : null,
    prompts: cells.map(c => {
      const p = c.querySelector('.jp-InputPrompt');
      return p ? p.textContent.trim() : '';
    }),
  };
}"""

JS_CELLS = """(sel) => {
  const cells = Array.from(document.querySelectorAll(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell'));
  return cells.map(c => {
    // GoNB's compile error lines first (they say what is wrong), then
    // stderr and tracebacks (a panic's message), each text once.
    const text = q => Array.from(c.querySelectorAll(q)).map(e => e.innerText.trim()).filter(Boolean);
    const gonb = c.querySelectorAll(sel.gonb).length > 0;
    const errs = [...new Set(text('.gonb-err-line').concat(text(sel.stderr)))];
    const imgs = Array.from(c.querySelectorAll('.jp-OutputArea-output img')).map(i => ({
      png: i.src.startsWith('data:image/png'), ok: i.complete && i.naturalWidth > 0,
      w: i.naturalWidth, h: i.naturalHeight}));
    const verdicts = Array.from(c.querySelectorAll('.coalesce-verdict')).map(v => v.innerText);
    return {errs, gonb, imgs, verdicts};
  });
}"""


def wait_state(page, pred, timeout: float, what: str, poll: float = 0.5):
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(JS_STATE)
        if pred(state):
            return state
        dialog = page.query_selector(".jp-Dialog")
        if dialog:
            raise Failure(f"a dialog appeared while waiting for {what}: {dialog.inner_text()[:300]!r}")
        time.sleep(poll)
    raise Failure(f"timed out after {timeout:.0f}s waiting for {what}; last state: "
                  f"kernel {state and state.get('status')}, prompts {state and state.get('prompts')}")


def shot(page, path: Path, shots: list[Path]) -> None:
    page.screenshot(path=str(path))
    shots.append(path)


def run_menu_run_all(page) -> None:
    """Run > Run All Cells, through the menu bar, as a learner would."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).first.click()


def check_notebook(page, lab: Lab, spec: NotebookSpec, copy_rel: str, timeout: float) -> list[Path]:
    """Opens, runs and checks one notebook; returns the screenshots taken."""
    shots: list[Path] = []
    url = f"{lab.base}/lab/tree/{copy_rel}?token={lab.token}&reset"
    page.goto(url, wait_until="domcontentloaded")
    try:
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=60_000)
    except Exception as e:  # noqa: BLE001 - Playwright's TimeoutError
        raise Failure(f"the notebook did not appear within 60s: {e}") from None
    wait_state(page, lambda s: s["app"] and s["path"] == copy_rel, 30,
               f"the notebook {copy_rel} to be the current document (and window.jupyterapp: "
               "the server must expose the app, --LabApp.expose_app_in_browser=True or "
               "exposeAppInBrowser in labconfig/page_config.json)")
    # JupyterLab ignores the status messages around kernel_info requests, and
    # GoNB does not answer the history_request JupyterLab sends next, so a
    # fresh GoNB kernel shows "Unknown" (not "Idle") until the first cell runs.
    st = wait_state(page, lambda s: s["connection"] == "connected" and s["status"] in ("idle", "unknown"),
                    60, "the kernel to start and connect")
    if st["kernelName"] != "gonb":
        raise Failure(f"the notebook runs kernel {st['kernelName']!r}, want gonb")
    n_code = len(st["prompts"])
    if n_code != len(spec.cells):
        raise Failure(f"the page shows {n_code} code cells, the notebook file has {len(spec.cells)}")
    shot(page, OUT / f"{spec.name}-0-opened.png", shots)

    t0 = time.monotonic()
    run_menu_run_all(page)
    # Wait until the run has visibly started (a [*] or a count), then until it is over.
    wait_state(page, lambda s: any(p in ("[*]:", "[*]") or re.search(r"\d", p) for p in s["prompts"]),
               20, "Run All Cells to start")
    stable = 0

    def done(s) -> bool:
        nonlocal stable
        busy = s["status"] != "idle" or any("*" in p for p in s["prompts"])
        stable = 0 if busy else stable + 1
        return stable >= 3  # idle and no [*] for three polls in a row

    st = wait_state(page, done, timeout, "all cells to finish (kernel idle, no [*])")
    log(f"{spec.name}: ran {n_code} code cells in {time.monotonic() - t0:.1f}s")

    cells = page.evaluate(JS_CELLS, {"gonb": GONB_ERROR_SELECTOR, "stderr": STDERR_ONLY_SELECTOR})
    problems: list[str] = []
    bad: list[int] = []  # code cells at fault
    for cs, prompt, out in zip(spec.cells, st["prompts"], cells):
        where = f"code cell {cs.index + 1} (`{cs.first_line}`)"
        m = PROMPT_RE.search(prompt)
        if not m or not m.group(1).strip().isdigit():
            problems.append(f"{where} did not run (prompt {prompt!r})")
            bad.append(cs.index)
            continue
        if out["errs"]:
            allowed = cs.allow_error or (cs.allow_stderr and not out["gonb"])
            if not allowed:
                msg = " | ".join(out["errs"])
                problems.append(f"{where} shows error output: {msg[:600]!r}")
                bad.append(cs.index)
        if cs.expect_png and not any(i["ok"] for i in out["imgs"]):
            problems.append(f"{where} has coalesce.expect_png but shows no rendered image")
        if cs.grader:
            if not out["verdicts"]:
                problems.append(f"{where} calls lab.Check but shows no div.coalesce-verdict")
            elif cs.unanswered:
                # It may say how the question is graded ("Graded against the
                # model, exactly"), never an answer: no "the answer is", no
                # row of the model's or the measured value.
                if not all("Write your prediction first" in v and "the answer is" not in v
                           and not re.search(r"^\s*(model|measured)\b", v, re.M) for v in out["verdicts"]):
                    problems.append(f"{where} still holds lab.YourPrediction, so its verdict must ask for a "
                                    f"prediction and show nothing of the key: {out['verdicts'][0][:200]!r}")
            elif not all("model" in v for v in out["verdicts"]):
                problems.append(f"{where}: the verdict has no \"model\" row: {out['verdicts'][0][:200]!r}")
    pngs = [i for c in cells for i in c["imgs"] if i["png"] and i["ok"]]
    if spec.lesson and not pngs:
        problems.append("a lesson must show at least one rendered PNG plot; none is on the page")
    n_verdicts = sum(len(c["verdicts"]) for c in cells)
    log(f"{spec.name}: {len(pngs)} rendered PNG image(s), {n_verdicts} grader verdict(s)")

    # Screenshots: the top of the notebook, the first plot, the first verdict.
    page.evaluate("() => { const w = document.querySelector("
                  "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer'); if (w) w.scrollTop = 0; }")
    shot(page, OUT / f"{spec.name}-1-top.png", shots)
    img = page.locator('.jp-OutputArea-output img[src^="data:image/png"]').first
    if pngs:
        img.scroll_into_view_if_needed()
        shot(page, OUT / f"{spec.name}-2-plot.png", shots)
    if n_verdicts:
        page.locator(".coalesce-verdict").first.scroll_into_view_if_needed()
        shot(page, OUT / f"{spec.name}-3-grader.png", shots)
    (OUT / f"{spec.name}.html").write_text(page.content(), encoding="utf-8")
    if problems:
        if bad:  # the first cell at fault, on screen
            page.locator(CODE_CELLS).nth(bad[0]).scroll_into_view_if_needed()
        shot(page, OUT / f"{spec.name}-failed.png", shots)
        raise Failure("; ".join(problems))
    return shots


def interrupted(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else str(p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", type=Path,
                    help="notebooks to open (default: index.ipynb and the first NN-*.ipynb lesson)")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("BROWSER_TIMEOUT", "180")),
                    help="seconds for all cells of one notebook to run (env BROWSER_TIMEOUT; default 180)")
    ap.add_argument("--headed", action="store_true", help="show the browser window (needs a display)")
    args = ap.parse_args()

    chromium = find_chromium()
    if chromium is None:
        required = os.environ.get("CI", "").lower() in ("1", "true") or \
            os.environ.get("BROWSER_TEST_REQUIRED") == "1"
        msg = (f"Chromium not found at {os.environ.get('CHROMIUM', '/usr/bin/chromium')} "
               "(Debian: apt-get install chromium; `make test-browser` does it as root)")
        if required:
            die(msg + "; CI/BROWSER_TEST_REQUIRED demands the browser test", 1)
        bar = "!" * 78
        print(f"{bar}\nbrowser: SKIPPED, the browser test did not run: {msg}\n{bar}", flush=True)
        return 0
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        die(f"{e}: install requirements-test.txt into this venv (`make test-browser` does)")

    paths = args.notebooks or default_notebooks()
    paths = [p if p.is_absolute() else (Path.cwd() / p) for p in paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        die(f"no such notebook: {', '.join(missing)}")
    specs = [read_spec(p.resolve()) for p in paths]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        die(f"notebooks share a name, their screenshots would collide: {names}")

    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "notebooks").mkdir(parents=True)
    before = {s.path: sha256(s.path) for s in specs}
    copies = {}
    for i, s in enumerate(specs):
        dst = OUT / "notebooks" / s.path.name
        answer_like_a_learner(s.path, dst)
        specs[i] = read_spec(dst)
        specs[i].path = s.path
        copies[s.name] = f"{LAB_DIR}/{s.path.name}" if LAB_URL else dst.relative_to(SERVER_ROOT).as_posix()

    # SIGTERM (make interrupted, CI timeout) unwinds like Ctrl-C, so that
    # the finally below stops JupyterLab.
    signal.signal(signal.SIGTERM, interrupted)

    t_all = time.monotonic()
    passed = failed = 0
    if LAB_URL:
        if not os.environ.get("BROWSER_LAB_TOKEN"):
            die("BROWSER_LAB_URL needs BROWSER_LAB_TOKEN, the server's token")
        lab = RemoteLab(LAB_URL, os.environ["BROWSER_LAB_TOKEN"])
    else:
        lab = Lab(OUT / "jupyter")
    try:
        t0 = time.monotonic()
        try:
            lab.start()
            if isinstance(lab, RemoteLab):
                for s in specs:
                    lab.upload(OUT / "notebooks" / s.path.name, copies[s.name])
        except Failure as e:
            die(str(e), 1)
        if isinstance(lab, RemoteLab):
            log(f"JupyterLab at {lab.base} answers; notebooks uploaded to {LAB_DIR}/ there")
        else:
            log(f"JupyterLab up on {lab.base} in {time.monotonic() - t0:.1f}s (log: {rel(lab.log_path)})")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=not args.headed,
                                         args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                for s in specs:
                    page = context.new_page()
                    console_errors: list[str] = []
                    page.on("pageerror", lambda e, acc=console_errors: acc.append(str(e)))
                    t0 = time.monotonic()
                    shown = rel(s.path)
                    try:
                        shots = check_notebook(page, lab, s, copies[s.name], args.timeout)
                        passed += 1
                        log(f"PASS {shown} ({time.monotonic() - t0:.1f}s); screenshots: "
                            + ", ".join(rel(p) for p in shots))
                    except Exception as e:  # noqa: BLE001 - any failure is this notebook's
                        failed += 1
                        fail_png = OUT / f"{s.name}-failed.png"
                        if not fail_png.exists():
                            try:
                                page.screenshot(path=str(fail_png))
                                (OUT / f"{s.name}.html").write_text(page.content(), encoding="utf-8")
                            except Exception:  # noqa: BLE001 - the page may be gone
                                pass
                        msg = str(e) if isinstance(e, Failure) else f"{type(e).__name__}: {e}"
                        log(f"FAIL {shown} ({time.monotonic() - t0:.1f}s): {msg}\n"
                            f"     screenshot: {rel(fail_png)}")
                        if console_errors:
                            log("     page errors: " + " | ".join(console_errors[:5]))
                    finally:
                        page.close()
            finally:
                browser.close()
    finally:
        lab.stop()
    changed = [rel(p) for p, h in before.items() if p.is_file() and sha256(p) != h]
    if changed:
        failed += 1
        log(f"FAIL the committed notebooks changed during the test: {changed}")
    log(f"total wall time {time.monotonic() - t_all:.1f}s")
    log(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
