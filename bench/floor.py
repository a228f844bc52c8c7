#!/usr/bin/env python3
"""How low can the CPU per command go here? redis vs volley vs the floor server.

The CPU targets of the issues "Volley core performance" (SET/GET/INCR at
-P 1/16/128) and "Volley data types" (-P 16) are ratios to redis-server.
Most of a pipelined command's CPU on this VM is the kernel's socket work,
which every server with one read and one write per batch pays alike. This
script measures how much of each target that leaves: it runs
redis-benchmark against redis-server, volley-server and `volley-floor` (a
server that parses just enough RESP to find each frame and sends a canned
reply of the right shape, storing nothing: crates/bench/src/floor.rs), in
alternation, and prints per test and depth the server CPU per command
(utime+stime from /proc), its kernel part, and the ratios to Redis.

floor/redis is the best ratio any server with this I/O pattern can reach
on this machine. A target below it cannot be met by making Volley's own
code faster; "room" is what the target leaves for all real work (parsing,
lookup, the data structure, the reply) once the floor is paid.

    python3 bench/floor.py                          # the issues' targets, ~6 minutes
    python3 bench/floor.py --tests set,get --depths 16 --rounds 5
    python3 bench/floor.py --markdown floor.md --json floor.json
"""
import argparse
import collections
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import median  # noqa: E402

NAMES = ("redis", "volley", "floor")
CORE_TESTS = ("set", "get", "incr")
TYPE_TESTS = ("lpush", "rpush", "lpop", "rpop", "sadd", "hset", "spop", "zadd", "zpopmin", "mset")
# The floor answers with canned replies; LRANGE's 100-600 element replies are not modelled.
FLOOR_TESTS = CORE_TESTS + TYPE_TESTS


def floor_bin():
    env = os.environ.get("VOLLEY_FLOOR_BIN")
    return env or str(servers.REPO / "target" / "release" / "volley-floor")


def target_for(test, depth):
    """The issues' CPU/command limit (ratio to redis) for a test, or None."""
    if test in CORE_TESTS:
        return 0.8 if depth == 1 else 0.5 if depth in (16, 128) else None
    return 0.6 if test in TYPE_TESTS and depth == 16 else None


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("-n", type=int, default=300_000, help="requests per redis-benchmark run")
    ap.add_argument("--depths", default="1,16,128", help="pipeline depths (-P) for set,get,incr")
    ap.add_argument("--tests", default=",".join(FLOOR_TESTS),
                    help="redis-benchmark tests; the data-type ones run at -P 16 only")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--markdown", metavar="FILE")
    args = ap.parse_args(argv)
    args.depths = [int(d) for d in args.depths.split(",")]
    args.tests = [t.strip().lower() for t in args.tests.split(",")]
    bad = [t for t in args.tests if t not in FLOOR_TESTS]
    if bad:
        ap.error(f"the floor server has no canned reply for {', '.join(bad)} (it knows {', '.join(FLOOR_TESTS)})")
    return args


def cases(args):
    for test in args.tests:
        for depth in (args.depths if test in CORE_TESTS else [16]):
            yield test, depth


def measure(args, pin):
    starters = {"redis": servers.start_redis, "volley": servers.start_volley,
                "floor": lambda: servers.Server(floor_bin())}
    runs = collections.defaultdict(list)
    with contextlib.ExitStack() as stack:
        srvs = {}
        for name in NAMES:
            srvs[name] = stack.enter_context(starters[name]())
            pin.pin_server(srvs[name].proc.pid)
        for rnd in range(args.rounds):
            for test, depth in cases(args):
                for name in NAMES:
                    r = lib_load.run_benchmark(srvs[name], test, depth, args.n, pin, args.clients)
                    runs[(test, depth, name)].append(r)
                    print(f"[floor] round {rnd + 1}/{args.rounds} -P {depth:<3} {test.upper():7} {name:6} "
                          + (f"ERROR {r['error']}" if "error" in r else
                             f"{r['server_ns_per_cmd']:>7.0f} ns/cmd (kernel {r['server_sys_ns_per_cmd']:.0f})"),
                          file=sys.stderr, flush=True)
    return runs


