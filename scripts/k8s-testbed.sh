#!/usr/bin/env bash
# A real Kubernetes test cluster on this machine, for lbbench's kubernetes
# driver tests: kube-apiserver and kubelet built from k8s.io/kubernetes
# through the Go module proxy, Debian's etcd, one containerd instance per
# node (CRI on) and the CNI bridge plugins. No scheduler and no controller
# manager: the driver places pods itself with nodeName.
#
#   k8s-testbed.sh build   build (once per machine) the cluster binaries into
#                          $LBBENCH_K8S_CACHE (default ~/.cache/lbbench/k8s/VERSION)
#   k8s-testbed.sh up      install the Debian parts if missing, build, start
#                          etcd, kube-apiserver and NODES kubelets (default 3)
#                          under $LBBENCH_K8S_DIR (default /tmp/lbbench-k8s)
#                          and wait until every node is Ready
#   k8s-testbed.sh down    stop everything up started and remove its
#                          directory, bridges, iptables rules and cgroups
#   k8s-testbed.sh env     print the KUBECONFIG line for a running cluster
#                          and its registry (LBBENCH_REGISTRY=127.0.0.1:PORT)
#
# The cluster has an image registry of its own (Debian's docker-registry on
# 127.0.0.1:$LBBENCH_K8S_REGISTRY_PORT, default 15000, plain HTTP), from which
# every node's containerd pulls: lbbench run --image-repo pushes there.
# The server's node (node1) has CPUs of its own (1..n-1), the generators'
# nodes (node2, node3) CPU 0 (see node_cpus), for their pods, kubelets and
# containerds, and each kubelet offers only those; the control plane
# shares node1's.
#
# Idempotent: up on a running cluster checks it and returns; down on a
# stopped one does nothing. Everything lives under LBBENCH_K8S_DIR; the only
# things outside it are the bridges lbk8s0.., the iptables rules commented
# "lbbench-k8s", cgroups named lbbench-node*, and the shared
# /var/lib/kubelet/device-plugins path each kubelet sees through its own
# mount namespace.
set -euo pipefail

version=${LBBENCH_K8S_VERSION:-v1.37.2}
cache=${LBBENCH_K8S_CACHE:-$HOME/.cache/lbbench/k8s/$version}
dir=${LBBENCH_K8S_DIR:-/tmp/lbbench-k8s}
nodes=${LBBENCH_K8S_NODES:-3}
apiport=${LBBENCH_K8S_API_PORT:-16443}
etcdport=${LBBENCH_K8S_ETCD_PORT:-12379}
regport=${LBBENCH_K8S_REGISTRY_PORT:-15000}
tag="lbbench-k8s"
cni_bin=${LBBENCH_CNI_BIN:-/usr/lib/cni}
pause_ref="lbbench.local/pause:1"

log() { echo "k8s-testbed: $*" >&2; }
die() { log "$*"; exit 1; }

# staging_version maps k8s.io/kubernetes vX.Y.Z to its staging modules'
# published v0.Y.Z.
staging_version() { echo "v0.${version#v1.}"; }

# recipe names how the binaries in the cache were built: a change to the
# build below changes it, and the next build replaces them.
recipe="1 $version version-stamped"

