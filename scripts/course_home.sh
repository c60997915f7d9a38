#!/usr/bin/env bash
# Gives a learner a working copy of the course in their home directory, for a
# JupyterHub whose single-user image is this course's (docs/running.md): run
# at every server start (Zero to JupyterHub: singleuser.lifecycleHooks.postStart).
#
#   scripts/course_home.sh [SRC [DEST]]     defaults: $COURSE_ROOT (else the
#                                           course this script is in), $HOME/course
#
# DEST/notebooks/ holds the learner's own copies of the notebooks: a notebook
# is copied there only when DEST has none of that name, so a learner's work is
# never overwritten and new lessons appear when the image is updated.
# Everything else in DEST (go.mod, lessons/, grader/, ...) is a symbolic link
# into SRC, renewed at every start, so the code the notebooks import is always
# the image's own. Notebooks find the course root with `go list -m` from
# their folder: DEST, through the go.mod link.
#
# An entry of DEST that is not a link (say a learner's file) is left alone,
# with a warning if SRC has an entry of that name; links into SRC whose
# target is gone are removed. Exits non-zero, saying why, on failure.
set -euo pipefail

say() { printf 'course_home.sh: %s\n' "$*"; }
die() { printf 'course_home.sh: ERROR: %s\n' "$*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:-${COURSE_ROOT:-$here}}"
dest="${2:-${HOME:?course_home.sh: HOME is not set}/course}"
[[ -f "$src/go.mod" && -d "$src/notebooks" ]] || die "$src is not the course (no go.mod and notebooks/)"
src="$(cd "$src" && pwd -P)"
mkdir -p "$dest/notebooks" || die "cannot create $dest/notebooks"
dest="$(cd "$dest" && pwd -P)"
[[ "$dest" != "$src" ]] || die "SRC and DEST are the same directory ($src)"

# What stays out of DEST: the learner's notebooks (copied below) and what
# only a developer checkout has.
skip() {
  case "$1" in
    notebooks | .git | .venv | .cache | .devbin | build | .ipynb_checkpoints) return 0 ;;
  esac
  return 1
}

shopt -s nullglob dotglob
for path in "$src"/*; do
  name="${path##*/}"
  skip "$name" && continue
  link="$dest/$name"
  if [[ -L "$link" || ! -e "$link" ]]; then
    ln -sfn "$path" "$link"
  else
    say "warning: $link is not a link into $src; left as it is"
  fi
done
# Links into SRC whose target went away with an image update.
for link in "$dest"/*; do
  if [[ -L "$link" && ! -e "$link" && "$(readlink "$link")" == "$src"/* ]]; then
    rm -f "$link"
  fi
done

copied=0
for path in "$src"/notebooks/*; do
  name="${path##*/}"
  [[ -f "$path" && "$name" != .* ]] || continue
  if [[ ! -e "$dest/notebooks/$name" ]]; then
    cp -p "$path" "$dest/notebooks/$name"
    chmod u+w "$dest/notebooks/$name"
    copied=$((copied + 1))
  fi
done
say "course in $dest (code linked from $src; $copied notebook(s) copied, existing ones kept)"