def summarize(args, runs):
    rows = []
    for test, depth in cases(args):
        cell = {}
        for name in NAMES:
            ok = [r for r in runs[(test, depth, name)] if "error" not in r]
            cell[name] = {k: median([r[k] for r in ok]) for k in ("server_ns_per_cmd", "server_sys_ns_per_cmd")} \
                if ok else None
        rows.append(verdict(test, depth, cell))
    return rows


def verdict(test, depth, cell):
    row = {"test": test, "depth": depth, "target": target_for(test, depth)}
    for name in NAMES:
        c = cell[name]
        row[name] = c and c["server_ns_per_cmd"]
        row[f"{name}_kernel"] = c and c["server_sys_ns_per_cmd"]
    if not all(row[name] for name in NAMES):
        row["status"] = "error"
        return row
    redis = row["redis"]
    row["volley_ratio"], row["floor_ratio"] = row["volley"] / redis, row["floor"] / redis
    if row["target"] is None:
        row["status"] = "-"
        return row
    room = row["target"] * redis - row["floor"]
    row["room_ns"] = room
    if row["volley_ratio"] <= row["target"]:
        row["status"] = "met"
    elif room <= 0:
        row["status"] = "target below the floor"
    else:
        row["status"] = f"missed: {room:.0f} ns room, volley uses {row['volley'] - row['floor']:.0f}"
    return row


COLUMNS = ("test", "redis", "volley", "floor", "kernel r/v/f", "volley/redis", "floor/redis", "target", "status")


def cells(row):
    n = lambda v: "-" if v is None else f"{v:,.0f}"  # noqa: E731
    r = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    kernel = "/".join(n(row[f"{name}_kernel"]) for name in NAMES)
    return [f"{row['test'].upper()} -P {row['depth']}", n(row["redis"]), n(row["volley"]), n(row["floor"]),
            kernel, r(row.get("volley_ratio")), r(row.get("floor_ratio")),
            "-" if row["target"] is None else f"<= {row['target']}", row["status"]]


def text_table(rows, args):
    body = [COLUMNS] + [cells(r) for r in rows]
    widths = [max(len(b[i]) for b in body) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i in (0, 8) else c.rjust(w) for i, (c, w) in enumerate(zip(b, widths)))
             for b in body]
    title = f"Server CPU per command [ns, medians of {args.rounds} rounds, n={args.n:,}, -c {args.clients}]"
    return "\n".join([title, "-" * len(title), *lines])


def markdown_table(rows, args):
    out = [f"**Server CPU per command** (ns, medians of {args.rounds} rounds, n={args.n:,}, -c {args.clients})", "",
           "| " + " | ".join(COLUMNS) + " |", "|---" + "|---:" * 7 + "|---|"]
    out += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(out)


def main(argv=None):
    args = parse_args(argv)
    for binary in (servers.volley_bin(), floor_bin()):
        if not os.path.exists(binary):
            sys.exit(f"{binary} not found: build with `cargo build --release` first")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"[floor] {pin.describe()}", file=sys.stderr)
    rows = summarize(args, measure(args, pin))
    print(text_table(rows, args))
    print("  * floor/redis: the least any server doing one read and one write per batch used here;"
          " a target under it cannot be met by a faster Volley")
    print(f"  * CPU time has {1000 / lib_sys.CLK_TCK:.0f} ms ticks: one tick is {1e9 / lib_sys.CLK_TCK / args.n:.0f}"
          " ns/command per run")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown_table(rows, args) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "n": args.n, "rounds": args.rounds, "pinning": pin.describe()}, f, indent=1)


if __name__ == "__main__":
    main()
