#!/usr/bin/env bash
# Checks a built fr-profile .deb (make check-deb, part of make test): lintian; the file list;
# stripped binaries; an install, a collect and a removal with dpkg in a temporary root (the
# state directory and its key survive removal and purge); every option of every command's
# --help in its man page; the bash, zsh and fish completions (journey's options included);
# systemd-analyze verify on the units. Writes only to a temporary directory.
set -euo pipefail
deb=${1:?usage: check-deb.sh PACKAGE.deb}
export LC_ALL=C.UTF-8
work=$(mktemp -d /tmp/fr-profile-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "check-deb: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "check-deb: ok: $*"; }

echo "check-deb: $deb, $(du -k "$deb" | cut -f1) KiB"

# lintian: no errors (warnings and notes are printed for the reader).
# TMPDIR: lintian leaves its ELF index (/tmp/mldbm-elf-*) behind; it goes with $work.
if TMPDIR=$work lintian --fail-on error "$deb" > "$work/lintian.txt" 2>&1; then
  pass "lintian: $(grep -c '^E:' "$work/lintian.txt" || true) errors, $(grep -c '^W:' "$work/lintian.txt" || true) warnings"
else
  fail "lintian reports errors"
fi
sed 's/^/  lintian: /' "$work/lintian.txt"

# The file list.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$work/files"
for path in /usr/bin/fr-profile /usr/share/fr-profile/match-config.json /usr/share/fr-profile/am/fr-tpm-attestation.js \
  /usr/share/fr-profile/am/fr-posture.js /usr/share/man/man1/fr-profile-posture.1.gz \
  /usr/share/man/man1/fr-profile.1.gz /usr/share/man/man1/fr-profile-collect.1.gz \
  /usr/share/man/man1/fr-profile-identifier.1.gz /usr/share/man/man1/fr-profile-tamper.1.gz \
  /usr/share/man/man1/fr-profile-match.1.gz /usr/share/man/man1/fr-profile-callback.1.gz \
  /usr/share/man/man1/fr-profile-journey.1.gz /usr/share/man/man1/fr-profile-keys.1.gz \
  /usr/share/man/man1/fr-profile-keys-list.1.gz /usr/share/man/man1/fr-profile-policy.1.gz \
  /usr/share/bash-completion/completions/fr-profile /usr/share/zsh/vendor-completions/_fr-profile \
  /usr/share/fish/vendor_completions.d/fr-profile.fish \
  /lib/systemd/system/fr-profile-collect.service /lib/systemd/system/fr-profile-collect.timer \
  /lib/systemd/system/fr-profile-eventlog.service /usr/share/man/man1/fr-profile-attest-quote.1.gz \
  /usr/share/doc/fr-profile/copyright /usr/share/doc/fr-profile/changelog.gz; do
  grep -qx "$path" "$work/files" || fail "missing from the package: $path"
done
# The sign-in: the PAM module where Debian's PAM looks, its pam-auth-update profile, its man page.
pam_module=/usr/lib/$(dpkg-deb -f "$deb" Architecture | sed 's/amd64/x86_64-linux-gnu/; s/arm64/aarch64-linux-gnu/')/security/pam_frprofile.so
for path in "$pam_module" /usr/share/pam-configs/frprofile /usr/share/pam-configs/frprofile-session /usr/share/man/man8/pam_frprofile.8.gz \
  /usr/share/doc/fr-profile/examples/signin.json; do
  grep -qx "$path" "$work/files" || fail "missing from the package: $path"
done
if grep -q '^/var/lib\|^/etc/fr-profile' "$work/files"; then fail "the package ships state: $(grep '^/var/lib' "$work/files")"; fi
pass "file list ($(grep -vc '/$' "$work/files") files)"
# Depends: the C library alone, at the version the binary's symbols need (dpkg-shlibdeps), never
# pinned below a release; everything dlopened is a Recommends, with Debian 13's t64 names.
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends =~ ^libc6\ \(\>=\ [0-9.]+\)$ ]] || fail "Depends is not libc6 (>= VERSION) alone: $depends"
[[ -z $(dpkg-deb -f "$deb" Built-Using) ]] || fail "Built-Using is set: nothing is linked in from another package"
recommends=$(dpkg-deb -f "$deb" Recommends | tr -d '\n')
for alternative in "libudev1" "libcurl4 | libcurl4t64" "libtss2-esys-3.0.2-0 | libtss2-esys-3.0.2-0t64" \
  "libtss2-tctildr0 | libtss2-tctildr0t64" "libtss2-mu0 | libtss2-mu-4.0.1-0t64" "libtss2-rc0 | libtss2-rc0t64" "libpam0g" "libqrencode4" "libfido2-1"; do
  [[ $recommends == *"$alternative"* ]] || fail "Recommends lacks '$alternative': $recommends"
