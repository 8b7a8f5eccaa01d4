#!/usr/bin/env bash
# Installs a fr-profile .deb with apt into a minimal Debian root of each release and checks that
# it works there: --version, the dynamic link (readelf), collect, identifier, match, journey
# against a loopback test AM (packaging/test-am.py), keys list, a TPM identity on a loopback
# swtpm, collect under umockdev (a display, two cameras, a bluetooth radio) and
# bench/release-golden.sh on the installed binary. Prints `ok <release> <check>` or
# `FAIL <release> <check>: reason` per check, then `check-distros: N passed, N failed`; exits 1
# on any failure. `make check-distros` runs it.
#
#   packaging/check-distros.sh DEB CACHE_DIR [RELEASE...]      (default: bookworm trixie)
#   packaging/check-distros.sh --roots-only CACHE_DIR [RELEASE...]   (the cached roots alone)
#
# Each release's root is `debootstrap --variant=minbase` from $FR_DISTROS_MIRROR (default
# http://deb.debian.org/debian) plus the test-only packages below, cached once as a directory
# CACHE_DIR/<release>-<key> (key: release, mirror and package list), built under a temporary
# name and renamed when complete. The runtime libraries fr-profile uses are NOT in the cached
# root unless a test package or minbase needs them: they must come from the .deb's Depends and
# Recommends when `apt-get install ./fr-profile_*.deb` installs it (check "libraries": every
# library the binaries name is installed afterwards, and one the root already had is named in
# Depends or Recommends). Every run works on an overlay (or, without overlayfs, a copy) of the
# cached root, with /proc, /sys, /dev, /dev/pts and tmpfs /dev/shm and /tmp mounted, in a private mount
# namespace (unshare -m), so nothing stays mounted on the host even if the script is killed
# (a killed run's directories are removed by the next run);
# the downloaded .debs are kept in CACHE_DIR/apt-archives/<release>. swtpm and the test AM run
# on the host, bound to 127.0.0.1 (the chroot shares the host's network), and are stopped on
# exit (and killed with the script: setpriv --pdeathsig).
#
# Cost, measured on 2 shared cores with deb.debian.org: the first run of a release builds its
# root, 27-84 s (debootstrap and the test packages; mostly download, so it varies) and then
# checks in 5-17 s: 32-100 s per release in all; a cached run is 5-7 s per release (the .deb's
# dependencies come from CACHE_DIR/apt-archives). Disk: ~300 MB per release in CACHE_DIR, ~5 MB
# more per run while it runs. Needs root, debootstrap, python3, swtpm, util-linux (unshare,
# setpriv, flock) and the Debian mirror on every run (apt resolves the .deb's dependencies;
# `apt-get update` only when the cached package lists are stale).
set -euo pipefail