build() {
  if [ -x "$cache/kube-apiserver" ] && [ -x "$cache/kubelet" ] && [ "$(cat "$cache/recipe" 2>/dev/null)" = "$recipe" ]; then
    return 0
  fi
  command -v go >/dev/null || die "go is not on PATH"
  log "building kube-apiserver and kubelet $version from the Go module proxy into $cache (about 7 minutes on 2 CPUs, once per machine)"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  (
    cd "$work"
    go mod init lbbench-k8s-build >/dev/null 2>&1
    # The module zip of k8s.io/kubernetes has no staging/ folder: every
    # k8s.io module it replaces with ./staging/src/... is taken at its
    # published release instead.
    local gomod sv
    gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$version"
    sv=$(staging_version)
    {
      echo "require k8s.io/kubernetes $version"
      echo "replace ("
      sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\t\1 => \1 '"$sv"'#p' "$gomod"
      echo ")"
    } >>go.mod
    printf 'package tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n\t_ "k8s.io/kubernetes/cmd/kubelet/app"\n)\n' >tools.go
    go mod tidy >/dev/null
    mkdir -p "$cache.tmp"
    # The version the binaries report (the API server's /version, the
    # nodes' kubelet version), which a module build leaves unset.
    local minor=${version#v1.}
    minor=${minor%%.*}
    local pkg=k8s.io/component-base/version
    local ldflags="-X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$cache.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$cache.tmp/kubelet" k8s.io/kubernetes/cmd/kubelet
    echo "$recipe" >"$cache.tmp/recipe"
  )
  rm -rf "$cache"
  mv "$cache.tmp" "$cache"
  log "built $cache"
}

# node_ip N: the address of node N's bridge, given to its kubelet as
# --node-ip (a loopback node IP leaves the node without an address, and
# exec and logs through the API fail).
node_ip() { echo "10.244.$1.1"; }
bridge() { echo "lbk8s$1"; }
cgname() { echo "lbbench-node$1"; }
kubelet_port() { echo $((10250 + 10 * $1)); }

# cpus_of LIST: the CPU numbers of a cpuset list such as 0-3,6, one a line.
cpus_of() {
  local part
  local -a parts
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do seq "${part%-*}" "${part#*-}"; done
}

# node_cpus N: the CPUs node N's pods may use, as a cpuset list. With two
# nodes or more and at least two CPUs, the server's and the generators'
# are disjoint, like the Docker driver's cpusets: node1, where the driver
# puts the server (the first node by name), gets CPUs 1 to n-1, every
# other node (the generators') CPU 0, so that the generators do not share
# the server's CPUs, as on machines of their own. Three nodes by default,
# so that --generators 2 puts its pods on two nodes, one CPU each.
# LBBENCH_K8S_SPLIT_CPUS=0, one node or one CPU: every node gets them all.
# Each node's containerd (and so its shims) and kubelet run on its CPUs
# too, as on a machine of its own; the control plane (etcd,
# kube-apiserver, the registry) on node1's, with the server rather than
# the generators: with everything on both CPUs the generator sent up to
# 7.4 ms late (4 of 9 runs of the default scenario invalid; 1 of 9 with
# the pods confined alone; 0 of 18 with all of it, though 13 of 15 an hour
# later).
node_cpus() {
  local all
  all=$(taskset -cp $$ | awk '{print $NF}') # the CPUs this script may use
  local -a cpus
  mapfile -t cpus < <(cpus_of "$all")
  if [ "${LBBENCH_K8S_SPLIT_CPUS:-1}" = 0 ] || [ "$nodes" -lt 2 ] || [ "${#cpus[@]}" -lt 2 ]; then
    echo "$all"
  elif [ "$1" -eq 1 ]; then
    local IFS=,
    echo "${cpus[*]:1}"
  else
    echo "${cpus[0]}"
  fi
}

# count_cpus LIST: how many CPUs a cpuset list holds.
count_cpus() { cpus_of "$1" | wc -l; }

# hierarchies lists the cgroup v1 hierarchies kubelets need a cgroupRoot in
# (every mounted one, the named systemd one too, but not the unified one).
hierarchies() {
  local h
  for h in /sys/fs/cgroup/*; do
    [ -d "$h" ] && [ ! -L "$h" ] || continue
    case "${h##*/}" in unified) continue ;; esac
    echo "$h"
  done
}

need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (it starts containerd, kubelets and bridges)"; }

# alive PID: the process exists and has not exited. kill -0 cannot tell:
# a process of ours that exited stays a zombie, parented to PID 1, until
# PID 1 reaps it, and in some containers that takes a second or two.
alive() {
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  st=${st##*) }
  [ "${st%% *}" != Z ]
}

running() { [ -f "$1" ] && alive "$(cat "$1")"; }

# start NAME LOG CPUS CMD...: runs CMD on CPUS (a cpuset list) in a
# session of its own, its pid in $dir/NAME.pid.
start() {
  local name=$1 logf=$2 on=$3
  shift 3
  if running "$dir/$name.pid"; then return 0; fi
  setsid taskset -c "$on" "$@" >"$logf" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
}

wait_for() { # wait_for WHAT PIDNAME SECONDS CMD...: until CMD succeeds, while PIDNAME runs
  local what=$1 name=$2 secs=$3 i
  shift 3
  for ((i = 0; i < secs * 4; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ -n "$name" ] && ! running "$dir/$name.pid"; then
      log "$what exited; the end of its log ($(logfile "$name")):"
      tail -n 15 "$(logfile "$name")" >&2 || true
      exit 1
    fi
    sleep 0.25
  done
  log "$what not ready after ${secs}s"
  [ -z "$name" ] || tail -n 15 "$(logfile "$name")" >&2 || true
  exit 1
}

# logfile NAME: the log of a process start made.
logfile() {
  case "$1" in
    containerd*) echo "$dir/node${1#containerd}/containerd.log" ;;
    kubelet*) echo "$dir/node${1#kubelet}/kubelet.log" ;;
    *) echo "$dir/$1.log" ;;
  esac
}

