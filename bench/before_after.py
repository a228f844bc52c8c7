#!/usr/bin/env python3
"""One change, measured: two volley-server builds and redis-server in one run.

Every issue asks for bench/compare.py's SET/GET/INCR figures before and after
the change. Two separate compare.py runs see different machine load; this
script runs the old build (--before), the new build (--after) and
redis-server side by side, alternating per test (redis, before, after, ...
for --rounds rounds), with compare.py's settings (redis-benchmark -c 50 -r
100000, server pinned to CPU 0, load generator to CPU 1), and prints medians
of server CPU per command and throughput with the after/before ratio.

    git worktree add /tmp/before <old commit>
    (cd /tmp/before && CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p volley-server)
    python3 bench/before_after.py --before /tmp/before-target/release/volley-server
"""
import argparse
import collections
import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import median  # noqa: E402

NAMES = ("redis", "before", "after")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="volley-server binary built from the old commit")
    p.add_argument("--after", default=servers.volley_bin(), help="volley-server binary under test")
    p.add_argument("-n", type=int, default=300_000, help="requests per redis-benchmark run")
    p.add_argument("--depths", default="1,16,128", help="pipeline depths (-P), comma-separated")
    p.add_argument("--tests", default="set,get,incr", help="redis-benchmark tests (-t)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    p.add_argument("--no-pin", action="store_true")
    a = p.parse_args(argv)
    a.depths = [int(d) for d in a.depths.split(",")]
    a.tests = a.tests.split(",")
    return a


def start(name, args, pin):
    binary = {"redis": servers.redis_bin(), "before": args.before, "after": args.after}[name]
    srv = servers.Server(binary)
    pin.pin_server(srv.proc.pid)
    return srv


def measure(args, pin):
    runs = collections.defaultdict(list)
    with contextlib.ExitStack() as stack:
        srvs = {name: stack.enter_context(start(name, args, pin)) for name in NAMES}
        for rnd in range(args.rounds):
            for depth in args.depths:
                for test in args.tests:
                    for name in NAMES:
                        r = lib_load.run_benchmark(srvs[name], test, depth, args.n, pin)
                        if "error" in r:
                            sys.exit(f"{name} {test} -P {depth}: {r['error']}")
                        runs[(test, depth, name)].append(r)
                        print(f"[before_after] round {rnd + 1}/{args.rounds} {test.upper():4} -P {depth:<3} "
                              f"{name:6} {r['server_ns_per_cmd']:7.0f} ns/cmd {r['rps']:>11,.0f} rps",
                              file=sys.stderr, flush=True)
    return runs


def report(args, runs):
    head = ("test", "redis ns", "before ns", "after ns", "after/before", "after/redis", "before rps", "after rps")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for test in args.tests:
        for depth in args.depths:
            ns = {n: median([r["server_ns_per_cmd"] for r in runs[(test, depth, n)]]) for n in NAMES}
            rps = {n: median([r["rps"] for r in runs[(test, depth, n)]]) for n in NAMES}
            row = (f"{test.upper()} -P {depth}", f"{ns['redis']:,.0f}", f"{ns['before']:,.0f}", f"{ns['after']:,.0f}",
                   f"{ns['after'] / ns['before']:.2f}", f"{ns['after'] / ns['redis']:.2f}",
                   f"{rps['before']:,.0f}", f"{rps['after']:,.0f}")
            print("| " + " | ".join(row) + " |")
    res = 1e9 / lib_sys.CLK_TCK / args.n
    print(f"\nmedians of {args.rounds} alternating rounds, n={args.n:,}; CPU resolution {res:.0f} ns/command")


def main(argv=None):
    args = parse_args(argv)
    for b in (args.before, args.after):
        if not os.path.exists(b):
            sys.exit(f"no volley-server at {b}")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"[before_after] {pin.describe()}", file=sys.stderr)
    report(args, measure(args, pin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
