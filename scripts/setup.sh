#!/usr/bin/env bash
# Installs what lbbench's tests and engines need beyond Go and Docker, from
# Debian's packages: nginx and HAProxy (proxy engines), Chromium (HTML report
# tests), wrk (generator comparison), HdrHistogram's Java library and a
# headless JRE (the .hgrm/.hlog test runs its HistogramLogProcessor),
# libxml2-utils (xmllint, the JUnit schema test), shellcheck (make
# lint-workflows checks the workflows' shell with it), gunicorn and uvicorn
# (Python worker scenarios), and the parts of the Kubernetes test cluster
# that Debian gives (etcd-server, containernetworking-plugins, and
# docker-registry, its image registry; see scripts/k8s-testbed.sh).
# Idempotent: installs only what is missing, and never starts a system
# service.
#
# The paths it looks at can be moved, for tests only, through the environment:
#   LBBENCH_SBIN       where nginx and HAProxy live when not on PATH (/usr/sbin)
#   LBBENCH_JAVA_LIBS  where Debian puts Java libraries (/usr/share/java)
#   LBBENCH_POLICY_RC  the invoke-rc.d policy file (/usr/sbin/policy-rc.d)
#   LBBENCH_APT_LISTS  apt's package lists (/var/lib/apt/lists)
#   LBBENCH_CNI_BIN    where Debian puts the CNI plugins (/usr/lib/cni)
set -euo pipefail

sbin=${LBBENCH_SBIN:-/usr/sbin}
policy=${LBBENCH_POLICY_RC:-/usr/sbin/policy-rc.d}
apt_lists=${LBBENCH_APT_LISTS:-/var/lib/apt/lists}
java_libs=${LBBENCH_JAVA_LIBS:-/usr/share/java}
cni_bin=${LBBENCH_CNI_BIN:-/usr/lib/cni}

need=()
command -v nginx    >/dev/null 2>&1 || [ -x "$sbin/nginx" ]   || need+=(nginx)
command -v haproxy  >/dev/null 2>&1 || [ -x "$sbin/haproxy" ] || need+=(haproxy)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v wrk      >/dev/null 2>&1 || need+=(wrk)
[ -f "$java_libs/hdrhistogram.jar" ] || need+=(libhdrhistogram-java)
command -v java     >/dev/null 2>&1 || need+=(default-jre-headless)
command -v xmllint  >/dev/null 2>&1 || need+=(libxml2-utils)
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v gunicorn >/dev/null 2>&1 || need+=(gunicorn)
command -v uvicorn  >/dev/null 2>&1 || need+=(uvicorn)
command -v etcd     >/dev/null 2>&1 || need+=(etcd-server)
command -v docker-registry >/dev/null 2>&1 || need+=(docker-registry)
[ -x "$cni_bin/bridge" ] || need+=(containernetworking-plugins)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${need[*]} from Debian's packages"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install ${need[*]}" >&2; exit 1; }
  sudo="sudo"
fi

# Keep package scripts from starting nginx or HAProxy as system services, with
# a policy-rc.d that denies every start. A policy file already there is left
# alone; one made here is removed on the way out, however the script ends.
made_policy=""
cleanup() {
  local rc=$?
  if [ -n "$made_policy" ]; then
    $sudo rm -f "$policy" || echo "setup: could not remove $policy" >&2
  fi
  # The script's exit status is the one it had before cleanup, never the
  # status of a test in here.
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ ! -e "$policy" ]; then
  made_policy=1
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
fi

# sudo may drop the environment: the frontend is set on apt-get's command line.
apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get)
# Refresh the package lists when they are missing or older than a day.
if [ -z "$(find "$apt_lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
  "${apt[@]}" update -qq
fi
"${apt[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "setup: done"