api() { # api METHOD PATH [BODY]: a request to the apiserver as the test user
  local args=(-sS -k --fail-with-body -H "Authorization: Bearer $(cat "$dir/pki/token")" -X "$1")
  if [ $# -ge 3 ]; then args+=(-H 'Content-Type: application/json' --data "$3"); fi
  curl "${args[@]}" "https://127.0.0.1:$apiport$2"
}

write_kubeconfig() {
  cat >"$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: lbbench-test
  cluster:
    server: https://127.0.0.1:$apiport
    insecure-skip-tls-verify: true
users:
- name: lbbench-test
  user:
    token: $(cat "$dir/pki/token")
contexts:
- name: lbbench-test
  context: {cluster: lbbench-test, user: lbbench-test, namespace: default}
current-context: lbbench-test
KC
}

control_plane() {
  mkdir -p "$dir/pki" "$dir/etcd" "$dir/apiserver"
  if [ ! -f "$dir/pki/sa.key" ]; then
    openssl genrsa -out "$dir/pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$dir/pki/sa.key" -pubout -out "$dir/pki/sa.pub" 2>/dev/null
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/pki/token"
    # The test user is in system:masters, which RBAC allows everything;
    # other users (service accounts) get only what their roles grant.
    echo "$(cat "$dir/pki/token"),lbbench-test,lbbench-test,system:masters" >"$dir/pki/tokens.csv"
  fi
  write_kubeconfig
  start etcd "$dir/etcd.log" "$(node_cpus 1)" etcd --name lbbench-test --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcdport" --advertise-client-urls "http://127.0.0.1:$etcdport" \
    --listen-peer-urls "http://127.0.0.1:$((etcdport + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((etcdport + 1))" \
    --initial-cluster "lbbench-test=http://127.0.0.1:$((etcdport + 1))"
  wait_for etcd etcd 30 curl -sf "http://127.0.0.1:$etcdport/health"
  start apiserver "$dir/apiserver.log" "$(node_cpus 1)" "$cache/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcdport" --bind-address 127.0.0.1 --secure-port "$apiport" \
    --cert-dir "$dir/apiserver" --token-auth-file "$dir/pki/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.96.0.0/24 \
    --kubelet-preferred-address-types InternalIP --profiling=false
  wait_for kube-apiserver apiserver 90 api GET /readyz
  mkdir -p "$dir/registry"
  cat >"$dir/registry.yml" <<REG
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $dir/registry}
  delete: {enabled: true}
http:
  addr: 127.0.0.1:$regport
REG
  start registry "$dir/registry.log" "$(node_cpus 1)" docker-registry serve "$dir/registry.yml"
  wait_for registry registry 30 curl -sf "http://127.0.0.1:$regport/v2/"
}

# node N: node N's bridge, cgroups, containerd and kubelet.
node() {
  local n=$1 nd="$dir/node$1" br ip cg
  br=$(bridge "$n")
  ip=$(node_ip "$n")
  cg=$(cgname "$n")
  mkdir -p "$nd/cni" "$nd/ipam" "$nd/containerd/root" "$nd/containerd/state" "$nd/runc" "$nd/opt" \
    "$nd/kubelet" "$nd/kubelet-pki" "$nd/device-plugins"
  if ! ip link show "$br" >/dev/null 2>&1; then
    ip link add "$br" type bridge
    ip addr add "$ip/24" dev "$br"
    ip link set "$br" up
  fi
  # Docker sets the FORWARD policy to DROP: accept what crosses the
  # testbed's bridges.
  iptables -C FORWARD -i "$br" -j ACCEPT -m comment --comment "$tag" 2>/dev/null ||
    iptables -I FORWARD -i "$br" -j ACCEPT -m comment --comment "$tag"
  iptables -C FORWARD -o "$br" -j ACCEPT -m comment --comment "$tag" 2>/dev/null ||
    iptables -I FORWARD -o "$br" -j ACCEPT -m comment --comment "$tag"
  local h mine reserved=0
  mine=$(node_cpus "$n")
  for h in $(hierarchies); do
    mkdir -p "$h/$cg"
    if [ -f "$h/cpuset.cpus" ]; then
      # Every CPU for now: the kubelet writes them all to its kubepods
      # cgroup when it starts (confine narrows them once it has).
      cat "$h/cpuset.cpus" >"$h/$cg/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h/$cg/cpuset.mems"
      # The kubelet counts the machine's CPUs: reserve the others, so that
      # what it offers the pods is the CPUs they get.
      reserved=$(($(count_cpus "$(cat /sys/devices/system/cpu/online)") - $(count_cpus "$mine")))
    fi
  done
  cat >"$nd/cni/10-lbbench.conflist" <<CNI
{"cniVersion": "0.4.0", "name": "lbbench-node$n", "plugins": [
  {"type": "bridge", "bridge": "$br", "isGateway": true, "isDefaultGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$nd/ipam", "ranges": [[{"subnet": "10.244.$n.0/24", "gateway": "$ip"}]]}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}]}
