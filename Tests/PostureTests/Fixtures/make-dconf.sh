#!/bin/sh
# Compiles the dconf databases the fixture trees use (Debian dconf-cli's `dconf compile`, the
# same GVDB writer `dconf update` uses). make-layouts.py copies them into the trees.
set -e
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/idle.d" "$work/lock.d" "$work/local.d/locks"
printf '[org/gnome/desktop/session]\nidle-delay=uint32 600\n' > "$work/idle.d/00-user"
printf '[org/gnome/desktop/screensaver]\nlock-enabled=false\n' > "$work/lock.d/00-user"
printf '[org/gnome/desktop/session]\nidle-delay=uint32 300\n' > "$work/local.d/00-security"
printf '/org/gnome/desktop/session/idle-delay\n' > "$work/local.d/locks/00-security"
dconf compile "$here/dconf-idle-600.gvdb" "$work/idle.d"
dconf compile "$here/dconf-lock-disabled.gvdb" "$work/lock.d"
dconf compile "$here/dconf-local-idle-300-locked.gvdb" "$work/local.d"
