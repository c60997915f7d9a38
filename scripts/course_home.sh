#!/usr/bin/env bash
# Gives a learner a working copy of the course in their home directory, for a
# JupyterHub whose single-user image is this course's (docs/running.md). It
# runs at every server start, before the server, from the image's start
# command (scripts/singleuser.sh), never from a postStart hook, which
# Kubernetes may run after the server has started.
#
#   scripts/course_home.sh [SRC [DEST]]     defaults: $COURSE_ROOT (else the
#                                           course this script is in), $HOME/course
#
# DEST/notebooks/ holds the learner's own copies of the notebooks, kept up to
# date by scripts/course_notebooks.py: a missing one is copied, an untouched
# one (its cells as the course shipped them) is replaced by the course's new
# version, an edited one is never touched and the new version is offered
# beside it (NAME.new.ipynb) with a note, notebooks/COURSE-UPDATES.md.
#
# DEST/go.work makes the notebooks build the course from SRC: the setup cell
# finds the course root with `go list -m` from the notebook's folder, which
# DEST/go.work (`use SRC`) answers with SRC itself. So every learner compiles
# the same files at the same path, and the image's warm build cache (filled
# from SRC) serves them all, whatever their home directory.
#
# Everything else of SRC (lessons/, lab/, grader/, ...) is linked into DEST,
# renewed at every start, to be read in JupyterLab's file browser. Where a
# learner put something of their own in the place of one of those links (a
# folder named lab, say), it is moved aside to NAME.mine (NAME.mine-2, ...),
# the link restored, and the note says so: nothing is deleted. Links into
# SRC whose target is gone are removed.
#
# Exits non-zero, saying why and how to fix it, on failure (DEST a file, say):
# scripts/singleuser.sh then shows that to the learner.
set -euo pipefail

say() { printf 'course_home.sh: %s\n' "$*"; }
die() { printf 'course_home.sh: ERROR: %s\n' "$*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:-${COURSE_ROOT:-$here}}"
dest="${2:-${HOME:?course_home.sh: HOME is not set}/course}"
[[ -f "$src/go.mod" && -d "$src/notebooks" ]] || die "$src is not the course (no go.mod and notebooks/)"
src="$(cd "$src" && pwd -P)"
if [[ -e "$dest" && ! -d "$dest" ]] || [[ -L "$dest" && ! -e "$dest" ]]; then
  die "$dest is not a folder (a file or a broken link is in its place), so the course cannot be set up there. Rename it (in JupyterLab's file browser, or in a terminal: mv $dest $dest.old), then restart your server (File > Hub Control Panel > Stop My Server, then Start My Server)."
fi
mkdir -p "$dest/notebooks" || die "cannot create $dest/notebooks"
dest="$(cd "$dest" && pwd -P)"
[[ "$dest" != "$src" ]] || die "SRC and DEST are the same directory ($src)"
[[ -d "$dest/notebooks" && ! -L "$dest/notebooks" ]] ||
  die "$dest/notebooks is not a folder: rename it, then restart your server"

# What stays out of DEST: the learner's notebooks (copied below), the module
# files (DEST/go.work stands for them) and what only a developer checkout has.
skip() {
  case "$1" in
    notebooks | go.mod | go.sum | go.work | go.work.sum | .git | .venv | .cache | .devbin | build | .ipynb_checkpoints) return 0 ;;
  esac
  return 1
}

# aside PATH: moves a learner's PATH out of the course's way, never over
# anything: PATH.mine, else PATH.mine-2, ...
moved=()
aside() {
  local to="$1.mine" i=2
  while [[ -e "$to" || -L "$to" ]]; do to="$1.mine-$i"; i=$((i + 1)); done
  mv -- "$1" "$to" || die "cannot move $1 aside to $to"
  moved+=("${1##*/} -> ${to##*/}")
  say "moved your $1 aside to $to: the course's ${1##*/} is back in its place"
}

shopt -s nullglob dotglob
for path in "$src"/*; do
  name="${path##*/}"
  skip "$name" && continue
  link="$dest/$name"
  if [[ -L "$link" && "$(readlink "$link")" == "$path" ]]; then
    continue
  fi
  if [[ -e "$link" || -L "$link" ]]; then
    if [[ -L "$link" && "$(readlink "$link")" == "$src"/* ]]; then
      rm -f -- "$link" # ours, to an old place
    else
      aside "$link"
    fi
  fi
  ln -sn -- "$path" "$link"
done
# Links into SRC whose target went away with an image update, and the module
# files of homes set up before DEST/go.work (links to SRC/go.mod, go.sum).
for link in "$dest"/*; do
  if [[ -L "$link" && "$(readlink "$link")" == "$src"/* ]] && { [[ ! -e "$link" ]] || skip "${link##*/}"; }; then
    rm -f -- "$link"
  fi
done

# DEST/go.work: ours when it starts with the marker line; a learner's is moved aside.
marker="// Written by the course (scripts/course_home.sh) at every server start: edits are lost."
gover="$(sed -n 's/^go \([0-9][0-9.]*\)[[:space:]]*$/\1/p' "$src/go.mod" | head -n1)"
[[ -n "$gover" ]] || die "$src/go.mod has no go line"
want="$(printf '%s\n\ngo %s\n\nuse %s\n' "$marker" "$gover" "$src")"
work="$dest/go.work"
if [[ -e "$work" || -L "$work" ]] && [[ "$(head -n1 "$work" 2>/dev/null)" != "$marker" ]]; then
  aside "$work"
fi
if [[ "$(cat "$work" 2>/dev/null)" != "$want" ]]; then
  printf '%s\n' "$want" >"$work.tmp-$$" && mv -f "$work.tmp-$$" "$work" || die "cannot write $work"
fi

# The notebooks, by the policy of course_notebooks.py.
py="${PYTHON:-}"
if [[ -z "$py" ]]; then
  for p in python3 "${VENV:-/opt/venv}/bin/python"; do
    if command -v "$p" >/dev/null; then py="$p"; break; fi
  done
fi
[[ -n "$py" ]] || die "no python3 on PATH to copy the notebooks with"
shipped=()
[[ -f "$src/notebooks/.shipped.sha256" ]] && shipped=(--shipped "$src/notebooks/.shipped.sha256")
out="$("$py" "$here/scripts/course_notebooks.py" sync "$src/notebooks" "$dest/notebooks" "${shipped[@]}")" ||
  die "updating the notebooks in $dest/notebooks failed (above)"
printf '%s\n' "$out"

# What was moved aside goes into the note the learner sees.
if ((${#moved[@]})); then
  {
    printf '\n# Moved aside\n\nThe course needs these names in %s; what you had there was kept under a new name:\n\n' "$dest"
    printf -- '- %s\n' "${moved[@]}"
  } >>"$dest/notebooks/COURSE-UPDATES.md"
fi
say "course in $dest (code from $src; $(printf '%s' "$out" | tail -n1 | sed 's/^course_notebooks: //'))"