done
pass "Depends: $depends; Recommends: $recommends"

# Contents: stripped binaries that run.
dpkg-deb -x "$deb" "$work/x"
bin=$work/x/usr/bin
if readelf -S "$bin/fr-profile" | grep -q '\.debug_info\|\.symtab'; then fail "fr-profile is not stripped"; fi
pass "stripped: fr-profile $(du -k "$bin/fr-profile" | cut -f1) KiB; Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"
# Dynamically linked against the C runtime only: an interpreter, and no NEEDED library besides
# libc, libm and the loader (the optional libraries are dlopened).
readelf -l "$bin/fr-profile" | grep -q 'Requesting program interpreter' || fail "fr-profile has no program interpreter"
needed=$(readelf -d "$bin/fr-profile" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for library in $needed; do
  [[ $library =~ ^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$ ]] || fail "fr-profile needs $library"
done
pass "dynamically linked; NEEDED: $needed"
# The PAM module: small C, no Swift runtime inside sshd or gdm; PAM's entry points exported; its
# pam-auth-update profile off until the administrator enables it, local accounts kept working.
module=$work/x$pam_module
module_needed=$(readelf -d "$module" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
[[ $module_needed == "libc.so.6 libpam.so.0 " ]] || fail "pam_frprofile.so needs more than libpam and libc: $module_needed"
for entry in pam_sm_authenticate pam_sm_setcred pam_sm_acct_mgmt pam_sm_open_session pam_sm_close_session pam_sm_chauthtok; do
  nm -D --defined-only "$module" | grep -qw "$entry" || fail "pam_frprofile.so does not export $entry"
done
if nm -D "$module" | grep -q 'swift_'; then fail "pam_frprofile.so reaches the Swift runtime"; fi
grep -qx 'Default: no' "$work/x/usr/share/pam-configs/frprofile" || fail "the pam-auth-update profile is not off by default"
grep -q '\[success=end default=ignore\][[:space:]]*pam_frprofile.so' "$work/x/usr/share/pam-configs/frprofile" ||
  fail "the pam-auth-update profile does not use [success=end default=ignore]"
# The session's line, where pam_sm_open_session writes the sign-in's OAuth 2.0 tokens: optional
# (the module's session never fails a session), in a profile of its own at priority 0, so that
# pam-auth-update puts it after pam_mkhomedir; what pam-auth-update writes from both profiles is
# checked in a private mount namespace (check-pam-profiles.sh).
pam_profile=$work/x/usr/share/pam-configs/frprofile-session
if grep -q '^Session' "$work/x/usr/share/pam-configs/frprofile"; then fail "the sign-in profile has a Session line (frprofile-session has it)"; fi
grep -qx 'Default: no' "$pam_profile" || fail "frprofile-session is not off by default"
[[ $(sed -n '/^Session:$/,/^[^[:space:]]/{/^[[:space:]]/p}' "$pam_profile") =~ ^[[:space:]]+optional[[:space:]]+pam_frprofile\.so$ ]] ||
  fail "frprofile-session's Session is not 'optional pam_frprofile.so' alone"
unshare --mount --propagation private "$(dirname "$0")/check-pam-profiles.sh" "$work/x/usr/share/pam-configs" ||
  fail "pam-auth-update does not order the profiles' lines as they must be"
pass "pam_frprofile.so: NEEDED $module_needed; pam-auth-update profiles off by default, the session line optional and after pam_mkhomedir"
version=$("$bin/fr-profile" --version)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]{7,} ]] || fail "--version does not name a commit: $version"
pass "--version: $version"

