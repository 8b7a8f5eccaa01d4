#!/usr/bin/env python3
"""Times `fr-profile collect` beside the C floor and common system-information tools.

Runs are interleaved (every round runs each command once, in a shuffled order) so that load
from elsewhere hits all commands alike. Each timed run is started with posix_spawn and reaped
with wait4, without a shell in between. Peak RSS is measured in separate runs under GNU time
(`/usr/bin/time -f %M`): a child spawned by this Python process would inherit Python's RSS
high-water mark across exec.

    python3 bench/collect_bench.py --binary .build-static/release/fr-profile [--rounds 300]

Prints medians, 90th percentiles, peak RSS and the ratio of each median to the C floor's.
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOR_SOURCE = os.path.join(HERE, "..", "..", "shared", "bench", "limit.c")


def build_floor(out_dir):
    """Builds the C floor (../shared/bench/limit.c) with libudev, as its README says."""
    source = os.path.abspath(FLOOR_SOURCE)
    if not os.path.exists(source):
        sys.exit(f"collect_bench: the C floor {source} is missing (it lives in ../shared/bench/)")
    binary = os.path.join(out_dir, "limit")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libudev"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["gcc", "-O2", "-o", binary, source] + flags, check=True)
    return binary


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


def peak_rss_mb(argv, env, runs=5):
    """The largest peak RSS over a few runs under /usr/bin/time, in MB."""
    peak = 0
    for _ in range(runs):
        result = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = max(peak, int(result.stderr.strip().splitlines()[-1]))
    return peak / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the fr-profile binary to time (the installed build)")
    parser.add_argument("--rounds", type=int, default=300, help="rounds for the fast commands (default 300)")
    parser.add_argument("--slow-every", type=int, default=15, help="run the slow peers every N rounds (default 15)")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="fr-profile-bench.")
    try:
        state = os.path.join(work, "state")
        env = dict(os.environ, FR_PROFILE_HOME=state)
        binary = os.path.abspath(args.binary)
        # The key is created once before timing: the benchmark is of a normal login, not the first.
        subprocess.run([binary, "identifier"], env=env, check=True, stdout=subprocess.DEVNULL)
        fast = [("C floor (limit.c)", [build_floor(work)]), ("fr-profile collect", [binary, "collect"])]
        slow = []
        for name, argv in [("lshw -json", ["lshw", "-json"]), ("hwinfo --short", ["hwinfo", "--short"]),
                           ("inxi -Fxz", ["inxi", "-Fxz"]), ("neofetch --stdout", ["neofetch", "--stdout"])]:
            path = shutil.which(argv[0])
            if path:
                slow.append((name, [path] + argv[1:]))
            else:
                print(f"collect_bench: {argv[0]} not installed; skipped", file=sys.stderr)

        times = {name: [] for name, _ in fast + slow}
        peaks = {name: 0.0 for name, _ in fast + slow}
        for _ in range(10):  # warm-up: page cache, dentries
            for _, argv in fast:
                run_once(argv, env)
        for round_index in range(args.rounds):
            commands = list(fast)
            if round_index % args.slow_every == 0:
                commands += slow
            random.shuffle(commands)
            for name, argv in commands:
                times[name].append(run_once(argv, env))
        for name, argv in fast + slow:
            peaks[name] = peak_rss_mb(argv, env, runs=5 if (name, argv) in fast else 1)

        floor = statistics.median(times["C floor (limit.c)"])
        print(f"{'command':<22} {'runs':>5} {'median ms':>10} {'p90 ms':>8} {'peak RSS MB':>12} {'× floor':>8}")
        for name, _ in fast + slow:
            samples = sorted(times[name])
            median = statistics.median(samples)
            p90 = samples[max(0, -(-9 * len(samples) // 10) - 1)]
            print(f"{name:<22} {len(samples):>5} {median:>10.2f} {p90:>8.2f} {peaks[name]:>12.1f} {median / floor:>8.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
