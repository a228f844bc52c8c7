#!/usr/bin/env python3
"""What an ACL user costs: Volley's server CPU per command with the default
user (every command, key and channel: the permission check is one flag
test) against the same binary whose default user is restricted to
`+@read +@write ~key:*` (every SET/GET checks its command bit and matches
its key against the pattern), in one run, alternating rounds.

redis-benchmark's keys are `key:<n>`, so the pattern allows them all, as
`~app:*` would an application's keys; its CONFIG GET at start is refused
(a warning only). Settings as bench/compare.py (-c 50 -r 100000, server
pinned to CPU 0, load generator to CPU 1); medians of the rounds, and the
ratio restricted/default, which the issue wants at most 1.05 at -P 16.

    python3 bench/acl.py [--server target/release/volley-server] [--rounds 5]
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

RESTRICTED = ["--user", "default", "on", "nopass", "+@read", "+@write", "~key:*"]
NAMES = ("default", "restricted")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=servers.volley_bin(), help="volley-server binary")
    p.add_argument("-n", type=int, default=400_000, help="requests per redis-benchmark run")
    p.add_argument("--depths", default="1,16", help="pipeline depths (-P), comma-separated")
    p.add_argument("--tests", default="set,get", help="redis-benchmark tests (-t)")
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    p.add_argument("--no-pin", action="store_true")
    a = p.parse_args(argv)
    a.depths = [int(d) for d in a.depths.split(",")]
    a.tests = a.tests.split(",")
    return a


def measure(args, pin):
    runs = collections.defaultdict(list)
    with contextlib.ExitStack() as stack:
        srvs = {}
        for name in NAMES:
            srv = stack.enter_context(servers.Server(args.server, RESTRICTED if name == "restricted" else ()))
            pin.pin_server(srv.proc.pid)
            srvs[name] = srv
        for rnd in range(args.rounds):
            for depth in args.depths:
                for test in args.tests:
                    # Alternate which server goes first, so neither always
                    # runs on the warmer (or busier) half of a round.
                    order = NAMES if rnd % 2 == 0 else NAMES[::-1]
                    for name in order:
                        r = lib_load.run_benchmark(srvs[name], test, depth, args.n, pin)
                        if "error" in r:
                            sys.exit(f"{name} {test} -P {depth}: {r['error']}")
                        runs[(test, depth, name)].append(r)
                        print(f"[acl] round {rnd + 1}/{args.rounds} {test.upper():4} -P {depth:<3} {name:10} "
                              f"{r['server_ns_per_cmd']:7.0f} ns/cmd {r['rps']:>11,.0f} rps", file=sys.stderr, flush=True)
    return runs


def report(args, runs):
    head = ("test", "default ns/cmd", "restricted ns/cmd", "restricted/default", "default rps", "restricted rps")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for test in args.tests:
        for depth in args.depths:
            ns = {n: median([r["server_ns_per_cmd"] for r in runs[(test, depth, n)]]) for n in NAMES}
            rps = {n: median([r["rps"] for r in runs[(test, depth, n)]]) for n in NAMES}
            row = (f"{test.upper()} -P {depth}", f"{ns['default']:,.0f}", f"{ns['restricted']:,.0f}",
                   f"{ns['restricted'] / ns['default']:.3f}", f"{rps['default']:,.0f}", f"{rps['restricted']:,.0f}")
            print("| " + " | ".join(row) + " |")
    res = 1e9 / lib_sys.CLK_TCK / args.n
    print(f"\nmedians of {args.rounds} alternating rounds, n={args.n:,}; CPU resolution {res:.0f} ns/command")


def main(argv=None):
    args = parse_args(argv)
    if not os.path.exists(args.server):
        sys.exit(f"no volley-server at {args.server}")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"[acl] {pin.describe()}", file=sys.stderr)
    report(args, measure(args, pin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
