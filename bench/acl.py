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
import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_rounds  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402

RESTRICTED = ["--user", "default", "on", "nopass", "+@read", "+@write", "~key:*"]
NAMES = ("default", "restricted")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=servers.volley_bin(), help="volley-server binary")
    lib_rounds.add_arguments(p, n=400_000, depths="1,16", tests="set,get", rounds=5)
    return lib_rounds.finish_args(p.parse_args(argv))


def measure(args, pin):
    with contextlib.ExitStack() as stack:
        srvs = {}
        for name in NAMES:
            srv = stack.enter_context(servers.Server(args.server, RESTRICTED if name == "restricted" else ()))
            pin.pin_server(srv.proc.pid)
            srvs[name] = srv
        return lib_rounds.alternating_rounds(srvs, args, pin, "acl", flip=True)


def row(label, ns, rps):
    return (label, f"{ns['default']:,.0f}", f"{ns['restricted']:,.0f}", f"{ns['restricted'] / ns['default']:.3f}",
            f"{rps['default']:,.0f}", f"{rps['restricted']:,.0f}")


def main(argv=None):
    args = parse_args(argv)
    if not os.path.exists(args.server):
        sys.exit(f"no volley-server at {args.server}")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"[acl] {pin.describe()}", file=sys.stderr)
    head = ("test", "default ns/cmd", "restricted ns/cmd", "restricted/default", "default rps", "restricted rps")
    lib_rounds.report(args, measure(args, pin), NAMES, head, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