# Install, run, remove and purge with dpkg in a temporary root.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/fr-profile"
touch "$root/var/lib/dpkg/status"
dpkg_root() { dpkg --root="$root" --log=/dev/null --force-not-root --force-depends --force-script-chrootless "$@"; }
dpkg_root -i "$deb" > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i"; }
chmod 0700 "$root/var/lib/fr-profile"
profile=$(FR_PROFILE_HOME=$root/var/lib/fr-profile "$root/usr/bin/fr-profile" collect -o -) || fail "installed collect"
[[ $profile == '{"identifier":"'* ]] || fail "installed collect printed: $profile"
[[ -f $root/var/lib/fr-profile/device-key.pem ]] || fail "collect made no device key"
journey=$("$root/usr/bin/fr-profile" journey --help 2>&1) || fail "installed 'fr-profile journey --help'"
[[ $journey == *--password-stdin* ]] || fail "'fr-profile journey --help' lacks journey's options"
pass "dpkg -i into a temporary root; collect and journey run"
# The service's command within the unit's privilege limits (no capabilities, no new privileges,
# UMask=0022; systemd itself cannot run here): the key is made 0600, the profile written 0644.
mkdir -p "$work/run/fr-profile" "$work/state" && chmod 0700 "$work/state"
if setpriv --no-new-privs --bounding-set=-all --inh-caps=-all --ambient-caps=-all \
  env FR_PROFILE_HOME="$work/state" bash -c 'umask 022; exec "$0" collect -o "$1"' "$root/usr/bin/fr-profile" \
  "$work/run/fr-profile/profile.json" && [[ $(stat -c %a "$work/run/fr-profile/profile.json") == 644 ]] &&
  [[ $(stat -c %a "$work/state/device-key.pem") == 600 ]]; then
  pass "the unit's collect without capabilities: profile.json 0644, device-key.pem 0600"
else
  fail "the unit's collect without capabilities"
fi
dpkg_root -r fr-profile >> "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -r"; }
dpkg_root -P fr-profile >> "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -P"; }
left=$(cd "$root" && find . -mindepth 1 ! -path './var/lib/dpkg*' ! -path ./var ! -path ./var/lib ! -path './var/lib/fr-profile/*' | sort | tr '\n' ' ')
if [[ $left != "./var/lib/fr-profile " ]]; then
  fail "after dpkg -r and -P, left besides dpkg's database and the state directory: $left"
elif [[ ! -f $root/var/lib/fr-profile/device-key.pem ]]; then
  fail "dpkg -r or -P deleted the device key"
else
  pass "dpkg -r and -P remove everything but the state directory and its key ($(ls -A "$root/var/lib/fr-profile" | tr '\n' ' '))"
fi

