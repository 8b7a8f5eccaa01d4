#!/usr/bin/env python3
"""`fr-profile collect` beside the C floor (bench/floor.c) and, when present, fastfetch.

Prints, for each command:
  - instructions: callgrind's count of user-space instructions for one run (valgrind, with
    SWIFT_DETERMINISTIC_HASHING=1 so Swift's hashing seeds do not vary), the dynamic loader's
    included. Deterministic under load: the figure to make decisions with. fr-profile is measured
    on a `strip --strip-debug` copy (valgrind 3.19 gives up on the release binary's DWARF 5:
    "Possibly corrupted debuginfo file"); stripping debug info changes no code.
  - wall: medians and 90th percentiles of one interleaved run: every round runs each command once
    in a freshly shuffled order (posix_spawn + wait4, no shell, output to /dev/null), after every
    binary was evicted from the page cache and warmed up the same way, so load from elsewhere
    hits all commands alike. Ratios are to the
    C floor and to fastfetch of the same run.
  - peak RSS: the largest max-RSS of a few runs under GNU time (`/usr/bin/time -f %M`); a child of
    this Python process would inherit Python's RSS high-water mark across exec.

    python3 bench/collect_bench.py --binary .build-release/release/fr-profile [--rounds 300]
        [--fastfetch PATH] [--peers] [--extra NAME=PATH ...]

fastfetch is compared when `--fastfetch PATH` is given or `fastfetch` is on PATH (Debian 12 has no
package; build it from its source outside this repository and pass the binary). It runs with the
modules that match a profile's keys, JSON output and no configuration file. `--peers` adds lshw,
hwinfo, inxi and neofetch, run every --slow-every rounds. The key is created once, before timing:
the benchmark is of a normal login, not the first. `--extra NAME=PATH` (repeatable) adds another
fr-profile binary (a variant build: other link flags, a change to compare) as a row of its own,
measured like `fr-profile collect` in the same interleaved run, and prints its difference to it.

Targets (issue 18), for `fr-profile collect`: wall ≤ 1.0× fastfetch and ≤ 1.3× the C floor as built
here (gcc, dynamic glibc, libudev linked: the way users' C programs are), ≤ 0.6 M instructions,
≤ 4 MiB peak RSS.
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOR_SOURCE = os.path.join(HERE, "floor.c")
FASTFETCH_ARGS = ["-c", "none", "--format", "json", "-s",
                  "title:os:host:kernel:cpu:memory:disk:display:camera:bluetoothradio:locale:localip:board:bios"]
TARGETS = {"instructions": 0.6e6, "floor": 1.3, "fastfetch": 1.0, "rss": 4.0}


def build_floor(out_dir):
    """Builds our C floor (bench/floor.c) with libudev."""
    binary = os.path.join(out_dir, "floor")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libudev"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["gcc", "-O2", "-o", binary, FLOOR_SOURCE] + flags, check=True)
    return binary


def build_start_yardsticks(out_dir):
    """Two programs that only start and exit, linked like the real ones: a C `main` with libudev
    (what bench/floor.c pays before its first read) and an empty Swift program linked like the
    release fr-profile (the Makefile's RELEASE_FLAGS: dynamic glibc, the Swift runtime linked in
    with -static-stdlib, libgcc and libstdc++ linked in statically, the latter through a linker
    script named libstdc++.so on the -L path, --no-export-dynamic, lld, no PIE, Sources/CStartup;
    libudev is loaded only when needed): what any Swift collect pays before its first read.
    Returns (c, swift); swift is None without a toolchain."""
    c_source = os.path.join(out_dir, "start.c")
    with open(c_source, "w") as handle:
        handle.write("int main(void) { return 0; }\n")
    c_binary = os.path.join(out_dir, "start-c")
    subprocess.run(["gcc", "-O2", "-o", c_binary, c_source, "-Wl,--no-as-needed", "-ludev"], check=True)
    swiftc = shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc"
    clang = os.path.join(os.path.dirname(os.path.realpath(swiftc)), "clang")
    if not os.path.exists(swiftc) or not os.path.exists(clang):
        return c_binary, None
    swift_source = os.path.join(out_dir, "start.swift")
    with open(swift_source, "w") as handle:
        handle.write("// Nothing: process start-up only.\n")
    argv_object = os.path.join(out_dir, "swift-argv.o")
    subprocess.run([clang, "-O2", "-c", "-o", argv_object, os.path.join(HERE, "..", "Sources", "CStartup", "swift-argv.c")], check=True)
    # As `make release` does: -lstdc++ (which the static Swift runtime asks for) finds this linker
    # script before the shared library, so libstdc++ is linked in. swiftc's own -L, not -Xlinker -L:
    # that one comes after gcc's directory, and the program would need libstdc++.so.6 (1.9 M
    # instructions of symbol binding at start-up instead of 0.4 M).
    stdcxx = os.path.join(out_dir, "stdcxx")
    os.makedirs(stdcxx, exist_ok=True)
    archive = subprocess.run(["gcc", "-print-file-name=libstdc++.a"], capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(stdcxx, "libstdc++.so"), "w") as handle:
        handle.write(f"INPUT({archive})\n")
    swift_binary = os.path.join(out_dir, "start-swift")
    # TMPDIR: swiftc leaves a TemporaryDirectory.* behind per compile; keep it in our work directory.
    subprocess.run([swiftc, "-O", "-static-stdlib", "-o", swift_binary, swift_source, argv_object,
                    "-Xclang-linker", "-static-libgcc", "-Xclang-linker", "-no-pie", "-use-ld=lld",
                    "-L", stdcxx, "-Xlinker", "--no-export-dynamic"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=out_dir))
    return c_binary, swift_binary


def evict(path):
    """Drops a binary's pages from the page cache, so every command starts from the same state.

    Needed for fair RSS figures, not only wall times: a file freshly written by strip or objcopy
    sits in the page cache in large folios, and the kernel maps whole folios on a fault, so the
    same fr-profile binary showed 12.5 MB peak RSS right after `strip` and 5.9 MB once its cache
    had been dropped and re-read.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_once(argv, env):
    devnull = os.open(os.devnull, os.O_WRONLY)
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, _ = os.wait4(pid, 0)
    elapsed = time.perf_counter_ns() - start
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return elapsed / 1e6


