#!/usr/bin/env bash
# Installs what lbbench's tests and engines need beyond Go and Docker, from
# Debian's packages: nginx and HAProxy (proxy engines), Chromium (HTML report
# tests), wrk (generator comparison). Idempotent: installs only what is
# missing, and never starts a system service.
set -euo pipefail

need=()
command -v nginx    >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]   || need+=(nginx)
command -v haproxy  >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need+=(haproxy)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v wrk      >/dev/null 2>&1 || need+=(wrk)
[ ${#need[@]} -eq 0 ] && exit 0

echo "setup: installing ${need[*]} from Debian's packages"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install ${need[*]}" >&2; exit 1; }
  sudo="sudo"
fi

# Keep package scripts from starting nginx or HAProxy as system services.
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  made_policy=1
fi
cleanup() { [ -n "$made_policy" ] && $sudo rm -f "$policy"; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists when they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
  $sudo apt-get update -qq
fi
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "setup: done"
