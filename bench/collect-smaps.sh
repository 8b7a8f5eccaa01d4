#!/usr/bin/env bash
# What one `fr-profile collect` has resident when it exits, per mapping: /proc/PID/smaps read at
# the PTRACE_EVENT_EXIT stop (bench/smaps-at-exit.c), beside the peak (VmHWM, what GNU time's
# %M reports). Every page counts, shared library pages too, as in the peak RSS of `make bench`.
#
#   bench/collect-smaps.sh [BINARY]               collect of BINARY (default .build-release/release/fr-profile),
#                                                 after `identifier` (creates the key) and one collect
#   bench/collect-smaps.sh -- COMMAND [ARG...]    any other command, run once before too (fastfetch with
#                                                 collect_bench.py's FASTFETCH_ARGS, the C floor)
#   LINK_MAP=FILE bench/collect-smaps.sh ...      also splits the executable's resident pages by the
#                                                 library or module its input sections came from
#                                                 (FILE: lld's -Map of the same link)
#
# Rows: each file's segments by permission (r-x text; r-- read-only data and headers; rw- data;
# "relro" for the r-- segment right before rw-, read-only after relocation), "bss" for the
# anonymous mapping that continues a file's last segment, [heap], [stack], and other anonymous
# mappings. Columns in KiB: Rss; Private (Private_Clean + Private_Dirty); Dirty (Private_Dirty:
# pages written, copies of their own); and runs, the number of contiguous resident ranges. A file
# page is resident because it was touched or because the kernel mapped it along with one that was:
# fault-around maps the page-cache pages of the 64 KiB-aligned window around a read fault (16
# pages), and a large folio can be mapped whole. So what one touched page costs depends on the
# layout and on how the file came into the page cache.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -o "$work/smaps-at-exit" bench/smaps-at-exit.c
# As bench/collect_bench.py does before its runs: the executable's pages dropped from the page cache,
# then one run that reads them back (readahead decides the folios the measured run maps).
evict() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"; }
if [ "${1:-}" = "--" ]; then
  shift
  exe=$(readlink -f "$(command -v "$1")")
  evict "$exe"
  "$@" >/dev/null
  "$work/smaps-at-exit" "$work" "$@" >/dev/null
else
  exe=$(readlink -f "${1:-.build-release/release/fr-profile}")
  export FR_PROFILE_HOME="$work/state"
  "$exe" identifier >/dev/null
  evict "$exe"
  "$exe" collect >/dev/null
  "$work/smaps-at-exit" "$work" "$exe" collect >/dev/null
fi
python3 - "$work" "$exe" "${LINK_MAP:-}" <<'PY'
import collections, os, re, sys
work, exe, link_map = sys.argv[1:4]
page = os.sysconf("SC_PAGE_SIZE")

mappings = []  # dicts: start, end, perms, path, fields (kB)
for line in open(f"{work}/smaps"):
    head = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$", line)
    if head:
        mappings.append({"start": int(head[1], 16), "end": int(head[2], 16), "perms": head[3],
                         "path": head[4].strip(), "fields": {}})
    elif ":" in line and mappings:
        key, value = line.split(":", 1)
        if value.strip().endswith("kB"):
            mappings[-1]["fields"][key] = int(value.split()[0])
pages = {}
for line in open(f"{work}/pages"):
    fields = line.split()
    pages[int(fields[0], 16)] = fields[2:]

previous = None
rows = collections.OrderedDict()
for index, m in enumerate(mappings):
    path, perms = m["path"], m["perms"]
    if path.startswith("/"):
        name = os.path.basename(path) + (" (the executable)" if path == exe else "")
        kind = {"r-xp": "text", "r--p": "rodata", "rw-p": "data"}.get(perms, perms)
        following = mappings[index + 1] if index + 1 < len(mappings) else None
        if perms == "r--p" and following and following["path"] == path and following["perms"] == "rw-p":
            kind = "relro"
        label = f"{name} {kind}"
    elif not path and previous and previous["path"].startswith("/") and previous["end"] == m["start"]:
        label = f"{os.path.basename(previous['path'])}{' (the executable)' if previous['path'] == exe else ''} bss"
    elif path:
        label = path
    else:
        label = "anonymous mmap"
    if path:
        previous = m
    f = m["fields"]
    present = pages.get(m["start"], [])
    indexes = sorted(int(p.lstrip("a")) for p in present)
    runs = sum(1 for i, n in enumerate(indexes) if i == 0 or indexes[i - 1] != n - 1)
    row = rows.setdefault(label, collections.Counter())
    row["Rss"] += f.get("Rss", 0)
    row["Private"] += f.get("Private_Clean", 0) + f.get("Private_Dirty", 0)
    row["Dirty"] += f.get("Private_Dirty", 0)
    row["Runs"] += runs