usage() {
  echo "usage: $0 DEB CACHE_DIR [RELEASE...]   (default releases: bookworm trixie)" >&2
  echo "       $0 --roots-only CACHE_DIR [RELEASE...]   (build the cached roots only)" >&2
  exit 64
}
[[ $# -ge 2 ]] || usage
[[ $(id -u) == 0 ]] || { echo "check-distros: must run as root (debootstrap, chroot, mounts)" >&2; exit 77; }

# A private mount namespace: every mount below disappears with this process, whatever happens.
if [[ -z ${FR_CHECK_DISTROS_NAMESPACE:-} ]]; then
  export FR_CHECK_DISTROS_NAMESPACE=1
  exec unshare --mount --propagation private -- "$BASH" "$0" "$@"
fi

REPO=$(cd "$(dirname "$0")/.." && pwd)
# --roots-only: the cached roots alone, no .deb needed — `make test` builds them (download-bound)
# while it compiles (CPU-bound); the check that follows waits for them on the cache's lock.
ROOTS_ONLY=""
if [[ $1 == --roots-only ]]; then ROOTS_ONLY=1; else DEB=$(realpath -e "$1") || usage; fi
mkdir -p "$2"
CACHE=$(realpath -e "$2")
shift 2
RELEASES=("$@")
[[ ${#RELEASES[@]} -gt 0 ]] || RELEASES=(bookworm trixie)
MIRROR=${FR_DISTROS_MIRROR:-http://deb.debian.org/debian}
# Test-only packages in the cached root (never fr-profile's runtime libraries on purpose):
# umockdev-run; the swtpm TCTI module tpm2-tss loads for swtpm:host=…; readelf and nm for the
# link check and bench/release-golden.sh.
EXTRA_PACKAGES=(umockdev libtss2-tcti-swtpm0 binutils)
# What the cached root is made of; a change makes a new cache entry.
CACHE_FORMAT=1
# The only NEEDED libraries allowed for /usr/bin/fr-profile, besides its program interpreter.
ALLOWED_NEEDED="libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1"
AM_TOKEN="AQIC5wM2LY4Sfcz-check-distros-token.*AAJTSQACMDE.*"
UMOCKDEV_FIXTURES=(laptop-edp-hdmi two-webcams bluetooth)

passed=0
failed=0
run_dir=""
root=""
am_pid=""
am_dir=""
building=""

log() { echo "check-distros: $*" >&2; }

# The mount points under (or at) $1 in this namespace, deepest first.
mounts_under() {
  local dir=$1
  awk -v dir="$dir" '{
      path = $5; gsub(/\\040/, " ", path)
      if (path == dir || index(path, dir "/") == 1) print length(path) "\t" path
    }' /proc/self/mountinfo | sort -rn | cut -f2-
}

unmount_under() {
  local mountpoint
  while read -r mountpoint; do
    [[ -n $mountpoint ]] || continue
    umount "$mountpoint" 2>/dev/null || umount -l "$mountpoint"
  done < <(mounts_under "$1")
}

# rm -rf that refuses to cross into anything still mounted.
remove_tree() {
  local dir=$1
  [[ -e $dir ]] || return 0
  unmount_under "$dir"
  if [[ -n $(mounts_under "$dir") ]]; then
    log "not removing $dir: still mounted"
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

mount_system() {
  local r=$1
  mount -t proc proc "$r/proc"
  mount -t sysfs sysfs "$r/sys"
  mount --bind /dev "$r/dev"
  mount --bind /dev/pts "$r/dev/pts"
  # Over the bound /dev's shm directory, so nothing written there reaches the host's /dev.
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/dev/shm"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/tmp"
}

stop_pid() {
  local pid=$1
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup_run() {
  if [[ -n $run_dir && -s $run_dir/swtpm.pid ]]; then
    stop_pid "$(cat "$run_dir/swtpm.pid")"
    rm -f "$run_dir/swtpm.pid"
  fi
  if [[ -n $run_dir ]]; then
    remove_tree "$run_dir" || true
    run_dir=""
  fi
}

cleanup() {
  local status=$?
  cleanup_run
  stop_pid "$am_pid"
  am_pid=""
  [[ -z $am_dir ]] || rm -rf "$am_dir"
  [[ -z $building ]] || remove_tree "$building" || true
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One check at a time; concurrent runs on the same cache wait (and may then clean stale dirs).
exec 9>"$CACHE/.lock"
flock 9
for stale in "$CACHE"/run.* "$CACHE"/*.tmp.*; do
  [[ -e $stale ]] || continue
  log "removing $stale (left by an interrupted run)"
  remove_tree "$stale"
done

# chroot with a clean environment; extra NAME=value words go first.
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TMPDIR=/tmp DEBIAN_FRONTEND=noninteractive "$@"
}

# The cached root of release $1 (built when missing): its path in $cached.
cached_root() {
  local release=$1 key dir
  key=$(printf '%s\n' "$CACHE_FORMAT" "$release" "$MIRROR" "${EXTRA_PACKAGES[@]}" | sha256sum | cut -c1-12)
  dir=$CACHE/$release-$key
  cached=$dir
  root_state=cached
  [[ ! -d $dir ]] || return 0
  root_state=built
  building=$CACHE/$release-$key.tmp.$$
  log "$release: building the cached root $dir (debootstrap --variant=minbase, then ${EXTRA_PACKAGES[*]})"
  mkdir -p "$building"
  if ! debootstrap --variant=minbase "$release" "$building" "$MIRROR" >"$CACHE/$release.debootstrap.log" 2>&1; then
    tail -n 20 "$CACHE/$release.debootstrap.log" >&2
    log "$release: debootstrap failed (log: $CACHE/$release.debootstrap.log)"
    return 1
  fi
  {
    echo "deb $MIRROR $release main"
    echo "deb $MIRROR $release-updates main"
    if [[ $MIRROR == http://deb.debian.org/debian ]]; then
      echo "deb http://deb.debian.org/debian-security $release-security main"
    fi
  } >"$building/etc/apt/sources.list"
  # Services are never started in the root (udev's postinst, for instance).
  printf '#!/bin/sh\nexit 101\n' >"$building/usr/sbin/policy-rc.d"
  chmod 0755 "$building/usr/sbin/policy-rc.d"
  mount_system "$building"
  local saved_root=$root
  root=$building
  if ! { in_root apt-get update -qq && in_root apt-get install -y -qq --no-install-recommends "${EXTRA_PACKAGES[@]}" \
    && in_root apt-get clean; } >"$CACHE/$release.packages.log" 2>&1; then
    tail -n 20 "$CACHE/$release.packages.log" >&2
    log "$release: installing the test packages failed (log: $CACHE/$release.packages.log)"
    root=$saved_root
    return 1
  fi
  root=$saved_root
  unmount_under "$building"
  mv "$building" "$dir"
  building=""
}

record() {
  local verdict=$1 release=$2 check=$3 reason=${4:-}
  if [[ $verdict == ok ]]; then
    passed=$((passed + 1))
    echo "ok $release $check${reason:+ ($reason)}"
  else
    failed=$((failed + 1))
    echo "FAIL $release $check: ${reason:-failed}"
  fi
}

# Runs check function $2 for release $1; its stdout's last line is the reason or the note.
check() {
  local release=$1 name=$2 output
  if output=$("check_$name" 2>&1); then
    record ok "$release" "$name" "$(tail -n 1 <<<"$output")"
  else
    record FAIL "$release" "$name" "$(tail -n 1 <<<"$output")"
    printf '%s\n' "$output" | tail -n 15 | sed 's/^/    | /' >&2
  fi
}

# JSON assertions on the host: python3 -c PROGRAM FILE [ARG...]; `j` is FILE's JSON.
pyjson() {
  local program=$1
  shift
  python3 -c "import json, sys
j = json.load(open(sys.argv[1]))
$program" "$@"
}

# ---- the checks (each runs with $root, $run_dir, $release set) ----

check_version() {
  in_root fr-profile --version
}

check_link() {
  local program needed extra=""
  program=$(in_root readelf -lW /usr/bin/fr-profile | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
  [[ -n $program ]] || { echo "/usr/bin/fr-profile has no program interpreter (statically linked?)"; return 1; }
  needed=$(in_root readelf -dW /usr/bin/fr-profile | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  for library in $needed; do
    # The interpreter itself (ld-linux-x86-64.so.2: glibc's __tls_get_addr) is loaded anyway.
    [[ " $ALLOWED_NEEDED " == *" $library "* || $library == "${program##*/}" ]] || extra+=" $library"
  done
  [[ -z $extra ]] || { echo "/usr/bin/fr-profile needs more than $ALLOWED_NEEDED:$extra"; return 1; }
  echo "interpreter $program, NEEDED: ${needed% }"
}

# Every library the binaries name (NEEDED, or a soname string: dlopen) is installed after the
# .deb, and one the root had before it (minbase, a test package) is named in Depends/Recommends.
check_libraries() {
  local fields names binary library path package problems=()
  fields=$(dpkg-deb -f "$DEB" Depends Recommends | sed 's/([^)]*)//g' | tr ',|:' '\n\n\n' | awk '{print $1}' | grep . || true)
  names=$(for binary in "$root"/usr/bin/fr-profile*; do
    in_root readelf -dW "/usr/bin/${binary##*/}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
    grep -aoE 'lib[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*\.so\.[0-9]+(\.[0-9]+)*' "$binary" || true
  done | sort -u)
  local summary=()
  for library in $names; do
    path=$(in_root /sbin/ldconfig -p | awk -v l="$library" '$1 == l && /x86-64|x86_64|=>/ { print $NF; exit }')
    if [[ -z $path ]]; then
      problems+=("$library is not installed (the binaries name it; Depends/Recommends do not bring it)")
      continue
    fi
    package=""
    for candidate in "$path" "$(in_root readlink -f "$path")" "/usr$path" "${path#/usr}"; do
      package=$(in_root dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1) && break
    done
    if grep -qxF "$package" "$run_dir/before-packages" && ! grep -qxF "$package" <<<"$fields"; then
      problems+=("$library ($package) is in the root only because minbase or a test package brought it: Depends/Recommends do not name $package")
      continue
    fi
    summary+=("$library=$package")
  done
  if [[ ${#problems[@]} -gt 0 ]]; then
    printf '%s; ' "${problems[@]}" | sed 's/; $/\n/'
    return 1
  fi
  echo "${summary[*]}"
}

check_collect() {
  in_root env FR_PROFILE_HOME=/tmp/state fr-profile collect >"$run_dir/a.json" || return 1
  pyjson '
assert isinstance(j.get("identifier"), str) and j["identifier"], "no identifier"
assert "version" in j, "no version"
assert isinstance(j.get("metadata"), dict) and j["metadata"], "no metadata"
print("identifier", j["identifier"], "version", j["version"])' "$run_dir/a.json"
}

check_identifier() {
  local identifier
  identifier=$(in_root env FR_PROFILE_HOME=/tmp/state fr-profile identifier) || return 1
  pyjson 'assert j["identifier"] == sys.argv[2], "collect printed " + j["identifier"] + ", identifier " + sys.argv[2]
print(sys.argv[2])' "$run_dir/a.json" "$identifier"
}

check_match() {
  local status=0 where=(--location --latitude 52.52 --longitude 13.405)
  # The device-match script throws without locations: both profiles carry the same one.
  in_root env FR_PROFILE_HOME=/tmp/state fr-profile collect "${where[@]}" >"$root/tmp/a.json" || return 1
  in_root env FR_PROFILE_HOME=/tmp/state fr-profile collect "${where[@]}" >"$root/tmp/b.json" || return 1
  # STORED as AM keeps a user's profiles: a JSON array.
  python3 -c 'import json, sys; json.dump([json.load(open(sys.argv[1]))], open(sys.argv[2], "w"))' \
    "$root/tmp/a.json" "$root/tmp/stored.json"
  in_root fr-profile match /tmp/stored.json /tmp/b.json >"$run_dir/match.txt" 2>&1 || status=$?
  cat "$run_dir/match.txt"
  [[ $status == 0 ]] || { echo "fr-profile match [A] B exited $status (0 is true: same device)"; return 1; }
  echo "two collects match (exit 0)"
}

start_am() {
  am_dir=$(mktemp -d "$CACHE/run.am.XXXXXX")
  local port_file=$am_dir/port
  am_log=$am_dir/log
  # --pdeathsig: it dies with this script, even a script killed by SIGKILL.
  setpriv --pdeathsig KILL -- python3 "$REPO/packaging/test-am.py" "$port_file" "$am_log" &
  am_pid=$!
  for _ in $(seq 100); do
    [[ -s $port_file ]] && break
    kill -0 "$am_pid" 2>/dev/null || break
    sleep 0.05
  done
  am_port=$(cat "$port_file" 2>/dev/null) || { log "the test AM did not start"; am_port=""; }
}

check_journey() {
  local token identifier
  [[ -n $am_port ]] || { echo "the test AM is not running"; return 1; }
  : >"$am_log"
  token=$(in_root env FR_PROFILE_HOME=/tmp/state fr-profile journey --server "http://127.0.0.1:$am_port/am" \
    --realm root --tree DeviceProfiling --timeout 20) || { echo "journey exited $?"; return 1; }
  [[ $token == "$AM_TOKEN" ]] || { echo "journey printed '$token', not the test AM's token"; return 1; }
  identifier=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1]).get("identifier", ""))' "$am_log")
  pyjson 'assert j["identifier"] == sys.argv[2], "the AM received identifier " + sys.argv[2]' "$run_dir/a.json" "$identifier" \
    || return 1
  echo "token received; AM got the profile of $identifier"
}

check_keys_list() {
  in_root env FR_PROFILE_HOME=/tmp/keys-state fr-profile keys list
}

start_swtpm() {
  local state=$1 port
  for _ in $(seq 20); do
    port=$(((RANDOM % 20000 + 20000) & ~1))
    setpriv --pdeathsig KILL -- swtpm socket --tpm2 --tpmstate "dir=$state" --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
      --ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" --flags not-need-init,startup-clear \
      >/dev/null 2>&1 &
    swtpm_pid=$!
    echo "$swtpm_pid" >"$run_dir/swtpm.pid"
    for _ in $(seq 100); do
      if ! kill -0 "$swtpm_pid" 2>/dev/null; then break; fi
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        swtpm_port=$port
        return 0
      fi
      sleep 0.05
    done
    stop_pid "$swtpm_pid"
    rm -f "$run_dir/swtpm.pid"
  done
  return 1
}

check_tpm() {
  local status=0
  mkdir -p "$run_dir/swtpm"
  start_swtpm "$run_dir/swtpm" || { echo "swtpm did not start"; return 1; }
  tpm_identity || status=$?
  stop_pid "$swtpm_pid"
  rm -f "$run_dir/swtpm.pid"
  return $status
}

tpm_identity() {
  local tcti before first second
  tcti="swtpm:host=127.0.0.1,port=$swtpm_port"
  before=$(in_root env FR_PROFILE_HOME=/tmp/tpm-state fr-profile identifier) || { echo "identifier (file key) failed"; return 1; }
  in_root env FR_PROFILE_HOME=/tmp/tpm-state fr-profile identifier --move-to-tpm --tcti "$tcti" \
    || { echo "identifier --move-to-tpm exited $?"; return 1; }
  [[ -f $root/tmp/tpm-state/device-key.tpm ]] || { echo "no device-key.tpm after --move-to-tpm"; return 1; }
  first=$(in_root env FR_PROFILE_HOME=/tmp/tpm-state fr-profile identifier --tcti "$tcti") || { echo "identifier (TPM) exited $?"; return 1; }
  second=$(in_root env FR_PROFILE_HOME=/tmp/tpm-state FR_PROFILE_TCTI="$tcti" fr-profile identifier) \
    || { echo "identifier (TPM, FR_PROFILE_TCTI) exited $?"; return 1; }
  [[ $first == "$second" ]] || { echo "TPM identifier not stable: $first, then $second"; return 1; }
  [[ $first != "$before" ]] || { echo "the identifier did not change with the key moved to the TPM"; return 1; }
  echo "$before -> $first, stable"
}

check_udev() {
  local arguments=() fixture
  mkdir -p "$root/tmp/umockdev"
  for fixture in "${UMOCKDEV_FIXTURES[@]}"; do
    cp "$REPO/Tests/CLITests/Fixtures/umockdev/$fixture.umockdev" "$root/tmp/umockdev/"
    arguments+=(--device "/tmp/umockdev/$fixture.umockdev")
  done
  in_root env FR_PROFILE_HOME=/tmp/state umockdev-run "${arguments[@]}" -- fr-profile collect >"$run_dir/udev.json" \
    2>"$run_dir/udev.stderr" || { cat "$run_dir/udev.stderr"; echo "umockdev-run ... -- fr-profile collect exited $?"; return 1; }
  # Through libudev, not the sysfs fallback (which says "libudev.so.1 could not be used").
  if grep -q libudev "$run_dir/udev.stderr"; then
    cat "$run_dir/udev.stderr"
    echo "collect did not use libudev: $(grep -m1 libudev "$run_dir/udev.stderr")"
    return 1
  fi
  # UdevCommandTests: laptop-edp-hdmi reports its 2560x1440 panel, two-webcams two cameras,
  # bluetooth a supported adapter.
  pyjson '
hardware = j["metadata"]["hardware"]
facts = (hardware.get("display"), (hardware.get("camera") or {}).get("numberOfCameras"),
         (j["metadata"].get("bluetooth") or {}).get("supported"))
expected = ({"width": 2560, "height": 1440, "orientation": 1}, 2, True)
assert facts == expected, f"display, cameras, bluetooth: {facts}, expected {expected}"
print("display 2560x1440, 2 cameras, bluetooth supported")' "$run_dir/udev.json"
}

check_golden() {
  local source=$root/tmp/src
  mkdir -p "$source/bench" "$source/Tests/CollectorsTests/Fixtures" "$source/Tests/CLITests/Fixtures"
  cp "$REPO/bench/release-golden.sh" "$source/bench/"
  cp -a "$REPO/Tests/CollectorsTests/Fixtures/machines" "$source/Tests/CollectorsTests/Fixtures/"
  cp -a "$REPO/Tests/CLITests/Fixtures/golden" "$source/Tests/CLITests/Fixtures/"
  in_root bash /tmp/src/bench/release-golden.sh /usr/bin/fr-profile || return 1
}

# ---- per release ----

run_release() {
  local release=$1 started=$SECONDS root_seconds deb_name status=0
  if ! cached_root "$release"; then
    record FAIL "$release" root "no cached root (see the log above)"
    return
  fi
  root_seconds=$((SECONDS - started))
  run_dir=$(mktemp -d "$CACHE/run.$release.XXXXXX")
  mkdir "$run_dir/upper" "$run_dir/work" "$run_dir/root"
  root=$run_dir/root
  if ! mount -t overlay overlay -o "lowerdir=$cached,upperdir=$run_dir/upper,workdir=$run_dir/work" "$root" 2>/dev/null; then
    log "$release: no overlayfs here; copying the cached root"
    cp -a "$cached/." "$root/"
  fi
  mount_system "$root"
  mkdir -p "$CACHE/apt-archives/$release/partial"
  mount --bind "$CACHE/apt-archives/$release" "$root/var/cache/apt/archives"
  # A booted system has a machine-id (the identifier's host part); a fresh one per run.
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$root/etc/machine-id"
  echo >>"$root/etc/machine-id"
  in_root dpkg-query -W -f '${Package}\n' | sort >"$run_dir/before-packages"
  deb_name=$(basename "$DEB")
  cp "$DEB" "$root/tmp/$deb_name"
  local install=(apt-get install -y -q -o APT::Install-Recommends=true -o Acquire::Retries=3 "/tmp/$deb_name")
  if ! in_root "${install[@]}" >"$run_dir/install.log" 2>&1; then
    # Cached package lists go stale when the mirror moves on: refresh them and try once more.
    in_root apt-get update -qq >>"$run_dir/install.log" 2>&1 || true
    in_root "${install[@]}" >>"$run_dir/install.log" 2>&1 || status=$?
  fi
  if [[ $status != 0 ]]; then
    record FAIL "$release" install "apt-get install /tmp/$deb_name exited $status: $(grep -E '^(E:| [^ ].*Depends:)' "$run_dir/install.log" | head -n 3 | tr '\n' ' ')"
    sed 's/^/    | /' "$run_dir/install.log" | tail -n 15 >&2
  else
    record ok "$release" install "set up: $(sed -n 's/^Setting up \([^: ]*\).*/\1/p' "$run_dir/install.log" | sort | tr '\n' ' ' | sed 's/ $//')"
    for name in version link libraries collect identifier match journey keys_list tpm udev golden; do
      check "$release" "$name"
    done
  fi
  cleanup_run
  log "$release: time: root $root_state in $root_seconds s, total $((SECONDS - started)) s"
}

am_port=""
am_log=""
root_state=""
if [[ -n $ROOTS_ONLY ]]; then
  for release in "${RELEASES[@]}"; do
    started=$SECONDS
    cached_root "$release" || exit 1
    log "$release: root $root_state in $((SECONDS - started)) s ($cached)"
  done
  exit 0
fi
start_am
for release in "${RELEASES[@]}"; do
  run_release "$release"
done
echo "check-distros: $passed passed, $failed failed"
[[ $failed == 0 ]]
