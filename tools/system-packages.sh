#!/bin/sh
# The system packages the test suite needs beyond Python: Debian's Chromium, for the browser
# tests of the HTML replay. Installs what is missing when it can (root with apt-get); otherwise
# says what to install and goes on, and the browser tests then fail naming what is missing.
# The README's test command and CI (.ci/run) run this first; no test installs anything.
set -u
missing=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null && exit 0
    echo "error: apt-get could not install:$missing" >&2
    exit 1
fi
echo "warning: the browser tests need:$missing (Debian: sudo apt-get install$missing); they will fail without it" >&2
exit 0