status = dict(line.split(":", 1) for line in open(f"{work}/status") if ":" in line)
print(f"{'mapping':<42} {'Rss':>6} {'Private':>8} {'Dirty':>6} {'runs':>5}")
total = collections.Counter()
for label, row in rows.items():
    if row["Rss"] == 0:
        continue
    total.update(row)
    print(f"{label:<42} {row['Rss']:>6} {row['Private']:>8} {row['Dirty']:>6} {row['Runs']:>5}")
print(f"{'total at exit (KiB)':<42} {total['Rss']:>6} {total['Private']:>8} {total['Dirty']:>6}")
print(f"VmRSS at exit {status['VmRSS'].strip()}, peak VmHWM {status['VmHWM'].strip()} "
      f"(RssAnon {status['RssAnon'].strip()}, RssFile {status['RssFile'].strip()})")

if link_map:
    # lld -Map: "VMA LMA Size Align Out In Symbol"; an input section is a line whose fifth field names
    # "file:(section)". Each resident page of the executable is split between the input sections
    # that cover it, by bytes; the rest of the page (gaps, headers, linker padding) is "(between)".
    # "file:(section)", indented under its output section; sections of output sections at address 0
    # (debug information, symbol tables) are not loaded and are left out.
    sections = []
    loaded = False
    for line in open(link_map):
        fields = line.split(None, 4)
        if len(fields) < 5 or not re.fullmatch(r"[0-9a-f]+", fields[0]):
            continue
        if line[49:50] != " ":  # lld's columns: an output section's name starts at column 49
            loaded = int(fields[0], 16) != 0  # an output section
        elif loaded and ":(" in fields[4]:
            vma, size = int(fields[0], 16), int(fields[2], 16)
            if size:
                sections.append((vma, vma + size, fields[4].strip()))
    sections.sort()
    starts = [s[0] for s in sections]

    def origin(source):
        file = source.rsplit(":(", 1)[0]
        if file == "<internal>":
            return "linker-made (GOT, PLT, dynamic tables)"
        archive = re.match(r"(.*?)(\(([^()]*)\))?$", file)
        base = os.path.basename(archive[1])
        if base.endswith(".a"):
            return base
        module = re.search(r"/([^/]+)\.build/", file)
        return f"module {module[1]}" if module else base

    import bisect
    split = collections.defaultdict(lambda: collections.Counter())
    exe_ranges = [m for m in mappings if m["path"] == exe]
    # the executable's bss continues its last segment
    for m in mappings:
        if not m["path"] and exe_ranges and any(e["end"] == m["start"] for e in exe_ranges):
            exe_ranges.append(m)
    for m in exe_ranges:
        kind = {"r-xp": "text", "r--p": "rodata", "rw-p": "data"}.get(m["perms"], m["perms"])
        if not m["path"]:
            kind = "bss"
        for p in pages.get(m["start"], []):
            lo = m["start"] + page * int(p.lstrip("a"))
            hi = lo + page
            covered = 0
            i = max(bisect.bisect_right(starts, lo) - 1, 0)
            while i < len(sections) and sections[i][0] < hi:
                a, b, source = sections[i]
                overlap = min(b, hi) - max(a, lo)
                if overlap > 0:
                    split[origin(source)][kind] += overlap
                    covered += overlap
                i += 1
            split["(between sections)"][kind] += max(page - covered, 0)
    kinds = ["text", "rodata", "data", "bss"]
    print()
    print(f"the executable's resident pages by origin (KiB; {os.path.basename(link_map)})")
    print(f"{'origin':<44}" + "".join(f"{k:>8}" for k in kinds) + f"{'total':>8}")
    for name, row in sorted(split.items(), key=lambda item: -sum(item[1].values())):
        total_bytes = sum(row.values())
        if total_bytes < 512:
            continue
        print(f"{name:<44}" + "".join(f"{row[k] / 1024:>8.0f}" for k in kinds) + f"{total_bytes / 1024:>8.0f}")
PY
