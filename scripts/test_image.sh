#!/usr/bin/env bash
# make test-image: the course's image, built from the real Dockerfile with
# podman on a local base (no registry: scripts/image_base.sh debootstraps
# Ubuntu 24.04, the CUDA image's OS, without CUDA), and run as a learner
# runs it: as the image's user (uid 1000) with the image's CMD. Checked:
#
#   1. the build (from a snapshot of the checkout), timed, the image's size
#      and its slow or large steps; the image records and says it has no
#      CUDA (at build, at start, in its health check)
#   2. a rebuild after a notebook edit reuses every layer but the last COPY
#      (the layer order), timed
#   3. the server: every process uid 1000, the learner owning the course and
#      the build cache, the HEALTHCHECK command passing, / leading to the
#      index, the GoNB kernel found and the default
#   4. the browser test (scripts/browser_test.py) against the container's
#      JupyterLab: the index and the first lesson run in Chromium
#   5. the first cell of a fresh notebook inside the container, timed (the
#      warm build cache), and every notebook headless inside the container
#      (scripts/run_notebooks.py, as make test-notebooks)
#   6. docs/running.md's `docker run ... coalesce grade` line, with podman,
#      as another user, on the notebooks step 5 executed
#   7. a named volume over notebooks/ (docs/running.md), filled from the image
#   8. another uid than the image's (docker run --user): cells compile,
#      /opt/course is not writable (docs/running.md)
#   9. jupyterhub-singleuser --version, as JupyterHub starts the image (its
#      CMD replaced)
#
# It needs root (podman's root storage, debootstrap), podman, runc and
# debootstrap (installed with apt-get when missing), and for step 4 what
# make test-browser sets up (Chromium, Playwright in the venv; the Makefile
# runs that first). Podman runs with runc and its own containers.conf
# (no default ulimits, the cgroupfs manager): crun cannot set the rlimits on
# this kind of machine. Environment (defaults in brackets):
#   LOG             the log, committed as runs/log/test-image.log
#                                                      [build/image/test-image.log]
#   IMAGE           the image's tag                     [localhost/coalescing:test]
#   SUITE           the base's OS: noble or trixie      [noble]
#   NO_CACHE        1: build with --no-cache (a cold build, timed)  [0]
#   NOTEBOOK_HANG_GUARD  seconds for all notebooks in the container [1800:
#                   a hang guard, 15x the course's goal of 120 s]
# The last line is "test-image: N passed, M failed".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUTDIR="$ROOT/build/image"
LOG="${LOG:-$OUTDIR/test-image.log}"
IMAGE="${IMAGE:-localhost/coalescing:test}"
SUITE="${SUITE:-noble}"
BASE="localhost/coalesce-base:$SUITE"
NO_CACHE="${NO_CACHE:-0}"
VPY="${VENV:-$ROOT/.venv}/bin/python"
LEARNER_UID=1000
GRADER_UID=1001 # an instructor's uid, not the image's learner

die() { printf 'test_image.sh: ERROR: %s\n' "$*" >&2; exit 2; }
[[ "$(id -u)" == 0 ]] || die "podman's root storage and debootstrap need root (CI runs as root)"