def instructions(argv, env):
    """Callgrind's total instruction count for one run, or None without valgrind."""
    if not shutil.which("valgrind"):
        return None
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                            env=dict(env, SWIFT_DETERMINISTIC_HASHING="1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or not match:
        sys.exit(f"collect_bench: callgrind failed for {' '.join(argv)}:\n{result.stderr[-2000:]}")
    return int(match.group(1))


def peak_rss_mb(argv, env, runs=5):
    """The largest peak RSS over a few runs under /usr/bin/time, in MB (MiB)."""
    peak = 0
    for _ in range(runs):
        result = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = max(peak, int(result.stderr.strip().splitlines()[-1]))
    return peak / 1024.0


def percentile90(samples):
    ordered = sorted(samples)
    return ordered[max(0, -(-9 * len(ordered) // 10) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the fr-profile binary to time (the installed build)")
    parser.add_argument("--rounds", type=int, default=300, help="interleaved rounds (default 300)")
    parser.add_argument("--fastfetch", help="a fastfetch binary (default: fastfetch on PATH, if any)")
    parser.add_argument("--peers", action="store_true", help="also time lshw, hwinfo, inxi and neofetch")
    parser.add_argument("--slow-every", type=int, default=15, help="with --peers: run them every N rounds (default 15)")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=PATH",
                        help="another fr-profile binary to run `collect` with, as a row of its own (repeatable)")
    args = parser.parse_args()
    extras = []
    for spec in args.extra:
        name, _, path = spec.rpartition("=")  # the last "=": a name may hold one (`--icf=all`)
        if not name or not path:
            parser.error(f"--extra {spec}: expected NAME=PATH")
        if not os.access(path, os.X_OK):
            parser.error(f"--extra {spec}: {path} is not an executable")
        if name in [other for other, _ in extras] or name in ("fr-profile collect", "fastfetch") or name.startswith(("C ", "Swift ")):
            parser.error(f"--extra {spec}: the name {name!r} is taken")
        extras.append((name, os.path.abspath(path)))

    work = tempfile.mkdtemp(prefix="fr-profile-bench.")
    try:
        state = os.path.join(work, "state")
        env = dict(os.environ, FR_PROFILE_HOME=state)
        binary = os.path.abspath(args.binary)
        subprocess.run([binary, "identifier"], env=env, check=True, stdout=subprocess.DEVNULL)
        stripped = os.path.join(work, "fr-profile.strip-debug")
        subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
        extra_rows = []
        for index, (name, path) in enumerate(extras):
            copy = os.path.join(work, f"extra-{index}.strip-debug")
            subprocess.run(["strip", "--strip-debug", "-o", copy, path], check=True)
            subprocess.run([path, "collect"], env=env, check=True, stdout=subprocess.DEVNULL)
            extra_rows.append((name, [path, "collect"], [copy, "collect"]))
        floor = build_floor(work)

        start_c, start_swift = build_start_yardsticks(work)

        fast = [("C start-up (empty main)", [start_c], [start_c])]
        if start_swift:
            fast.append(("Swift start-up (empty)", [start_swift], [start_swift]))
        else:
            print("collect_bench: no Swift toolchain found; the Swift start-up row is left out", file=sys.stderr)
        fast += [("C floor (bench/floor.c)", [floor], [floor]),
                 ("fr-profile collect", [binary, "collect"], [stripped, "collect"])] + extra_rows
        fastfetch = args.fastfetch or shutil.which("fastfetch")
        if fastfetch:
            fastfetch = os.path.abspath(fastfetch)
            fast.append(("fastfetch", [fastfetch] + FASTFETCH_ARGS, [fastfetch] + FASTFETCH_ARGS))
        else:
            print("collect_bench: fastfetch not found (give --fastfetch PATH); compared with the C floor only", file=sys.stderr)
        slow = []
        if args.peers:
            for name, argv in [("lshw -json", ["lshw", "-json"]), ("hwinfo --short", ["hwinfo", "--short"]),
                               ("inxi -Fxz", ["inxi", "-Fxz"]), ("neofetch --stdout", ["neofetch", "--stdout"])]:
                path = shutil.which(argv[0])
                if path:
                    slow.append((name, [path] + argv[1:], None))
                else:
                    print(f"collect_bench: {argv[0]} not installed; skipped", file=sys.stderr)

        counts = {name: instructions(measured, env) for name, _, measured in fast}
        for _, argv, _ in fast:  # evict, then warm up below: the same for every command
            evict(argv[0])
        times = {name: [] for name, _, _ in fast + slow}
        for _ in range(20):  # warm-up, the same for every command: page cache, dentries
            for _, argv, _ in fast:
                run_once(argv, env)
        for round_index in range(args.rounds):
            commands = list(fast)
            if slow and round_index % args.slow_every == 0:
                commands += slow
            random.shuffle(commands)
            for name, argv, _ in commands:
                times[name].append(run_once(argv, env))
        peaks = {name: peak_rss_mb(argv, env, runs=5 if measured else 1) for name, argv, measured in fast + slow}

        with open("/proc/loadavg") as loadavg:
            load = " ".join(loadavg.read().split()[:3])
        print(f"# {os.cpu_count()} CPUs, load {load}, {args.rounds} interleaved rounds")
        base = statistics.median(times["C floor (bench/floor.c)"])
        peer = statistics.median(times["fastfetch"]) if fastfetch else None
        width = max([24] + [len(name) for name, _, _ in fast + slow])
        header = f"{'command':<{width}} {'instructions':>13} {'median ms':>10} {'p90 ms':>8} {'× floor':>8}"
        header += f" {'× fastfetch':>12}" if peer else ""
        print(header + f" {'peak RSS MiB':>13}")
        for name, _, _ in fast + slow:
            samples = times[name]
            median = statistics.median(samples)
            count = f"{counts[name] / 1e6:.2f} M" if counts.get(name) else "-"
            line = f"{name:<{width}} {count:>13} {median:>10.2f} {percentile90(samples):>8.2f} {median / base:>8.2f}"
            line += f" {median / peer:>12.2f}" if peer else ""
            print(line + f" {peaks[name]:>13.1f}")

        collect = "fr-profile collect"
        checks = []
        if peer:
            checks.append((f"wall ≤ {TARGETS['fastfetch']:.1f}× fastfetch", statistics.median(times[collect]) <= TARGETS["fastfetch"] * peer))
        checks += [(f"wall ≤ {TARGETS['floor']:.1f}× the C floor", statistics.median(times[collect]) <= TARGETS["floor"] * base),
                   (f"instructions ≤ {TARGETS['instructions'] / 1e6:.1f} M", counts[collect] is not None and counts[collect] <= TARGETS["instructions"]),
                   (f"peak RSS ≤ {TARGETS['rss']:.0f} MiB", peaks[collect] <= TARGETS["rss"])]
        print("targets: " + ", ".join(f"{name} {'met' if ok else 'NOT met'}" for name, ok in checks))
        # What each program does after start-up: its median minus the start-up of its language.
        c_work = base - statistics.median(times["C start-up (empty main)"])
        if start_swift:
            swift_start = statistics.median(times["Swift start-up (empty)"])
            collect_work = statistics.median(times[collect]) - swift_start
            print(f"after start-up: the C floor {c_work:.2f} ms, collect {collect_work:.2f} ms; Swift start-up alone is "
                  f"{swift_start / base:.2f}× the C floor, so {TARGETS['floor']:.1f}× leaves collect {TARGETS['floor'] * base - swift_start:.2f} ms for its work")
        for name, _, _ in extra_rows:
            ours, theirs = statistics.median(times[collect]), statistics.median(times[name])
            delta = f"instructions {(counts[name] / counts[collect] - 1) * 100:+.1f} %, " if counts.get(name) and counts.get(collect) else ""
            print(f"{name} vs {collect}: {delta}median wall {(theirs / ours - 1) * 100:+.1f} % ({theirs:.3f} vs {ours:.3f} ms), "
                  f"peak RSS {peaks[name]:.1f} vs {peaks[collect]:.1f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
