#!/usr/bin/env python3
"""The learner's copies of the course's notebooks, kept up to date without
ever losing their work (scripts/course_home.sh runs `sync` at every server
start under JupyterHub).

The policy, for each notebook NAME.ipynb the course ships:

- the learner has none: the course's is copied in;
- the learner's copy is *untouched*: its cells (their types and sources) are
  those of a version the course shipped, whatever its outputs, execution
  counts and metadata (running a lesson does not make it the learner's;
  writing a prediction or a kernel does). Then it is replaced by the
  course's current version;
- the learner's copy is *edited*: it is never touched. When the course's
  version changed, the new one is offered beside it as NAME.new.ipynb
  (itself updated while untouched; NAME.new-2.ipynb when the learner edited
  that too) and notebooks/COURSE-UPDATES.md says so, in the folder the
  learner works in.

A version is known by its *source checksum*: SHA-256 of the JSON array of
[cell_type, source] pairs of the notebook's cells, source joined into one
string (json.dumps with ensure_ascii=False, separators (",", ":")). The
versions shipped are the ones recorded in DEST/.coalesce/notebooks.json
(what this learner was given, written by every sync) and, for homes made
before that record existed, notebooks/.shipped.sha256 in the course (every
version in git's history: `history` writes it; make notebook-history).

Usage:
  course_notebooks.py sync SRC_NOTEBOOKS DEST_NOTEBOOKS [--shipped FILE]
  course_notebooks.py sum NOTEBOOK...          prints "CHECKSUM  NOTEBOOK"
  course_notebooks.py history [--out FILE]     every version git has of notebooks/*.ipynb

Every file is written whole or not at all (a temporary file renamed over).
Standard library only, so it runs with any python3 >= 3.8. Exits non-zero,
saying why, on failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

STATE = Path(".coalesce") / "notebooks.json"  # relative to DEST's parent (the course home)
NOTE = "COURSE-UPDATES.md"


class Problem(Exception):
    """A failure to report in one line, naming the file."""


def source_sum(data: bytes) -> str:
    """The source checksum of a notebook's bytes (see the module doc)."""
    try:
        nb = json.loads(data)
        cells = nb["cells"]
        pairs = []
        for c in cells:
            src = c.get("source", "")
            if isinstance(src, list):
                src = "".join(src)
            pairs.append([c.get("cell_type", ""), src])
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise Problem(f"not a notebook ({e})") from None
    canon = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def file_sum(path: Path) -> str | None:
    """The source checksum of path; None when it is not a readable notebook
    (a learner's broken file is theirs: kept, never overwritten)."""
    try:
        return source_sum(path.read_bytes())
    except (OSError, Problem):
        return None


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_shipped(path: Path | None) -> dict[str, set[str]]:
    """notebooks/.shipped.sha256: lines "CHECKSUM  NAME"; # comments. A
    line that is not one is skipped with a warning: the list only widens
    what counts as untouched, so a bad line costs an offered copy, never a
    learner's setup."""
    out: dict[str, set[str]] = {}
    if path is None or not path.is_file():
        return out
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"course_notebooks: warning: {path}: {e}: no shipped versions known", file=sys.stderr)
        return out
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or len(parts[0]) != 64 or any(ch not in "0123456789abcdef" for ch in parts[0]):
            print(f"course_notebooks: warning: {path}:{n}: want 'SHA256  NAME.ipynb', got {line[:80]!r}: skipped", file=sys.stderr)
            continue
        out.setdefault(parts[1].strip(), set()).add(parts[0])
    return out


def read_state(path: Path) -> dict[str, list[str]]:
    """What this learner was given: {"shipped": {NAME: [CHECKSUM, ...]}}. A
    state file that cannot be read is started anew (it only ever widens
    what counts as untouched)."""
    try:
        st = json.loads(path.read_text(encoding="utf-8"))
        shipped = st.get("shipped", {})
        return {k: [s for s in v if isinstance(s, str)] for k, v in shipped.items() if isinstance(v, list)}
    except (OSError, ValueError, AttributeError):
        return {}


def offer_name(dest: Path, name: str, known: set[str]) -> Path:
    """Where the course's new version of an edited NAME.ipynb goes: the first
    of NAME.new.ipynb, NAME.new-2.ipynb, ... that is absent or untouched."""
    stem = name[: -len(".ipynb")]
    for i in range(1, 100):
        p = dest / (f"{stem}.new.ipynb" if i == 1 else f"{stem}.new-{i}.ipynb")
        if not p.exists() or file_sum(p) in known:
            return p
    raise Problem(f"{dest}: 99 offered versions of {name} are all edited: move some away")