CNI
  mkdir -p "$nd/certs.d/127.0.0.1:$regport"
  cat >"$nd/certs.d/127.0.0.1:$regport/hosts.toml" <<HOSTS
server = "http://127.0.0.1:$regport"
[host."http://127.0.0.1:$regport"]
  capabilities = ["pull", "resolve"]
HOSTS
  cat >"$nd/containerd.toml" <<CTD
version = 2
root = "$nd/containerd/root"
state = "$nd/containerd/state"
[grpc]
  address = "$nd/containerd.sock"
[ttrpc]
  address = "$nd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$nd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_ref"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$nd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$nd/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$nd/cni"
CTD
  start "containerd$n" "$nd/containerd.log" "$mine" containerd --config "$nd/containerd.toml"
  wait_for "containerd of node$n" "containerd$n" 30 ctr -a "$nd/containerd.sock" version
  ctr -a "$nd/containerd.sock" -n k8s.io images import --snapshotter native "$dir/pause.tar" >/dev/null
  cat >"$nd/kubelet.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: true
cgroupRoot: /$cg
failSwapOn: false
containerRuntimeEndpoint: unix://$nd/containerd.sock
address: $ip
port: $(kubelet_port "$n")
healthzPort: $(($(kubelet_port "$n") + 1))
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi"}
systemReserved: {cpu: "$reserved"}
registerNode: true
KCFG
  # The device-plugin socket's path is fixed for every kubelet: each runs
  # in a mount namespace of its own with its node's directory over it.
  mkdir -p /var/lib/kubelet/device-plugins
  start "kubelet$n" "$nd/kubelet.log" "$mine" unshare -m --propagation slave sh -c \
    'mount --bind "$0" /var/lib/kubelet/device-plugins && exec "$@"' "$nd/device-plugins" \
    "$cache/kubelet" --config "$nd/kubelet.yaml" --kubeconfig "$dir/kubeconfig" --root-dir "$nd/kubelet" \
    --cert-dir "$nd/kubelet-pki" --hostname-override "node$n" --node-ip "$ip"
}

# confine N: narrows node N's cgroups to its CPUs (node_cpus), deepest
# first (a cpuset must hold its children's). The kubelet sets its kubepods
# cgroup's CPUs only as it starts; every pod's cgroup made afterwards
# copies its parent's.
confine() {
  local n=$1 cg mine h c
  cg=$(cgname "$n")
  mine=$(node_cpus "$n")
  for h in $(hierarchies); do
    [ -f "$h/cpuset.cpus" ] || continue
    while IFS= read -r c; do echo "$mine" >"$c/cpuset.cpus"; done < <(find "$h/$cg" -depth -type d)
  done
}

node_ready() {
  api GET "/api/v1/nodes/node$1" | grep -A2 '"type": "Ready"' | grep -q '"status": "True"'
}

