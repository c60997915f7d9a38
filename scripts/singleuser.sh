#!/usr/bin/env bash
# The image's start command (its ENTRYPOINT runs it, under tini, before the
# command given): under JupyterHub, it sets up the learner's course in their
# home, then starts the learner's server; elsewhere (docker run, coalesce
# grade in the image) it only runs the command.
#
#   scripts/singleuser.sh [CMD [ARGS...]]     default CMD: jupyterhub-singleuser
#
# Under a hub (JUPYTERHUB_API_TOKEN set) it
#   1. runs scripts/course_home.sh: ~/course with the learner's notebooks,
#      updated as that script says;
#   2. keeps the image's warm Go build cache usable: GOCACHE (the image's
#      /opt/go/cache) is used as it is when this user may write it (the image's
#      uid 1000, Zero to JupyterHub's default); for any other uid it is copied
#      once into ~/.cache/coalesce/go-build, which then serves this learner
#      (a learner may not write a cache other learners build from);
#   3. execs CMD.
# When step 1 fails (a file where ~/course should be, a full disk), the server
# starts all the same, in the learner's home, opening COURSE-PROBLEM.md, which
# says what went wrong and how to fix it: the learner sees the reason in
# their browser instead of the hub's "did not respond in time".
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
(($#)) || set -- jupyterhub-singleuser
if [[ -z "${JUPYTERHUB_API_TOKEN:-}" ]]; then
  exec "$@"
fi

say() { printf 'singleuser.sh: %s\n' "$*" >&2; }
home="${HOME:?singleuser.sh: HOME is not set}"
problem="$home/COURSE-PROBLEM.md"

if log="$("$here/course_home.sh" 2>&1)"; then
  printf '%s\n' "$log" >&2
  [[ -f "$problem" ]] && rm -f -- "$problem"
else
  printf '%s\n' "$log" >&2
  say "the course could not be set up: starting the server in $home with $problem"
  reason="$(printf '%s\n' "$log" | sed -n 's/^course_home.sh: ERROR: //p' | tail -n1)"
  {
    printf '# The course could not be set up\n\n'
    printf 'Your server started, but the course was not put into `%s/course`:\n\n' "$home"
    printf '> %s\n\n' "${reason:-$(printf '%s\n' "$log" | tail -n1)}"
    printf 'Nothing of yours was changed. Fix that, then restart your server: '
    printf '*File > Hub Control Panel*, **Stop My Server**, then **Start My Server**. '
    printf 'If it keeps failing, send this page to your instructor.\n\n'
    printf 'What the setup printed:\n\n```\n%s\n```\n' "$log"
  } >"$problem.tmp-$$" 2>/dev/null && mv -f "$problem.tmp-$$" "$problem" || say "cannot write $problem either"
  export JUPYTERHUB_ROOT_DIR="$home"
  export JUPYTERHUB_DEFAULT_URL="/lab/tree/COURSE-PROBLEM.md"
fi

if [[ -n "${GOCACHE:-}" && -d "$GOCACHE" && ! -w "$GOCACHE" ]]; then
  own="${XDG_CACHE_HOME:-$home/.cache}/coalesce/go-build"
  if [[ ! -d "$own" ]]; then
    say "GOCACHE $GOCACHE is not writable by uid $(id -u): copying it to $own (once)"
    mkdir -p "${own%/*}" && cp -R "$GOCACHE" "$own.tmp-$$" && mv "$own.tmp-$$" "$own" ||
      { say "copying the build cache failed: $own starts cold"; rm -rf "$own.tmp-$$"; mkdir -p "$own"; }
  fi
  export GOCACHE="$own"
fi

exec "$@"
