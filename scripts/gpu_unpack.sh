#!/usr/bin/env bash
# On a GPU machine with nvcc, ncu and python3 but no Go and no network:
# unpacks the pieces scripts/gpu_bundle.sh built (BUNDLE), installs the
# notebook environment from them with scripts/install.sh, and runs
# `make test-gpu`. Idempotent: a piece already unpacked (its SHA-256
# stamped) is not unpacked again, install.sh skips what its stamps show
# done, so the pieces can come a few per call:
#
#   scripts/gpu_unpack.sh          unpack what is there; test once all are
#   scripts/gpu_unpack.sh --no-test    unpack and install, stop before the test
#
# While pieces are missing (never unpacked, nor here) it unpacks those that
# are here and exits 3, naming the others.
#
# Environment (defaults in brackets):
#   BUNDLE   where the pieces are                    [$ROOT/.gpubundle]
#   RUN_DIR  where they are unpacked, the venv, caches  [$ROOT/.gpurun]
#   PYTHON   the interpreter of the venv             [python3]
#   OUT      when set (the device machine's output folder), the log and a
#            tar.xz of build/notebooks/ are copied there
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUNDLE="${BUNDLE:-$ROOT/.gpubundle}"
RUN_DIR="${RUN_DIR:-$ROOT/.gpurun}"
PYTHON="${PYTHON:-python3}"
PIECES=(go.tar.xz gomod.tar.xz tools.tar.xz wheels.tar)

say() { printf 'gpu_unpack.sh: %s\n' "$*"; }
die() { printf 'gpu_unpack.sh: ERROR: %s\n' "$*" >&2; exit "${2:-1}"; }

test=1
case "${1:-}" in
  "") ;;
  --no-test) test=0 ;;
  *) die "usage: $0 [--no-test]; got '$1'" 2 ;;
esac
cd "$ROOT"
mkdir -p "$RUN_DIR"

# ------------------------------------------------------------ the pieces
# A piece unpacks into RUN_DIR/<its top folder>; the stamp beside it holds
# the SHA-256 of the piece it came from. A piece that changed (a new
# bundle) replaces its folder.
todo=()
for p in "${PIECES[@]}"; do
  top="${p%%.*}"
  stamp="$RUN_DIR/.$top.sha256"
  if [[ ! -f "$BUNDLE/$p" ]]; then
    [[ -f "$stamp" ]] || todo+=("$p")
    continue
  fi
  sum="$(sha256sum "$BUNDLE/$p" | cut -d' ' -f1)"
  [[ "$(cat "$stamp" 2>/dev/null)" == "$sum" && -d "$RUN_DIR/$top" ]] && continue
  say "unpacking $p ($(du -h "$BUNDLE/$p" | cut -f1)) into $RUN_DIR/$top"
  rm -rf "${RUN_DIR:?}/$top" "$stamp"
  tar -C "$RUN_DIR" -xf "$BUNDLE/$p" || die "unpacking $BUNDLE/$p failed"
  [[ -d "$RUN_DIR/$top" ]] || die "$p holds no folder $top/"
  # Each piece says what it was built from; this checkout must be the same.
  if ! (grep -E '^[0-9a-f]{64} ' "$RUN_DIR/$top/MANIFEST" | sha256sum -c --quiet) >/dev/null 2>&1; then
    rm -rf "${RUN_DIR:?}/$top"
    die "$p was built from other files than this checkout's (go.mod, go.sum, requirements.txt, scripts/install.sh; its MANIFEST: $(head -1 "$RUN_DIR/$top/MANIFEST" 2>/dev/null)): run scripts/gpu_bundle.sh again on this commit"
  fi
  printf '%s\n' "$sum" >"$stamp"
done
if ((${#todo[@]} > 0)); then
  say "still to come: ${todo[*]} (carry them from $BUNDLE, then run this again)"
  exit 3
fi

# ------------------------------------------------------------ the environment
# The bundled Go, offline: its module cache holds the course's build list;
# nothing may be fetched (GOPROXY=off), nor another toolchain
# (GOTOOLCHAIN=local); CGO_ENABLED=0, for the toolchain carries no cgo
# dependencies' headers and the course needs none.
export GOROOT="$RUN_DIR/go"
export PATH="$GOROOT/bin:$RUN_DIR/tools/bin:$PATH"
export GOMODCACHE="$RUN_DIR/gomod" GOCACHE="$RUN_DIR/gocache"
export GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"
# install.sh's locations, and the Makefile's (it passes them on).
export VENV="$RUN_DIR/venv" BIN_DIR="$RUN_DIR/tools/bin" KERNEL_PREFIX="$RUN_DIR/venv"
export INSTALL_GOPLS=0 PYTHON
# Step 1 of install.sh installs the bundled subset, from the wheels only.
export REQUIREMENTS="$RUN_DIR/wheels/requirements-gpu.txt"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$RUN_DIR/wheels" PIP_CONSTRAINT="$ROOT/requirements.txt"
[[ "$(go env GOVERSION)" == "go$(sed -n 's/^go //p' go.mod)" ]] ||
  die "the bundled go is $(go env GOVERSION); go.mod asks for go$(sed -n 's/^go //p' go.mod)"
scripts/install.sh

((test)) || { say "installed; scripts/gpu_unpack.sh (without --no-test) runs make test-gpu"; exit 0; }

# ------------------------------------------------------------ the test
set +e
make --no-print-directory test-gpu
rc=$?
set -e
if [[ -n "${OUT:-}" ]]; then
  mkdir -p "$OUT"
  cp -f build/gpu/test-gpu.log "$OUT/" 2>/dev/null || true
  tar -C build -cJf "$OUT/notebooks.tar.xz" notebooks 2>/dev/null || true
  say "copied the log and build/notebooks to $OUT"
fi
exit "$rc"
