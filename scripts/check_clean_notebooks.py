#!/usr/bin/env python3
"""Fails if a committed notebook carries outputs or execution counts.

Notebooks are committed clean: outputs are produced by `make test-notebooks`
(into build/notebooks/) or by students in JupyterLab, never stored in git.

Usage: check_clean_notebooks.py [--fix] [NOTEBOOK.ipynb ...]
Without arguments it checks the notebooks git tracks, testdata/ fixtures aside
(or, outside a git checkout, every notebooks/**/*.ipynb). --fix strips outputs
and counts in place.
Standard library only, so it runs with any python3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_notebooks() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", "*.ipynb"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
        tracked = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        tracked = []
    # Untracked notebooks under notebooks/ are about to be committed: check them too.
    found = [p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    # Test fixtures (testdata/, e.g. the grader's sample submissions) are
    # saved notebooks on purpose, outputs and broken JSON included.
    return sorted({p.resolve() for p in tracked + found
                   if p.is_file() and "testdata" not in p.relative_to(ROOT).parts})


def problems(nb: dict) -> list[str]:
    out = []
    for i, cell in enumerate(nb.get("cells", []), 1):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs"):
            out.append(f"cell {i} has {len(cell['outputs'])} output(s)")
        if cell.get("execution_count") is not None:
            out.append(f"cell {i} has execution_count {cell['execution_count']}")
    return out


def strip(nb: dict) -> None:
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None


def main(argv: list[str]) -> int:
    fix = "--fix" in argv
    paths = [Path(a) for a in argv if a != "--fix"] or default_notebooks()
    bad = 0
    for path in paths:
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read notebook: {e}", file=sys.stderr)
            bad += 1
            continue
        found = problems(nb)
        if not found:
            continue
        if fix:
            strip(nb)
            path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{path}: stripped outputs and execution counts")
            continue
        bad += 1
        print(f"{path}: not clean: " + "; ".join(found), file=sys.stderr)
    if bad:
        print(f"check_clean_notebooks: {bad} notebook(s) must be committed without outputs; "
              "run `python3 scripts/check_clean_notebooks.py --fix`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
