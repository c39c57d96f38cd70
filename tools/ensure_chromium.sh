#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (test tools cannot download browsers here).
# Install it when missing and we are allowed to; otherwise say what to do.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq </dev/null
  apt-get install -y -qq --no-install-recommends chromium </dev/null >/dev/null
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq </dev/null
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium </dev/null >/dev/null
else
  echo "relidash: /usr/bin/chromium is missing; install Debian's chromium package (apt-get install chromium) for the browser tests" >&2
  exit 1
fi
