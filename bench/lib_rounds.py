"""Servers measured side by side in one run, for scripts that compare
builds or settings of a server (bench/before_after.py, bench/acl.py):
redis-benchmark's tests at each pipeline depth against every server, in
alternating rounds, then a markdown table of the medians.

* `add_arguments(p, ...)`: the shared options (-n, --depths, --tests,
  --rounds, --no-pin), with `finish_args` splitting the lists.
* `alternating_rounds(srvs, args, pin, tag, flip=False)`: the runs, keyed
  (test, depth, name); with `flip` every other round runs the servers in
  reverse order, so none always runs on the warmer half of a round.
* `report(args, runs, head, row)`: one table row per test and depth from
  the medians of server CPU per command and throughput.
"""
import collections
import sys

import lib_load
import lib_sys
from lib_report import median


def add_arguments(p, n, depths, tests, rounds):
    p.add_argument("-n", type=int, default=n, help="requests per redis-benchmark run")
    p.add_argument("--depths", default=depths, help="pipeline depths (-P), comma-separated")
    p.add_argument("--tests", default=tests, help="redis-benchmark tests (-t)")
    p.add_argument("--rounds", type=int, default=rounds, help="alternating rounds")
    p.add_argument("--no-pin", action="store_true")


def finish_args(a):
    a.depths = [int(d) for d in a.depths.split(",")]
    a.tests = a.tests.split(",")
    return a


def alternating_rounds(srvs, args, pin, tag, flip=False):
    names = tuple(srvs)
    runs = collections.defaultdict(list)
    for rnd in range(args.rounds):
        for depth in args.depths:
            for test in args.tests:
                for name in (names[::-1] if flip and rnd % 2 else names):
                    r = lib_load.run_benchmark(srvs[name], test, depth, args.n, pin)
                    if "error" in r:
                        sys.exit(f"{name} {test} -P {depth}: {r['error']}")
                    runs[(test, depth, name)].append(r)
                    print(f"[{tag}] round {rnd + 1}/{args.rounds} {test.upper():4} -P {depth:<3} {name:10} "
                          f"{r['server_ns_per_cmd']:7.0f} ns/cmd {r['rps']:>11,.0f} rps", file=sys.stderr, flush=True)
    return runs


def report(args, runs, names, head, row):
    """Print `head` and, per test and depth, `row(label, ns, rps)` where ns
    and rps map each name to its median."""
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for test in args.tests:
        for depth in args.depths:
            ns = {n: median([r["server_ns_per_cmd"] for r in runs[(test, depth, n)]]) for n in names}
            rps = {n: median([r["rps"] for r in runs[(test, depth, n)]]) for n in names}
            print("| " + " | ".join(row(f"{test.upper()} -P {depth}", ns, rps)) + " |")
    res = 1e9 / lib_sys.CLK_TCK / args.n
    print(f"\nmedians of {args.rounds} alternating rounds, n={args.n:,}; CPU resolution {res:.0f} ns/command")
