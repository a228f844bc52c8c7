#!/usr/bin/env python3
"""Volley vs redis-server 7.0.15 with `appendonly yes, appendfsync always`.

Both servers write their AOF into their own fresh temp dir on the same disk
(tests/support/servers.py; `--aof-use-rdb-preamble no`). For each round a
fresh server of each kind runs `redis-benchmark -c 50 -P 16 -t set,incr -n N`
(redis, volley, redis, volley, ...); tables show medians over the rounds:

1. throughput (requests/s) and its ratio volley/redis (target >= 1.2),
2. server CPU per command (utime+stime of all threads / N), in ns,
3. group commit: fdatasync+fsync calls counted during one extra SET run
   per server started under `strace -f --seccomp-bpf -c -e trace=fsync,
   fdatasync` (only those calls stop the tracee, so it runs near full
   speed): commands per fsync and fsyncs per second.

    python3 bench/aof_bench.py                 # n=200k, 3 rounds, ~1-2 min
    python3 bench/aof_bench.py -n 500000 --rounds 5
"""
import argparse
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
sys.path.insert(0, HERE)
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import Table, median  # noqa: E402

NAMES = ("redis", "volley")
STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}
AOF_ARGS = ("--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no")
TARGET_RATIO = 1.2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("-n", type=int, default=200_000, help="requests per redis-benchmark run")
    ap.add_argument("-P", "--depth", type=int, default=16)
    ap.add_argument("-c", "--clients", type=int, default=50)
    ap.add_argument("--tests", default="set,incr")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-pin", action="store_true")
    ap.add_argument("--no-strace", action="store_true", help="skip the fsync-count run")
    args = ap.parse_args()
    args.tests = [t.strip() for t in args.tests.split(",")]
    return args


def aof_bytes(srv):
    d = os.path.join(srv.dir, "appendonlydir")
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) if os.path.isdir(d) else 0


def timed_rounds(args, pin):
    runs = collections.defaultdict(list)
    for rnd in range(args.rounds):
        for name in NAMES:
            with STARTERS[name](*AOF_ARGS) as srv:
                pin.pin_server(srv.proc.pid)
                for test in args.tests:
                    r = lib_load.run_benchmark(srv, test, args.depth, args.n, pin, args.clients)
                    runs[(test, name)].append(r)
                    log(f"[aof] round {rnd + 1}/{args.rounds} {test.upper():4} {name:6} "
                        + (f"ERROR {r['error']}" if "error" in r else
                           f"{r['rps']:>10,.0f} rps  server {r['server_ns_per_cmd']:.0f} ns/cmd  "
                           f"p99 {r['p99']:.3f} ms"))
                log(f"[aof] {name} AOF size {aof_bytes(srv):,} bytes")
    return runs


def strace_counts(path):
    counts = {}
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 5 and cols[0].replace(".", "", 1).isdigit():
                try:
                    counts[cols[-1]] = int(cols[3])
                except ValueError:
                    pass
    return counts


def fsync_run(args, pin, name):
    """One SET run under strace: (commands per fsync, fsyncs per second)."""
    real = servers.redis_bin() if name == "redis" else servers.volley_bin()
    tmp = tempfile.mkdtemp(prefix="volley-aof-bench-")
    out = os.path.join(tmp, "strace.txt")
    wrapper = os.path.join(tmp, "traced-server")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec strace -f --seccomp-bpf -c -e trace=fsync,fdatasync -o {out} {real} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    try:
        srv = servers.Server(wrapper, AOF_ARGS)
        child = int(subprocess.run(["pgrep", "-P", str(srv.proc.pid)], capture_output=True,
                                   text=True).stdout.split()[0])
        pin.pin_server(child)
        t0 = time.monotonic()
        r = lib_load.run_benchmark(srv, "set", args.depth, args.n, pin, args.clients)
        wall = time.monotonic() - t0
        # SIGTERM: the server shuts down, then strace prints its summary.
        os.kill(child, signal.SIGTERM)
        try:
            srv.proc.wait(timeout=30)
        finally:
            srv.stop()
        counts = strace_counts(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    syncs = counts.get("fdatasync", 0) + counts.get("fsync", 0)
    if "error" in r or syncs == 0:
        log(f"[aof] {name}: fsync count failed: {r.get('error', counts)}")
        return None, None
    return args.n / syncs, syncs / wall


def report(args, runs, fsyncs, pin):
    thr = Table(f"appendfsync always, redis-benchmark -c {args.clients} -P {args.depth} -n {args.n}, "
                f"median of {args.rounds}", "test", ("target",), unit="requests/s")
    cpu = Table("server CPU per command (all threads)", "test", unit="ns")
    for test in args.tests:
        med = {n: median([r.get("rps") for r in runs[(test, n)] if "error" not in r]) for n in NAMES}
        ns = {n: median([r.get("server_ns_per_cmd") for r in runs[(test, n)] if "error" not in r]) for n in NAMES}
        thr.add(test.upper(), med["redis"], med["volley"], f">= {TARGET_RATIO}")
        cpu.add(test.upper(), ns["redis"], ns["volley"])
    thr.note(pin.describe())
    print(thr.text() + "\n\n" + cpu.text())
    if fsyncs and all(v[0] for v in fsyncs.values()):
        gc = Table("group commit (one SET run each under strace --seccomp-bpf)", "measure")
        gc.add("commands per fsync", fsyncs["redis"][0], fsyncs["volley"][0])
        gc.add("fsyncs per second", fsyncs["redis"][1], fsyncs["volley"][1])
        print("\n" + gc.text())


def main():
    args = parse_args()
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    log(f"[aof] {pin.describe()}")
    runs = timed_rounds(args, pin)
    fsyncs = None
    if not args.no_strace and shutil.which("strace"):
        fsyncs = {name: fsync_run(args, pin, name) for name in NAMES}
    report(args, runs, fsyncs, pin)


if __name__ == "__main__":
    main()
