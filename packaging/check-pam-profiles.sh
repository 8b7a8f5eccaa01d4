#!/bin/bash
# The .deb's pam-auth-update profiles as Debian's pam-auth-update writes them, run by
# check-deb.sh inside `unshare --mount` (root): copies of /etc/pam.d, the profiles (Debian's and
# PROFILE_DIR's), /var/lib/pam and debconf's cache are bound over the real ones, so the machine's
# PAM configuration is never touched. With frprofile, frprofile-session and mkhomedir enabled:
# the sign-in comes before pam_unix in common-auth, and the session line after pam_mkhomedir in
# common-session (the tokens are written into a home pam_mkhomedir may create at first login),
# and not in common-session-noninteractive.
# usage: check-pam-profiles.sh PROFILE_DIR
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pam.d" "$work/configs" "$work/state" "$work/debconf"
cp -a /etc/pam.d/. "$work/pam.d/"
cp -a /usr/share/pam-configs/. "$work/configs/"
cp "$1"/frprofile "$1"/frprofile-session "$work/configs/"
cp -a /var/lib/pam/. "$work/state/" 2>/dev/null || true
cp -a /var/cache/debconf/. "$work/debconf/"
mount --bind "$work/pam.d" /etc/pam.d
mount --bind "$work/configs" /usr/share/pam-configs
mount --bind "$work/state" /var/lib/pam
mount --bind "$work/debconf" /var/cache/debconf
[[ -f /usr/share/pam-configs/mkhomedir ]] || { echo "check-pam-profiles: Debian's mkhomedir profile is missing" >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive pam-auth-update --enable frprofile frprofile-session mkhomedir --force >/dev/null
line() { grep -v '^#' "/etc/pam.d/$1" | grep -n "$2" | head -1 | cut -d: -f1; }
auth=$(line common-auth pam_frprofile.so) unix=$(line common-auth pam_unix.so)
session=$(line common-session pam_frprofile.so) home=$(line common-session pam_mkhomedir.so)
[[ -n $auth && -n $unix && $auth -lt $unix ]] || { echo "check-pam-profiles: pam_frprofile is not before pam_unix in common-auth" >&2; exit 1; }
[[ -n $session && -n $home && $home -lt $session ]] || {
  echo "check-pam-profiles: the session line is not after pam_mkhomedir in common-session" >&2
  exit 1
}
if grep -v '^#' /etc/pam.d/common-session-noninteractive | grep -q pam_frprofile; then
  echo "check-pam-profiles: the session line is in common-session-noninteractive" >&2
  exit 1
fi
echo "check-pam-profiles: common-auth line $auth before pam_unix ($unix); common-session line $session after pam_mkhomedir ($home)"
