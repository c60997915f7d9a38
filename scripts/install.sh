#!/usr/bin/env bash
# Installs everything the notebooks need, repo-locally and idempotently:
#   1. a Python venv with the pinned Jupyter tooling (requirements.txt);
#   2. gonb, goimports and gopls built from the versions pinned in go.mod;
#   3. the GoNB Jupyter kernelspec, installed into the venv (nothing lands in $HOME),
#      and Jupyter's config making it the default kernel (a new notebook opens in Go).
# Each step is skipped when a stamp shows it is already done, so a second run
# takes well under a second. It prints only what it does; it is silent when
# nothing needs doing and loud (non-zero exit, the failing output) on failure.
#
# Environment overrides (defaults in brackets), e.g. for a Docker image:
#   VENV            Python virtual environment                  [$ROOT/.venv]
#   BIN_DIR         where gonb, goimports and gopls are built   [$ROOT/.cache/bin]
#   KERNEL_PREFIX   Jupyter prefix receiving share/jupyter/kernels/gonb  [$VENV]
#   PYTHON          interpreter used to create the venv          [python3]
#   INSTALL_GOPLS   0 skips gopls (only used for completion in JupyterLab) [1]
#   REQUIREMENTS    the pinned Python packages of step 1     [requirements.txt]
#                   (gpu_unpack.sh: a subset, from wheels: PIP_NO_INDEX=1
#                   and PIP_FIND_LINKS, which pip reads from the environment)
#   FORCE           1 ignores every stamp and redoes everything  [0]
# Jupyter finds the kernel when JUPYTER_PATH=$KERNEL_PREFIX/share/jupyter is set
# (the Makefile exports it) or, for KERNEL_PREFIX=$VENV, via the venv itself;
# and the config in $KERNEL_PREFIX/etc/jupyter with JUPYTER_CONFIG_PATH, the
# venv's own, or /usr/local/etc/jupyter, a default (the image's KERNEL_PREFIX).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
BIN_DIR="${BIN_DIR:-$ROOT/.cache/bin}"
KERNEL_PREFIX="${KERNEL_PREFIX:-$VENV}"
PYTHON="${PYTHON:-python3}"
INSTALL_GOPLS="${INSTALL_GOPLS:-1}"
REQUIREMENTS="${REQUIREMENTS:-requirements.txt}"
FORCE="${FORCE:-0}"
KERNEL_NAME=gonb
KERNEL_DIR="$KERNEL_PREFIX/share/jupyter/kernels/$KERNEL_NAME"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# run_quiet DESCRIPTION CMD...: runs CMD with its output captured; prints the
# output only if it fails.
run_quiet() {
  local what="$1"; shift
  local log
  log="$(mktemp)"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    die "$what failed: $*"
  fi
  rm -f "$log"
}

cd "$ROOT"
command -v go >/dev/null || die "go is not on PATH (the course needs Go $(sed -n 's/^go //p' go.mod))"
# 3.11.5: the oldest Python every package of requirements.txt installs on
# (soupsieve 4.1 needs it; Debian 12's python3 is 3.11.2, too old).
command -v "$PYTHON" >/dev/null || die "$PYTHON is not on PATH (Python >= 3.11.5 is needed)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11, 5))' ||
  die "$PYTHON is $("$PYTHON" -V 2>&1); Python >= 3.11.5 is needed (set PYTHON=/path/to/python3.12, say)"

# ---------------------------------------------------------------- 1. venv
py_stamp="$VENV/.coalesce-requirements.sha256"
[[ -f "$REQUIREMENTS" ]] || die "REQUIREMENTS=$REQUIREMENTS: no such file"
py_want="$( { cat "$REQUIREMENTS"; "$PYTHON" -VV; } | sha256sum | cut -d' ' -f1)"
if [[ "$FORCE" == 1 || ! -x "$VENV/bin/python" || "$(cat "$py_stamp" 2>/dev/null)" != "$py_want" ]]; then
  if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating venv $VENV"
    run_quiet "creating the venv" "$PYTHON" -m venv "$VENV"
  fi
  say "installing $REQUIREMENTS into $VENV"
  run_quiet "pip install" "$VENV/bin/python" -m pip install --disable-pip-version-check \
    --no-input --quiet -r "$REQUIREMENTS"
  printf '%s\n' "$py_want" >"$py_stamp"
fi

# ---------------------------------------------------------------- 2. Go tools
# Versions come from go.mod (tool directives). The stamp hashes the selected
# versions of the tool modules (not all of go.mod, which changes often), the Go
# version and this script.
go_version="$(go env GOVERSION)"
goroot_bin="$(go env GOROOT)/bin"
tool_mods="$(go list -m -f '{{.Path}}@{{.Version}}' \
  github.com/janpfeifer/gonb golang.org/x/tools golang.org/x/tools/gopls)" ||
  die "go.mod must pin github.com/janpfeifer/gonb, golang.org/x/tools and golang.org/x/tools/gopls"