up() {
  need_root
  command -v etcd >/dev/null && command -v docker-registry >/dev/null && [ -x "$cni_bin/bridge" ] || bash "$(dirname "$0")/setup.sh"
  build
  mkdir -p "$dir"
  [ -n "${LBBENCH_BIN:-}" ] || die "set LBBENCH_BIN to a static lbbench binary (make build makes bin/lbbench)"
  if [ ! -f "$dir/pause.tar" ]; then
    "$LBBENCH_BIN" image --pause --image-repo "${pause_ref%:*}" --tag "${pause_ref##*:}" --archive "$dir/pause.tar.tmp" >/dev/null
    mv "$dir/pause.tar.tmp" "$dir/pause.tar"
  fi
  control_plane
  # Pods need a default ServiceAccount, which only the controller manager
  # would make.
  api POST /api/v1/namespaces/default/serviceaccounts '{"metadata":{"name":"default"}}' >/dev/null 2>&1 || true
  local n
  for ((n = 1; n <= nodes; n++)); do node "$n"; done
  for ((n = 1; n <= nodes; n++)); do wait_for "node$n" "kubelet$n" 120 node_ready "$n"; done
  for ((n = 1; n <= nodes; n++)); do
    confine "$n"
    log "node$n: pods on CPUs $(node_cpus "$n")"
  done
  log "up: $nodes nodes ready; KUBECONFIG=$dir/kubeconfig; registry 127.0.0.1:$regport"
}

# load ARCHIVE: imports an image archive into every node's containerd.
load() {
  local n
  for ((n = 1; n <= nodes; n++)); do
    ctr -a "$dir/node$n/containerd.sock" -n k8s.io images import --snapshotter native "$1" >/dev/null
  done
}

stop_pids() { # stop_pids NAME...: SIGTERM their sessions, then SIGKILL after 10 s
  local name pid i left
  local -a pids=()
  for name in "$@"; do
    [ -f "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid")
    kill -TERM -- "-$pid" 2>/dev/null || true
    pids+=("$pid")
  done
  for ((i = 0; i < 40; i++)); do
    left=0
    for pid in "${pids[@]}"; do alive "$pid" && left=1; done
    [ "$left" -eq 1 ] || break
    sleep 0.25
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  for name in "$@"; do rm -f "$dir/$name.pid"; done
}

down() {
  need_root
  local n nd h cg pid
  if [ -d "$dir" ]; then
    # Pods first, through the API, so each node removes its sandboxes
    # and their network namespaces.
    if running "$dir/apiserver.pid"; then
      api DELETE "/api/v1/namespaces/default/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
      for ((n = 1; n <= nodes; n++)); do
        [ -S "$dir/node$n/containerd.sock" ] || continue
        for ((i = 0; i < 60; i++)); do
          [ -z "$(ctr -a "$dir/node$n/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null)" ] && break
          sleep 0.5
        done
      done
    fi
    # Each tier at once: the kubelets, then the nodes' containerds, then
    # the registry and the apiserver, then etcd (an apiserver whose etcd
    # is gone takes its whole 10 s to stop).
    local -a names=()
    for ((n = 1; n <= nodes; n++)); do names+=("kubelet$n"); done
    stop_pids "${names[@]}"
    names=()
    for ((n = 1; n <= nodes; n++)); do
      nd="$dir/node$n"
      if [ -S "$nd/containerd.sock" ]; then
        for t in $(ctr -a "$nd/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
          ctr -a "$nd/containerd.sock" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1 || true
        done
      fi
      names+=("containerd$n")
    done
    stop_pids "${names[@]}"
    for ((n = 1; n <= nodes; n++)); do
      # Shims outlive containerd: stop those of this node.
      for pid in $(pgrep -f "containerd-shim.*-address $dir/node$n/containerd.sock" || true); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    stop_pids registry apiserver
    stop_pids etcd
    # Whatever a node mounted under the directory (sandbox shm, netns).
    awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  fi
  for ((n = 1; n <= 8; n++)); do
    ip link show "$(bridge "$n")" >/dev/null 2>&1 && ip link del "$(bridge "$n")"
    cg=$(cgname "$n")
    for h in $(hierarchies); do
      [ -d "$h/$cg" ] || continue
      # Remove the deepest cgroups first.
      find "$h/$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
  done
  while iptables -S FORWARD 2>/dev/null | grep -q -- "--comment $tag"; do
    rule=$(iptables -S FORWARD 2>/dev/null | grep -- "--comment $tag" | head -1 | sed 's/^-A /-D /')
    eval "iptables $rule" 2>/dev/null
  done
  rm -rf "$dir"
}

case "${1:-}" in
  build) build ;;
  up) up ;;
  down) down ;;
  load) [ $# -eq 2 ] || die "usage: $0 load ARCHIVE"; load "$2" ;;
  env) [ -f "$dir/kubeconfig" ] || die "no cluster under $dir"; echo "KUBECONFIG=$dir/kubeconfig"; echo "LBBENCH_REGISTRY=127.0.0.1:$regport" ;;
  *) echo "usage: $0 build|up|down|load ARCHIVE|env" >&2; exit 2 ;;
esac