def sync(src: Path, dest: Path, shipped_file: Path | None) -> list[str]:
    """Brings dest (the learner's notebooks/) up to src (the course's);
    returns the lines to log."""
    if not src.is_dir():
        raise Problem(f"{src}: no such folder (the course's notebooks)")
    dest.mkdir(parents=True, exist_ok=True)
    state_path = dest.parent / STATE
    state = read_state(state_path)
    history = read_shipped(shipped_file)
    log: list[str] = []
    copied = updated = offered = 0
    notes: list[str] = []
    names = sorted(p.name for p in src.iterdir() if p.is_file() and not p.name.startswith("."))
    for name in names:
        data = (src / name).read_bytes()
        target = dest / name
        if not name.endswith(".ipynb"):
            # README.md and the like: the course's, copied while absent.
            if not target.exists():
                write_atomic(target, data)
                copied += 1
            continue
        cur = source_sum(data)
        known = set(state.get(name, [])) | history.get(name, set()) | {cur}
        if not target.exists() and not target.is_symlink():
            write_atomic(target, data)
            copied += 1
        elif target.is_file() and not target.is_symlink() and file_sum(target) in known:
            if file_sum(target) != cur:
                write_atomic(target, data)
                updated += 1
                log.append(f"updated {name} (untouched: the course's new version replaces it)")
        else:
            # Edited (or not a notebook we can read): the learner's, kept.
            if file_sum(target) != cur:
                offer = offer_name(dest, name, known)
                if not offer.exists() or file_sum(offer) != cur:
                    write_atomic(offer, data)
                    offered += 1
                    log.append(f"kept your {name}; the course's new version is {offer.name}")
                notes.append(f"- **{name}** is yours (edited): it is kept as it was. The course's new "
                             f"version of this lesson is **{offer.name}**, beside it: open it to see what "
                             f"changed, and copy your answers over if you want to work in it.")
        state[name] = sorted(set(state.get(name, [])) | {cur})

    note = dest / NOTE
    if notes:
        text = ("# Course updates\n\n"
                "The course was updated, and your server's start brought the new version in. Lessons you "
                "never changed were updated in place. These you had changed:\n\n"
                + "\n".join(notes) + "\n\nNothing of yours was overwritten or deleted. This note is rewritten "
                "at every start while an offered version is there; delete the .new notebook when you are done "
                "with it.\n")
        if not note.is_file() or note.read_text(encoding="utf-8") != text:
            write_atomic(note, text.encode("utf-8"))
    elif note.is_file():
        note.unlink()

    state_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(state_path, (json.dumps({"shipped": state}, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    log.append(f"{copied} notebook(s) copied, {updated} updated, {offered} offered beside your edited copy")
    return log


def history(root: Path) -> str:
    """Every version git has of notebooks/*.ipynb, as .shipped.sha256 lines."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout
    lines: set[str] = set()
    for rev in git("rev-list", "HEAD", "--", "notebooks").split():
        for entry in git("ls-tree", "-z", rev, "notebooks/").split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            name = path.split("/", 1)[1]
            if not name.endswith(".ipynb") or "/" in name:
                continue
            blob = meta.split()[2]
            data = subprocess.run(["git", "cat-file", "blob", blob], cwd=root, check=True, capture_output=True).stdout
            try:
                lines.add(f"{source_sum(data)}  {name}")
            except Problem:
                continue
    head = ("# The source checksum of every version of the course's notebooks that git has\n"
            "# (scripts/course_notebooks.py history; make notebook-history). course_home.sh updates\n"
            "# a learner's copy that is one of these; see course_notebooks.py for the checksum.\n")
    return head + "".join(l + "\n" for l in sorted(lines, key=lambda l: (l[66:], l[:64])))


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "sync":
            shipped = None
            if "--shipped" in args:
                i = args.index("--shipped")
                shipped = Path(args[i + 1])
                del args[i:i + 2]
            if len(args) != 2:
                raise Problem("usage: sync SRC_NOTEBOOKS DEST_NOTEBOOKS [--shipped FILE]")
            for line in sync(Path(args[0]), Path(args[1]), shipped):
                print(f"course_notebooks: {line}")
        elif cmd == "sum":
            for a in args:
                print(f"{source_sum(Path(a).read_bytes())}  {a}")
        elif cmd == "history":
            text = history(Path(__file__).resolve().parent.parent)
            if args[:1] == ["--out"] and len(args) == 2:
                write_atomic(Path(args[1]), text.encode("utf-8"))
            elif not args:
                sys.stdout.write(text)
            else:
                raise Problem("usage: history [--out FILE]")
        else:
            raise Problem(f"unknown command {cmd!r}: want sync, sum or history")
    except (Problem, OSError, subprocess.CalledProcessError) as e:
        print(f"course_notebooks: ERROR: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