# Man pages: every option of every command's --help is in its page.
man_text() { MANWIDTH=200 man -l "$1" 2>/dev/null | col -b; }
for command in "" collect identifier tamper posture match callback journey policy "keys list" "keys delete"; do
  page=$work/x/usr/share/man/man1/fr-profile${command:+-${command// /-}}.1.gz
  text=$(man_text "$page")
  [[ -n $text ]] || { fail "man page ${page##*/} does not render"; continue; }
  help=$("$bin/fr-profile" $command --help 2>&1)
  options=$(sed -n '/^OPTIONS:/,$p; /^[A-Z ]*OPTIONS:/,$p' <<<"$help" | grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort -u)
  [[ -n $options ]] || fail "no options found in 'fr-profile $command --help'"
  for option in $options; do
    grep -qE -- "(^|[^a-zA-Z-])$option([^a-zA-Z-]|\$)" <<<"$text" || fail "man ${page##*/}: $option of --help is missing"
  done
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS; do grep -q "^$section" <<<"$text" || fail "${page##*/} has no $section"; done
done
for section in FILES ENVIRONMENT "EXIT STATUS" EXAMPLES "PERIODIC COLLECTION"; do
  grep -q "^$section" <<<"$(man_text "$work/x/usr/share/man/man1/fr-profile.1.gz")" || fail "fr-profile.1 has no $section"
done
pass "man pages list every --help option; fr-profile(1) has FILES, ENVIRONMENT, EXIT STATUS, EXAMPLES"

# Completions.
# swift-argument-parser's scripts: the completion function is _fr-profile, called as bash would.
complete_bash() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    _fr-profile fr-profile "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$work/x/usr/share/bash-completion/completions/fr-profile" "$@"
}
[[ $(complete_bash fr-profile co) == *collect* ]] || fail "bash: 'fr-profile co<TAB>'"
[[ $(complete_bash fr-profile journey --se) == *--server* ]] || fail "bash: 'fr-profile journey --se<TAB>' lacks --server"
[[ $(complete_bash fr-profile collect --l) == *--latitude* ]] || fail "bash: 'fr-profile collect --l<TAB>'"
[[ $(complete_bash fr-profile identifier --l) != *--latitude* ]] || fail "bash: identifier offers --latitude"
[[ $(complete_bash fr-profile keys l) == *list* ]] || fail "bash: 'fr-profile keys l<TAB>' (a nested command)"
[[ $(complete_bash fr-profile collect --output "$work/x/usr/share/doc/fr-profile/change") == *changelog* ]] ||
  fail "bash: --output FILE completes files"
zsh -n "$work/x/usr/share/zsh/vendor-completions/_fr-profile" || fail "zsh completion has syntax errors"
grep -q -- "--server" "$work/x/usr/share/zsh/vendor-completions/_fr-profile" || fail "zsh: no journey options"
fish --no-execute "$work/x/usr/share/fish/vendor_completions.d/fr-profile.fish" || fail "fish: fr-profile.fish"
fish_out=$(fish -c "source $work/x/usr/share/fish/vendor_completions.d/fr-profile.fish; complete -C'fr-profile journey --ser'")
[[ $fish_out == *--server* ]] || fail "fish: 'fr-profile journey --ser<TAB>': $fish_out"
pass "bash, zsh and fish completions (journey's options included)"

# systemd units, as installed (ExecStart= names /usr/bin/fr-profile under the root).
# The root holds the host's units too (sysinit.target, timers.target, …), as an installed system does.
units=$work/x/lib/systemd/system
cp -r --no-clobber /lib/systemd/system/. "$units/"
# The event-log service runs coreutils' install, which every Debian system has (Essential).
mkdir -p "$work/x/usr/bin" && cp /usr/bin/install "$work/x/usr/bin/install"
if out=$(MANPATH=$work/x/usr/share/man systemd-analyze verify --root="$work/x" \
  /lib/systemd/system/fr-profile-collect.service /lib/systemd/system/fr-profile-collect.timer \
  /lib/systemd/system/fr-profile-eventlog.service 2>&1) && [[ -z $out ]]; then
  # Silent: it exits 0 on unknown keys, so any output (a warning) counts as a failure.
  pass "systemd-analyze verify (ExecStart, man pages of Documentation=, every key known)"
else
  echo "$out" >&2
  fail "systemd-analyze verify"
fi
grep -q '^ExecStart=/usr/bin/fr-profile collect -o /run/fr-profile/profile.json$' "$units/fr-profile-collect.service" ||
  fail "the service does not run collect into /run/fr-profile"
grep -q '^ExecStart=/usr/bin/install -m 0640 -o root -g tss ' "$units/fr-profile-eventlog.service" ||
  fail "the event-log service does not copy the log 0640 root:tss"
grep -q '^WantedBy=' "$units/fr-profile-eventlog.service" && ! [[ -e $work/x/etc/systemd/system/multi-user.target.wants/fr-profile-eventlog.service ]] ||
  fail "the event-log service must be installable and off by default"
# The event-log service's command, run on a stand-in log: the copy is 0640 root:tss (tss is the
# group tpm-udev makes, there with the build's libtss2) and replaces an older copy.
if getent group tss >/dev/null; then
  command=$(sed -n 's/^ExecStart=//p' "$units/fr-profile-eventlog.service")
  mkdir -p "$work/eventlog" && head -c 4096 /dev/urandom >"$work/eventlog/source" && echo old >"$work/eventlog/copy"
  command=${command//\/sys\/kernel\/security\/tpm0\/binary_bios_measurements/$work/eventlog/source}
  command=${command//\/run\/fr-profile\/binary_bios_measurements/$work/eventlog/copy}
  if (umask 0077 && $command) && cmp -s "$work/eventlog/source" "$work/eventlog/copy" &&
    [[ $(stat -c '%a %U %G' "$work/eventlog/copy") == "640 root tss" ]]; then
    pass "the event-log service's command copies the log 0640 root:tss"
  else
    fail "the event-log service's command: $(stat -c '%a %U %G' "$work/eventlog/copy" 2>&1)"
  fi
else
  fail "no group tss on this machine (tpm-udev makes it; libtss2-esys depends on it): the event-log service's command was not run"
fi

if ((failures)); then
  echo "check-deb: $failures failure(s)" >&2
  exit 1
fi
echo "check-deb: all checks passed"
