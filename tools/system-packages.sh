#!/bin/sh
# The system packages the test suite needs beyond Python: Debian's Chromium, for the browser
# tests of the HTML replay and of the service's pages, and Debian's PostgreSQL server, whose
# binaries (initdb, pg_ctl) the store conformance suite uses to start a throw-away cluster
# (tests/postgres_server.py; the server is not left running). Installs what is missing when it can
# (root with apt-get); otherwise says what to install and goes on: the browser tests then fail
# naming what is missing, the PostgreSQL tests skip (fail in CI, where CI is set).
# The README's test command and CI (.ci/run) run this first; no test installs anything.
set -u
missing=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
# Debian keeps each server version's binaries off the PATH, under /usr/lib/postgresql/VERSION/bin.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing="$missing postgresql"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null && exit 0
    echo "error: apt-get could not install:$missing" >&2
    exit 1
fi
echo "warning: the tests need:$missing (Debian: sudo apt-get install$missing); the browser tests fail and the PostgreSQL tests skip without it" >&2
exit 0
