#!/bin/sh
# Smoke-test a PyInstaller build (make dist-check): does the frozen program start, and
# did the bundle get everything the CLI, the daemon and the window import at run time?
#
#   packaging/pyinstaller/check_dist.sh [dist/taskgui/taskgui]
#
# 1. --version prints the version taskgui/__init__.py holds (pyproject.toml reads it there).
# 2. add a one-off task to a temporary database.
# 3. run the daemon headless for a few seconds: it must run that task (a real child
#    process) and exit 0 on SIGTERM.
# 4. open the window on the offscreen platform and close it with SIGTERM: exit 0.
# Everything it writes (database, logs) goes to a temporary directory.
set -eu

exe=${1:-dist/taskgui/taskgui}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
run_seconds=${DIST_CHECK_SECONDS:-3}

fail() { echo "dist-check: FAIL: $*" >&2; exit 1; }
[ -x "$exe" ] || fail "$exe does not exist; run 'make dist' first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen
export XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state"
export XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
db="$tmp/check.sqlite3"

# Start "$@" in the background, let it run, send SIGTERM, and expect exit status 0
# within the program's shutdown grace (10 s) plus a margin.
run_then_terminate() {
    label=$1; shift
    "$@" >"$tmp/$label.log" 2>&1 &
    pid=$!
    sleep "$run_seconds"
    if ! kill -0 "$pid" 2>/dev/null; then
        status=0; wait "$pid" || status=$?
        cat "$tmp/$label.log" >&2
        fail "$label exited by itself (status $status) before SIGTERM"
    fi
    kill -TERM "$pid"
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 150 ]; do
        sleep 0.1; waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        fail "$label did not stop within 15 s of SIGTERM"
    fi
    status=0; wait "$pid" || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$tmp/$label.log" >&2
        fail "$label exited $status after SIGTERM, expected 0"
    fi
    echo "dist-check: ok: $label ran ${run_seconds} s and exited 0 on SIGTERM"
}

expected=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$root/taskgui/__init__.py" | head -n 1)
[ -n "$expected" ] || fail "no __version__ = \"...\" line in $root/taskgui/__init__.py"
version=$("$exe" --version) || fail "'$exe --version' exited $?"
[ "$version" = "taskgui $expected" ] || fail "--version printed '$version', expected 'taskgui $expected'"
echo "dist-check: ok: --version prints '$version'"

"$exe" --db "$db" add --name dist-check --command "echo frozen-ok" >/dev/null \
    || fail "'add' exited $?"
run_then_terminate daemon "$exe" --db "$db" daemon --workers 2
"$exe" --db "$db" list --json >"$tmp/list.json" || fail "'list --json' exited $?"
grep -q '"state": "succeeded"' "$tmp/list.json" || {
    cat "$tmp/list.json" "$tmp/daemon.log" >&2
    fail "the daemon did not run the task to success"
}
echo "dist-check: ok: the daemon ran a command task to success"

run_then_terminate window "$exe" --db "$db"
echo "dist-check: all checks passed ($(du -sh "$(dirname "$exe")" | cut -f1) in $(dirname "$exe"))"
