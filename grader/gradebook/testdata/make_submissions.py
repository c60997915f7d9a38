#!/usr/bin/env python3
"""Writes grader/testdata/submissions/: sample learners' notebooks, one folder per
learner, covering right, wrong and partly right answers and every kind of broken
input the grader must turn into a row. Run from the repository root:

    python3 grader/testdata/make_submissions.py

then `go test ./grader -run TestGradebookGolden -update` and review the diff of
grader/testdata/gradebook/*. The notebooks are committed; this script is how they
were made, kept so that a change to them is a reviewed change to this file.
"""

import hashlib
import json
import os
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "submissions")
IMPORT = '"github.com/coalescing-course/coalesce/grader"'
GONB = {"kernelspec": {"display_name": "Go (gonb)", "language": "go", "name": "gonb"},
        "language_info": {"file_extension": ".go", "mimetype": "text/x-go", "name": "go"}}


def cell(source, kind="code", cid=None, outputs=None):
    lines = source.split("\n")
    src = [l + "\n" for l in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    c = {"cell_type": kind, "id": cid or hashlib.sha1(source.encode()).hexdigest()[:8], "metadata": {}, "source": src}
    if kind == "code":
        c["execution_count"] = None
        c["outputs"] = outputs or []
    return c


def attempt_output(id, first, attempts, last, record=None):
    """A Check cell's saved output: the verdict's text beside the attempt
    record (lab.Check; internal/attempt), the record as a JSON string."""
    rec = record or {"id": id, "first": {"value": first, "time": "2026-12-01T10:00:00Z"},
                     "attempts": attempts, "last": {"value": last, "time": "2026-12-01T10:05:00Z"}}
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": id + ": (verdict)\n", "application/vnd.coalesce.attempt+json": json.dumps(rec)}}


def notebook(cells, learner=None, authors=None, lesson=None, metadata=None):
    md = dict(GONB) if metadata is None else metadata
    if learner or lesson:
        md["coalesce"] = {}
        if learner:
            md["coalesce"]["learner"] = learner
        if lesson:
            md["coalesce"]["lesson"] = lesson
    if authors:
        md["authors"] = [{"name": a} for a in authors]
    return {"cells": cells, "metadata": md, "nbformat": 4, "nbformat_minor": 5}


def write(rel, nb=None, text=None):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if text is not None:
            f.write(text)
        else:
            json.dump(nb, f, indent=1, ensure_ascii=False)
            f.write("\n")


SETUP = cell('%noautoget\n!*root="$(cd "$GONB_DIR" && go list -m -f \'{{.Dir}}\')" && rm -f go.work && go work init . "$root"', cid="setup")
IMPORTS = cell("import (\n\t\"fmt\"\n\n\t" + IMPORT + "\n)\n\nvar _ = fmt.Sprint", cid="imports")


def checks(*pairs):
    """A %% cell with one grader.Check per (id, literal) pair."""
    return cell("%%\n" + "\n".join('grader.Check("%s", %s)' % p for p in pairs))


def main():
    shutil.rmtree(ROOT, ignore_errors=True)

    # ada: everything right, over two notebooks; named by metadata.
    write("ada/01-sectors.ipynb", notebook([
        cell("# Transactions and sectors", "markdown"), SETUP, IMPORTS,
        checks(("01-sectors/sectors-float", "4")),
        cell("Now doubles.", "markdown"),
        checks(("01-sectors/sectors-double", "8"), ("01-sectors/sectors-byte", "1")),
    ], learner="Ada Lovelace", lesson="01-sectors"))
    write("ada/03-strided.ipynb", notebook([
        SETUP, IMPORTS,
        checks(("03-strided/sectors-stride-32", "32")),
        checks(("03-strided/efficiency-stride-2", "0.5")),
        checks(("03-strided/slowdown-stride-32", "16")),
    ], learner="Ada Lovelace"))

    # grace: everything wrong; named by her folder.
    write("grace/03-strided.ipynb", notebook([
        SETUP, IMPORTS,
        checks(("03-strided/sectors-stride-32", "4"), ("03-strided/efficiency-stride-2", "0.25"), ("03-strided/slowdown-stride-32", "2")),
    ]))

    # alan: partly right; named by metadata.authors. Constant expressions
    # (one of them integer division), a percentage, a duplicate.
    write("alan/02-coalescing.ipynb", notebook([
        SETUP, IMPORTS,
        checks(("02-coalescing/efficiency-coalesced", "100")),
        checks(("02-coalescing/sectors-offset-1", "10/2")),
        checks(("02-coalescing/efficiency-offset-1", "8/9")),
        checks(("02-coalescing/sectors-reverse", "4")),
        cell("Second thoughts:", "markdown"),
        checks(("02-coalescing/sectors-reverse", "32")),
    ], authors=["Alan Turing"]))

    # brian.ipynb at the top: named by his file. Odd shapes of prediction.
    write("brian.ipynb", notebook([
        SETUP, IMPORTS,
        cell("%%\nx := 18.0\ngrader.Check(\"04-scattered/sectors-random-perm\", x)"),
        cell("%%\ngrader.Check(\"04-scattered/sectors-random-perm\")"),
        cell("%%\n// grader.Check(\"04-scattered/sectors-warp-shuffle\", 4)\nfmt.Println(\"thinking\")"),
        checks(("04-scattered/sorted-speedup", "0.2")),
        checks(("04-scattered/nope", "3")),
        cell("%%\nid := \"04-scattered/sorted-speedup\"\ngrader.Check(id, 5)"),
    ], lesson="04-scattered"))

    # carol: GoNB's special lines, an import alias, cells in odd order, a
    # call split across two cells, an answer only in markdown.
    write("carol/05-aos-soa.ipynb", notebook([
        cell("%%\ng.Check(\"05-aos-soa/sectors-aos-16\", 16)"),
        cell("%env COALESCE_MEASURE recorded\n!echo predicting \\\n  now\nimport g " + IMPORT, cid="alias"),
        cell("%%\ng.Check(\"05-aos-soa/efficiency-aos-24\","),
        cell("%%\n0.1667)"),
        cell("My answer: `grader.Check(\"05-aos-soa/soa-speedup\", 3)`", "markdown"),
    ], learner="Carol Shaw"))

    # dan: a dot import and statements outside main (GoNB does not compile
    # them: the calls never ran); a %%writefile cell.
    write("dan/06-vectorized.ipynb", notebook([
        SETUP,
        cell("import . " + IMPORT),
        cell("Check(\"06-vectorized/sectors-float4\", 16)\nCheck(\"06-vectorized/requests-ratio\", 4.0)"),
        cell("%%writefile answers.go\npackage main\n// Check(\"06-vectorized/sum-fields-sector-ratio\", 4)"),
    ], learner="Dan"))

    # eve: one good notebook (the ncu lesson) and one malformed.
    write("eve/07-ncu-metric.ipynb", notebook([
        SETUP, IMPORTS,
        checks(("07-ncu-metric/ld-sectors-stride-2", "8.388608e6"), ("07-ncu-metric/ld-requests-coalesced", "2097152"),
               ("07-ncu-metric/st-sectors-per-request-write-4", "512")),
    ], learner="Eve"))
    good = json.dumps(notebook([checks(("08-h200/fetch-granularity-ratio", "2"))], learner="Eve"))
    write("eve/08-h200.ipynb", text=good[: len(good) // 2])

    # kim: the H200 lesson, measured answers.
    write("kim/08-h200.ipynb", notebook([
        SETUP, IMPORTS,
        checks(("08-h200/fetch-granularity-ratio", "2"), ("08-h200/dram-stride-32", "16"),
               ("08-h200/one-float-copy-of-memcpy", "0.9"), ("08-h200/block-32-slowdown", "1")),
    ], learner="Kim"))

    # lin: a lesson of the current build (lab), with the placeholder and
    # attempt records in the saved outputs: sectors-float first run with
    # 0, then the answer copied (3 attempts); sectors-double left at the
    # placeholder; sectors-byte right at once, with a record that does not
    # parse beside it.
    lab = '"github.com/coalescing-course/coalesce/lab"'
    write("lin/01-sectors.ipynb", notebook([
        SETUP, cell("import (\n\t" + lab + "\n)", cid="imports"),
        cell('%%\nlab.Check("01-sectors/sectors-float", 4)',
             outputs=[attempt_output("01-sectors/sectors-float", 0, 3, 4)]),
        cell('%%\nlab.Check("01-sectors/sectors-double", lab.YourPrediction)'),
        cell('%%\nlab.Check("01-sectors/sectors-byte", 1)',
             outputs=[attempt_output("01-sectors/sectors-byte", 1, 1, 1),
                      attempt_output("", 0, 0, 0, record={"id": "01-sectors/sectors-byte", "attempts": 0})]),
    ], learner="Lin"))

    # Files that are not this course's notebooks at all.
    write("frank/analysis.ipynb", notebook([cell("print('hello')")], metadata={
        "kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}))
    write("gina/other-course.ipynb", notebook([cell("%%\nfmt.Println(\"hello\")")]))
    write("hal/old.ipynb", text=json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []}))
    write("ivan/answers.ipynb", text="[1, 2, 3]\n")
    big = notebook([checks(("01-sectors/sectors-float", "4")), cell("x" * 70000, "markdown")], learner="Judy")
    write("judy/01-sectors.ipynb", big)

    # Not notebooks, and a checkpoint: skipped by the directory walk.
    write("README.txt", text="Submissions downloaded from the LMS.\n")
    write(".ipynb_checkpoints/brian-checkpoint.ipynb", notebook([checks(("04-scattered/sorted-speedup", "5"))]))


if __name__ == "__main__":
    main()
