#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work here).
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q chromium
fi
/usr/bin/chromium --version