mkdir -p "$OUTDIR"
: >"$LOG"
log() { printf '%s\n' "$*" | tee -a "$LOG"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
passed=0
failed=0
pass() { passed=$((passed + 1)); log "PASS $*"; }
fail() { failed=$((failed + 1)); log "FAIL $*"; }
# out FILE: FILE's last lines into the log, indented.
out() { tail -n "${2:-25}" "$1" | sed 's/^/    /' | tee -a "$LOG"; }

# ---------------------------------------------------------------- podman
missing=()
for t in podman runc debootstrap; do command -v "$t" >/dev/null || missing+=("$t"); done
if ((${#missing[@]})); then
  echo "test_image.sh: installing ${missing[*]} (apt-get)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y podman runc debootstrap; } \
    >"$OUTDIR/apt.log" 2>&1 || { cat "$OUTDIR/apt.log" >&2; die "apt-get install podman runc debootstrap failed"; }
fi
export CONTAINERS_CONF="$OUTDIR/containers.conf"
cat >"$CONTAINERS_CONF" <<'EOF'
# make test-image's podman configuration (scripts/test_image.sh).
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
EOF
pm_cmd=(podman --runtime /usr/bin/runc)
export PODMAN="${pm_cmd[*]}" # for image_base.sh
pm() { "${pm_cmd[@]}" "$@"; }

t_all="$(now)"
log "# make test-image: the course's image built with podman from the Dockerfile and run as the learner"
log "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
log "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with changes)')"
log "podman: $(podman --version); runc: $(runc --version | head -n1); host: $(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg)"

container=""
tmp="$(mktemp -d /var/tmp/coalesce-test-image.XXXXXX)"
cleanup() {
  [[ -n "$container" ]] && pm rm -f "$container" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---------------------------------------------------------------- 1. base + build
t0="$(now)"
if ! scripts/image_base.sh "$BASE" >"$OUTDIR/base.log" 2>&1; then
  out "$OUTDIR/base.log"
  die "making the base $BASE failed (log: $OUTDIR/base.log)"
fi
log "base: $BASE ($(tail -n1 "$OUTDIR/base.log" | sed 's/^image_base.sh: //'); $(since "$t0") s)"

# The build context: a snapshot of the checkout (its tracked and untracked,
# not ignored files), so that the build and the rebuild of step 2 see the
# same files even if the checkout changes meanwhile.
ctx="$tmp/context"
mkdir -p "$ctx"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$ctx" -xpf -
build_args=(--format docker --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" -f "$ctx/Dockerfile")
[[ "$NO_CACHE" == 1 ]] && build_args+=(--no-cache)
t0="$(now)"
build_start="$(date +%s)"
if pm build "${build_args[@]}" "$ctx" >"$OUTDIR/build.log" 2>&1; then
  build_s="$(since "$t0")"
  cached="$(grep -c -- '--> Using cache' "$OUTDIR/build.log" || true)"
  steps="$(grep -cE '^STEP [0-9]+/' "$OUTDIR/build.log" || true)"
  size="$(pm image inspect --format '{{.Size}}' "$IMAGE")"
  pass "build: podman build ${build_args[*]//$ctx/CONTEXT} CONTEXT in ${build_s} s ($steps steps, $cached from the cache$([[ "$NO_CACHE" == 1 ]] && echo ', --no-cache: cold'))"
  log "image size: $size bytes ($(awk -v b="$size" 'BEGIN { printf "%.2f GiB", b / 2^30 }')), $(pm image inspect --format '{{len .RootFS.Layers}}' "$IMAGE") layers"
  # Where the build's time and bytes go: the image's history (each step's
  # end time and layer size), the steps of 5 s or 10 MB and more; a step
  # from the cache has no time of this build.
  pm history --no-trunc --format json "$IMAGE" >"$OUTDIR/history.json"
  python3 - "$OUTDIR/history.json" "$build_start" <<'PY' | tee -a "$LOG" || true
import datetime, json, re, sys
h = list(reversed(json.load(open(sys.argv[1]))))  # oldest first
def when(e):
    s = re.sub(r"(\.\d{6})\d*", r"\1", e["created"]).replace("Z", "+00:00")
    return datetime.datetime.fromisoformat(s)
start = datetime.datetime.fromtimestamp(int(sys.argv[2]), datetime.timezone.utc)
for i, e in enumerate(h):
    size = e.get("size", 0)
    if when(e) < start:
        took = "  cached"
        dt = 0
    else:
        dt = (when(e) - max(when(h[i - 1]), start)).total_seconds()
        took = f"{dt:6.1f} s"
    if dt >= 5 or size >= 10e6:
        what = re.sub(r"^.*?/bin/sh -c (#\(nop\) )?", "", e["CreatedBy"])
        print(f"    step {took}, {size / 1e6:7.1f} MB: {what[:110]}")
PY
else
  out "$OUTDIR/build.log" 40
  fail "build: podman build ${build_args[*]//$ctx/CONTEXT} CONTEXT (log: $OUTDIR/build.log)"
  log "test-image: $passed passed, $failed failed"
  exit 1
fi
# Earlier builds' chains of layers, now untagged: buildah's cache may pick
# an older chain whose layers match the first steps and then miss where it
# differs (after a --no-cache build there are two), which step 2 would take
# for a bad layer order; they also hold gigabytes. Only this image's
# dangling images go (its title label).
# (A removed image's parents become dangling in turn: prune until none is.)
for _ in $(seq 1 60); do
  [[ -n "$(pm image prune -f --filter "label=org.opencontainers.image.title=GPU memory coalescing course" 2>/dev/null)" ]] || break
done

# What the CUDA step recorded; and what it said, when it ran (a cached step
# prints nothing).
record="$(pm run --rm --entrypoint cat "$IMAGE" /usr/local/lib/coalesce/cuda 2>/dev/null | paste -sd' ' || true)"
said="$(grep -m1 'image_cuda.sh: no CUDA in' "$OUTDIR/build.log" | cut -c1-150 || true)"
if [[ "$record" == "cuda=none base=$BASE" ]] && { [[ -n "$said" ]] || grep -A1 'coalesce-image setup' "$OUTDIR/build.log" | grep -q 'Using cache'; }; then
  pass "the image records no CUDA ($record); the build said: ${said:-(step cached)}..."
else
  fail "the CUDA step on $BASE: record '$record', said '$said'; want cuda=none and the build saying so"
fi

# ---------------------------------------------------------------- 2. layer order
# The same context with one notebook edited (a space at the end of a
# markdown line): every step before the last COPY must come from the cache.
ctx2="$tmp/context-edited"
cp -a "$ctx" "$ctx2"
nb="$(cd "$ctx2" && ls notebooks/*.ipynb | head -n1)"
python3 - "$ctx2/$nb" <<'PY'
import json, sys
p = sys.argv[1]
nb = json.load(open(p))
cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
src = cell["source"] if isinstance(cell["source"], list) else [cell["source"]]
src[-1] = src[-1] + " "
cell["source"] = src
json.dump(nb, open(p, "w"), indent=1, ensure_ascii=False)
PY
t0="$(now)"
if pm build --format docker --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE-edited" -f "$ctx2/Dockerfile" "$ctx2" >"$OUTDIR/rebuild.log" 2>&1; then
  rebuild_s="$(since "$t0")"
  # The steps that did not come from the cache (buildah prints "--> Using
  # cache" after each one that did; FROM never does).
  rebuilt="$(awk '/^STEP [0-9]+\//{ if (s != "" && !c) print s; s = $0; c = ($3 == "FROM"); next } /--> Using cache/{ c = 1 } END { if (s != "" && !c) print s }' "$OUTDIR/rebuild.log")"
  last_copy="$(grep -nE '^COPY .* \. /opt/course' "$ctx/Dockerfile" | tail -n1 | cut -d: -f2-)"
  bad="$(printf '%s\n' "$rebuilt" | awk -v last="$last_copy" 'index($0, last) { seen = 1; next } !seen && NF')"
  if [[ -z "$bad" ]]; then
    pass "rebuild after editing $nb: ${rebuild_s} s; rebuilt from \`$last_copy\` on, every step before it from the cache"
  else
    fail "rebuild after editing $nb (${rebuild_s} s) redid steps before the last COPY:"
    printf '%s\n' "$bad" | sed 's/^/    /' | tee -a "$LOG"
  fi
  pm rmi "$IMAGE-edited" >/dev/null 2>&1 || true
else
  out "$OUTDIR/rebuild.log"
  fail "rebuild after a notebook edit (log: $OUTDIR/rebuild.log)"
fi

# ---------------------------------------------------------------- 3. the server
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
container="coalesce-test-image-$$"
base_url="http://127.0.0.1:$port"
# As `docker run -p 8888:8888 coalescing` runs it (the token fixed, so that
# the test can log in): the image's USER and CMD.
t0="$(now)"
pm run -d --name "$container" -p "127.0.0.1:$port:8888" -e "JUPYTER_TOKEN=$token" "$IMAGE" >/dev/null 2>"$OUTDIR/run.err"
# Podman schedules the HEALTHCHECK's interval with a systemd timer; without
# systemd (this machine, most CI containers) it says so here and the check
# runs only when asked (podman healthcheck run, below).
if grep -q 'systemd' "$OUTDIR/run.err"; then
  log "note: the health check's timer is refused here, podman run said: $(grep -m1 systemd "$OUTDIR/run.err" | sed 's/^.*msg="//; s/"$//')"
fi
up=0
for _ in $(seq 1 120); do
  if curl -fs -o /dev/null "$base_url/api"; then up=1; break; fi
  sleep 0.5
done
pm logs "$container" >"$OUTDIR/server.log" 2>&1 || true
if [[ "$up" == 1 ]]; then
  pass "server: JupyterLab answers on $base_url/api $(since "$t0") s after podman run"
else
  out "$OUTDIR/server.log"
  fail "server: nothing answers on $base_url/api within 60 s (podman run -p 127.0.0.1:$port:8888 $IMAGE)"
  log "test-image: $passed passed, $failed failed"
  exit 1
fi
if grep -q '^coalesce image: no CUDA' "$OUTDIR/server.log"; then
  pass "start says it has no CUDA: $(grep -m1 '^coalesce image: no CUDA' "$OUTDIR/server.log" | cut -c1-160)..."
else
  out "$OUTDIR/server.log"
  fail "the container's start did not say that the image has no CUDA"
fi
# Every process of the container (tini, the server; the exec'd sh), its uid
# from /proc (the image has no ps).
uids="$(pm exec "$container" sh -c 'for d in /proc/[0-9]*; do u=$(awk "/^Uid:/ { print \$2 }" "$d/status" 2>/dev/null) || continue; printf "%s %s\n" "$u" "$(tr "\0" " " <"$d/cmdline" 2>/dev/null | cut -c1-90)"; done' 2>&1 || true)"
if grep -q "jupyter-lab\|jupyter lab" <<<"$uids" && ! grep -qv "^$LEARNER_UID " <<<"$uids"; then
  pass "every process in the container is uid $LEARNER_UID: $(grep -m1 'jupyter' <<<"$uids")"
else
  fail "processes in the container, want all uid $LEARNER_UID and a jupyter lab: $(paste -sd'|' <<<"$uids")"
fi
# What the learner must be able to write: the course (notebooks are saved
# in place, attempts beside them) and the build cache.
notmine="$(pm exec "$container" sh -c 'find /opt/course /opt/go/cache ! -user "$(id -u)" | head -n 5; touch /opt/course/notebooks/.write-test && rm /opt/course/notebooks/.write-test' 2>&1 || echo "(the learner cannot write notebooks/)")"
if [[ -z "$notmine" ]]; then
  pass "the learner owns every file of /opt/course and /opt/go/cache, and writes notebooks/"
else
  fail "files in the container the learner does not own or cannot write: $(paste -sd' ' <<<"$notmine")"
fi
hc="$(pm image inspect --format '{{.HealthCheck.Test}}' "$IMAGE" 2>&1 || true)"
if hc_out="$(pm healthcheck run "$container" 2>&1)"; then
  pass "HEALTHCHECK: podman healthcheck run: ${hc_out:-healthy} ($hc)"
else
  fail "HEALTHCHECK: podman healthcheck run: $hc_out ($hc)"
fi
health_log="$(pm inspect --format '{{range .State.Healthcheck.Log}}{{.Output}}{{end}}' "$container" 2>/dev/null || true)"
if grep -q 'coalesce image: no CUDA' <<<"$health_log"; then
  pass "the health check's output says it has no CUDA"
else
  fail "the health check's output does not say that the image has no CUDA: ${health_log:-(empty)}"
fi
loc="$(curl -s -o /dev/null -w '%{redirect_url}' "$base_url/?token=$token")"
landing="$(curl -sL -o /dev/null -w '%{url_effective}' "$base_url/?token=$token")"
if [[ "$landing" == */lab/tree/notebooks/index.ipynb* ]]; then
  pass "/ leads to the index: ${loc%%\?*} -> ${landing%%\?*}"
else
  fail "/ leads to $landing, want .../lab/tree/notebooks/index.ipynb"
fi
ks="$(curl -fsS -H "Authorization: token $token" "$base_url/api/kernelspecs" || true)"
if python3 -c 'import json,sys; d = json.loads(sys.argv[1]); assert d["default"] == "gonb" and "gonb" in d["kernelspecs"], d["default"]' "$ks" 2>/dev/null; then
  pass "kernelspecs: gonb found and the default ($(python3 -c 'import json,sys; print(sorted(json.loads(sys.argv[1])["kernelspecs"]))' "$ks"))"
else
  fail "kernelspecs: want gonb found and the default, got ${ks:0:300}"
fi

# ---------------------------------------------------------------- 4. browser
# The page must expose the app to the test's JavaScript: JupyterLab reads
# labconfig/page_config.json from its config path at every page load, so
# the server's command line stays the image's.
pm exec "$container" sh -c 'mkdir -p "$HOME/.jupyter/labconfig" && echo "{\"exposeAppInBrowser\": true}" >"$HOME/.jupyter/labconfig/page_config.json"'
if [[ -x "$VPY" ]] && "$VPY" -c 'import playwright' 2>/dev/null; then
  t0="$(now)"
  if BROWSER_LAB_URL="$base_url" BROWSER_LAB_TOKEN="$token" BROWSER_LAB_DIR=build/browser-image \
    BROWSER_OUT="$OUTDIR/browser" BROWSER_TEST_REQUIRED=1 "$VPY" scripts/browser_test.py >"$OUTDIR/browser.log" 2>&1 &&
    grep -q 'browser: 2 passed, 0 failed' "$OUTDIR/browser.log"; then
    pass "browser test against the container's JupyterLab ($(since "$t0") s): $(grep -E '^browser: (PASS|index|[0-9][0-9]-)' "$OUTDIR/browser.log" | grep -v screenshots | sed 's/^browser: //' | paste -sd';' | cut -c1-300)"
  else
    out "$OUTDIR/browser.log" 30
    fail "browser test against the container's JupyterLab (log: $OUTDIR/browser.log)"
  fi
else
  fail "browser test: $VPY has no Playwright: run make test-browser first (make test-image does)"
fi

# ---------------------------------------------------------------- 5. notebooks
# A fresh notebook's first cells, timed, in a fresh kernel: the setup cell,
# then the first that compiles the course (the build cache the image warmed).
pm exec -i "$container" python3 - >"$OUTDIR/first-cell.log" 2>"$OUTDIR/first-cell.kernel.log" <<'PY' || true
import json, os, time
import nbformat
from nbclient import NotebookClient
nb = nbformat.read("/opt/course/notebooks/index.ipynb", as_version=4)
code = [c for c in nb.cells if c.cell_type == "code"]
test = nbformat.v4.new_notebook(cells=[code[0], nbformat.v4.new_code_cell(
    'import "github.com/coalescing-course/coalesce/lab"\n\n%%\nlab.Status()')])
os.makedirs("/opt/course/build/first-cell", exist_ok=True)
client = NotebookClient(test, kernel_name="gonb", timeout=300,
                        resources={"metadata": {"path": "/opt/course/build/first-cell"}})
with client.setup_kernel():
    for i, cell in enumerate(test.cells):
        t0 = time.monotonic()
        client.execute_cell(cell, i)
        dt = time.monotonic() - t0
        text = " ".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)
        print(f"cell {i + 1}: {dt:.1f} s: {cell.source.splitlines()[-1][:60]!r} -> {text.strip()[:100]!r}")
PY
if grep -q '^cell 2: .*H200' "$OUTDIR/first-cell.log"; then
  pass "first cells in the container: $(grep '^cell' "$OUTDIR/first-cell.log" | cut -d: -f1,2 | paste -sd';')"
  sed 's/^/    /' "$OUTDIR/first-cell.log" | tee -a "$LOG" >/dev/null
else
  out "$OUTDIR/first-cell.log"
  out "$OUTDIR/first-cell.kernel.log"
  fail "first cells in the container (lab.Status)"
fi
# The course's goal for all notebooks is 240 s on 2 idle cores (make
# test-notebooks enforces it there). Here, on a machine shared with other
# work, the time is reported with the load beside it, and the budget is a
# hang guard far above the goal (a cell's own timeout, 120 s, is the other).
log "load average before the notebooks: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cpus)"
t0="$(now)"
if pm exec -e "NOTEBOOK_HANG_GUARD=${NOTEBOOK_HANG_GUARD:-1800}" "$container" \
  sh -c 'python3 scripts/run_notebooks.py && python3 scripts/run_notebooks.py scripts/testdata/no-setup.ipynb' \
  >"$OUTDIR/notebooks.log" 2>&1; then
  pass "every notebook headless inside the container ($(since "$t0") s, load average after: $(cut -d' ' -f1-3 /proc/loadavg)): $(grep -E '^[0-9]+ passed' "$OUTDIR/notebooks.log" | paste -sd';')"
  grep -E '^(PASS|FAIL) |wall time' "$OUTDIR/notebooks.log" | sed 's/^/    /' | tee -a "$LOG" >/dev/null || true
else
  out "$OUTDIR/notebooks.log" 40
  fail "notebooks headless inside the container (log: $OUTDIR/notebooks.log)"
fi

# ---------------------------------------------------------------- 6. grading
# docs/running.md's line, with podman, as an instructor (uid $GRADER_UID)
# with the executed notebooks of step 5 as one learner's submission.
work="$tmp/grading"
mkdir -p "$work/submissions/learner1"
pm cp "$container:/opt/course/build/notebooks/." "$tmp/executed" >/dev/null 2>&1 || true
for f in notebooks/*.ipynb; do # the course's notebooks, as executed
  cp "$tmp/executed/${f##*/}" "$work/submissions/learner1/" 2>/dev/null || true
done
chown -R "$GRADER_UID:$GRADER_UID" "$work"
n_sub="$(ls "$work/submissions/learner1" | wc -l)"
grade_cmd=(run --rm --user "$GRADER_UID" -v "$work:/work" -w /work "$IMAGE" coalesce grade -out grades/ submissions/)
t0="$(now)"
set +e
pm "${grade_cmd[@]}" >"$OUTDIR/grade.log" 2>&1
rc=$?
set -e
if [[ "$rc" == 0 && -f "$work/grades/totals.csv" && "$(stat -c %u "$work/grades/totals.csv")" == "$GRADER_UID" ]] &&
  awk -F, '$1 == "learner1" && ($6 == "graded" || $6 == "partial") { ok = 1 } END { exit !ok }' "$work/grades/totals.csv"; then
  pass "grade: podman ${grade_cmd[*]} ($n_sub notebooks, $(since "$t0") s): $(grep '^learner1,' "$work/grades/totals.csv" | cut -c1-120)"
  cp "$work/grades/totals.csv" "$OUTDIR/totals.csv"
else
  out "$OUTDIR/grade.log"
  fail "grade: podman ${grade_cmd[*]}: exit $rc, grades/: $(ls "$work/grades" 2>&1 | paste -sd' ')"
fi

# ---------------------------------------------------------------- 7. a named volume
# docs/running.md: a named volume over notebooks/ keeps the learner's work
# across containers; a new one is filled from the image, owned by the learner.
vol="coalesce-test-image-$$"
n_nb="$(ls notebooks/*.ipynb | wc -l)"
if v_out="$(pm run --rm -v "$vol:/opt/course/notebooks" "$IMAGE" sh -c 'ls notebooks/*.ipynb | wc -l; stat -c %u notebooks/index.ipynb; echo x >notebooks/.write-test && echo writable' 2>"$OUTDIR/volume.err")" &&
  [[ "$(paste -sd' ' <<<"$v_out")" == "$n_nb $LEARNER_UID writable" ]]; then
  pass "a new named volume over notebooks/ is filled from the image: $n_nb notebooks, uid $LEARNER_UID, writable"
else
  fail "named volume over notebooks/: got '$(paste -sd' ' <<<"${v_out:-}")', want '$n_nb $LEARNER_UID writable' $(cat "$OUTDIR/volume.err")"
fi
pm volume rm -f "$vol" >/dev/null 2>&1 || true

# ---------------------------------------------------------------- 8. another uid
# docs/running.md: another uid than the image's runs cells (the warm cache
# read, new entries not kept) but cannot save in /opt/course.
if o_out="$(pm run --rm --user 1234 "$IMAGE" sh -c 'd="$(mktemp -d)" && cd "$d" && printf "module x\ngo 1.26\n" >go.mod && printf "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"compiled\") }\n" >m.go && go run . && { touch /opt/course/notebooks/x.ipynb 2>/dev/null && echo saved || echo "cannot save"; }' 2>"$OUTDIR/otheruid.err")" &&
  [[ "$(paste -sd' ' <<<"$o_out")" == "compiled cannot save" ]]; then
  pass "as uid 1234: a Go program compiles and runs, /opt/course/notebooks is not writable (as docs/running.md says)"
else
  fail "as uid 1234: got '$(paste -sd' ' <<<"${o_out:-}")', want 'compiled cannot save' $(tail -n3 "$OUTDIR/otheruid.err")"
fi

# ---------------------------------------------------------------- 9. the hub's command
# The ENTRYPOINT stays when JupyterHub replaces CMD: the CUDA line is in
# every hub server's log too.
if v="$(pm run --rm "$IMAGE" jupyterhub-singleuser --version 2>"$OUTDIR/singleuser.err")" &&
  grep -q '^coalesce image: no CUDA' "$OUTDIR/singleuser.err"; then
  pass "podman run $IMAGE jupyterhub-singleuser --version: $v, after the no-CUDA line"
else
  out "$OUTDIR/singleuser.err"
  fail "podman run $IMAGE jupyterhub-singleuser --version"
fi

pm logs "$container" >"$OUTDIR/server.log" 2>&1 || true
log "total: $(since "$t_all") s"
log "test-image: $passed passed, $failed failed"
((failed == 0))
