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
import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_rounds  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402

NAMES = ("redis", "before", "after")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="volley-server binary built from the old commit")
    p.add_argument("--after", default=servers.volley_bin(), help="volley-server binary under test")
    lib_rounds.add_arguments(p, n=300_000, depths="1,16,128", tests="set,get,incr", rounds=3)
    return lib_rounds.finish_args(p.parse_args(argv))


def start(name, args, pin):
    binary = {"redis": servers.redis_bin(), "before": args.before, "after": args.after}[name]
    srv = servers.Server(binary)
    pin.pin_server(srv.proc.pid)
    return srv


def measure(args, pin):
    with contextlib.ExitStack() as stack:
        srvs = {name: stack.enter_context(start(name, args, pin)) for name in NAMES}
        return lib_rounds.alternating_rounds(srvs, args, pin, "before_after")


def row(label, ns, rps):
    return (label, f"{ns['redis']:,.0f}", f"{ns['before']:,.0f}", f"{ns['after']:,.0f}",
            f"{ns['after'] / ns['before']:.2f}", f"{ns['after'] / ns['redis']:.2f}",
            f"{rps['before']:,.0f}", f"{rps['after']:,.0f}")


def main(argv=None):
    args = parse_args(argv)
    for b in (args.before, args.after):
        if not os.path.exists(b):
            sys.exit(f"no volley-server at {b}")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"[before_after] {pin.describe()}", file=sys.stderr)
    head = ("test", "redis ns", "before ns", "after ns", "after/before", "after/redis", "before rps", "after rps")
    lib_rounds.report(args, measure(args, pin), NAMES, head, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