tools_stamp="$BIN_DIR/.coalesce-tools.sha256"
tools_want="$( { cat "${BASH_SOURCE[0]}"; echo "$tool_mods $go_version $INSTALL_GOPLS"; } | sha256sum | cut -d' ' -f1)"
tools=(gonb goimports)
[[ "$INSTALL_GOPLS" == 1 ]] && tools+=(gopls)
tools_ok=1
for t in "${tools[@]}"; do [[ -x "$BIN_DIR/$t" ]] || tools_ok=0; done
if [[ "$FORCE" == 1 || "$tools_ok" == 0 || "$(cat "$tools_stamp" 2>/dev/null)" != "$tools_want" ]]; then
  mkdir -p "$BIN_DIR"
  rm -f "$tools_stamp"
  say "building gonb and goimports (pinned in go.mod) into $BIN_DIR"
  run_quiet "building gonb" go build -o "$BIN_DIR/gonb" github.com/janpfeifer/gonb
  run_quiet "building goimports" go build -o "$BIN_DIR/goimports" golang.org/x/tools/cmd/goimports
  if [[ "$INSTALL_GOPLS" == 1 ]]; then
    # go.mod holds golang.org/x/tools at the version gopls pins, so gopls
    # builds from this module's build list like the other tools.
    say "building gopls $(go list -m -f '{{.Version}}' golang.org/x/tools/gopls) into $BIN_DIR"
    run_quiet "building gopls" go build -o "$BIN_DIR/gopls" golang.org/x/tools/gopls
  fi
  # Warm the build cache with what notebook cells compile (gonbui and the
  # standard library packages it pulls in), so the first cell is not slow.
  run_quiet "warming the Go build cache" go build github.com/janpfeifer/gonb/gonbui
  printf '%s\n' "$tools_want" >"$tools_stamp"
fi

# ---------------------------------------------------------------- 3. kernel
# `gonb --install` writes $JUPYTER_DATA_DIR/kernels/gonb/kernel.json. We then
# pin the kernel's environment: PATH gets $BIN_DIR (goimports, gopls) and Go's
# own bin dir, whatever PATH Jupyter is started with; GOFLAGS is reset so a
# user's GOFLAGS=-mod=mod cannot break the go.work workspace cells compile in.
# --go_work=$ROOT gives every new notebook a go.work that uses the course, so
# that a notebook whose setup cell was skipped still imports lab.
kernel_stamp="$KERNEL_DIR/.coalesce-kernel.sha256"
kernel_want="$( { cat "$tools_stamp"; echo "$BIN_DIR $goroot_bin $KERNEL_DIR $ROOT"; } | sha256sum | cut -d' ' -f1)"
if [[ "$FORCE" == 1 || ! -f "$KERNEL_DIR/kernel.json" || "$(cat "$kernel_stamp" 2>/dev/null)" != "$kernel_want" ]]; then
  say "installing the GoNB kernelspec into $KERNEL_DIR"
  mkdir -p "$KERNEL_PREFIX/share/jupyter"
  deps_flag=()
  [[ "$INSTALL_GOPLS" == 1 ]] || deps_flag=(--force_deps)
  run_quiet "gonb --install" env PATH="$BIN_DIR:$goroot_bin:$PATH" \
    JUPYTER_DATA_DIR="$KERNEL_PREFIX/share/jupyter" \
    "$BIN_DIR/gonb" --install --go_work="$ROOT" "${deps_flag[@]}"
  run_quiet "configuring kernel.json" "$VENV/bin/python" - "$KERNEL_DIR/kernel.json" "$BIN_DIR" "$goroot_bin" <<'PY'
import json, sys
path, bin_dir, goroot_bin = sys.argv[1:]
with open(path) as f:
    spec = json.load(f)
spec["display_name"] = "Go (gonb)"
spec["env"] = {
    # ${PATH} is substituted by jupyter_client from the launching environment.
    "PATH": f"{bin_dir}:{goroot_bin}:${{PATH}}",
    "GOFLAGS": "-buildvcs=false",
}
with open(path, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
PY
  printf '%s\n' "$kernel_want" >"$kernel_stamp"
fi

# The default kernel, in Jupyter's config rather than on a command line: a
# hub replaces the image's command, never its config (issue 26: New Notebook
# opened in Python under JupyterHub). Merged into a config file already
# there (jupyter_server reads its .d folder for extensions only).
config="$KERNEL_PREFIX/etc/jupyter/jupyter_server_config.json"
if ! "$VENV/bin/python" - "$config" 2>/dev/null <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    sys.exit(json.load(f).get("MultiKernelManager", {}).get("default_kernel_name") != "gonb")
PY
then
  say "making gonb Jupyter's default kernel: $config"
  mkdir -p "${config%/*}"
  run_quiet "writing $config" "$VENV/bin/python" - "$config" <<'PY'
import json, os, sys
path = sys.argv[1]
try:
    with open(path) as f:
        conf = json.load(f)
except FileNotFoundError:
    conf = {}
conf.setdefault("MultiKernelManager", {})["default_kernel_name"] = "gonb"
with open(path + ".tmp", "w") as f:
    json.dump(conf, f, indent=2)
    f.write("\n")
os.replace(path + ".tmp", path)
PY
fi
