#!/usr/bin/env python3
"""Replication: Volley primary + Volley replicas vs redis-server + redis-server replicas.

Issue #19's benchmark bullet, redis and volley in the same run, alternating
(redis, volley, redis, volley, ... for --rounds rounds), medians, ratios
volley/redis. Every server starts through tests/support/servers.py (free
loopback port, `--save "" --appendonly no`); the primary is pinned to CPU 0
and the load generator to CPU 1 (lib_sys.Pinning), replicas are not pinned.

Phases (`--phases sync,cpu,lag`):

* sync: a primary gets --keys keys (`SET key:%012d value:%010d` through
  `redis-cli --pipe`); then, for `repl-diskless-sync no` (disk: the RDB file
  is written, then sent) and `yes` (diskless: written to the socket), both
  with `repl-diskless-sync-delay 0`, a fresh empty replica is told
  `REPLICAOF`, and the time until its `INFO replication` shows
  `master_link_status:up` (polled every 5 ms) is taken; its DBSIZE is
  checked to equal --keys. The replica keeps the default disk-based load
  (`repl-diskless-load disabled`) in both modes.
* cpu: `redis-benchmark -c 50 -P 16 -t set -r 100000 -n N` on a primary with
  no replica, then with two replicas attached (synced first). Primary CPU
  per SET = its utime+stime delta / N. Replica CPU per applied command: each
  replica's CPU delta from the start of the load until its
  `slave_repl_offset` equals the primary's `master_repl_offset`, / N.
* lag: the same load again with the two replicas; a sampler thread reads,
  in a tight loop (~1 ms), the primary's `master_repl_offset` and then each
  replica's `slave_repl_offset` (INFO replication), stamping each read with
  a monotonic clock. The time lag of a replica sample (t, off) is t minus
  the time of the first primary sample whose offset was > off: how long the
  oldest byte the replica still lacks has existed on the primary (0 if no
  primary sample before t was ahead of it, i.e. the replica had caught up
  with everything seen). The primary produced that byte somewhere between
  that sample and the one before it, so the figure is low by at most one
  sampling period (~1-2 ms; the sample count per run is printed). p50/p99/
  max over all samples taken while the load runs, both replicas pooled. The sampler's INFO calls cost
  the servers some CPU, which is why the cpu phase is a separate run.

    python3 bench/replication.py --quick         # 200k keys, n=200k, 1 round
    python3 bench/replication.py                 # 5M keys, n=1M, 3 rounds
    python3 bench/replication.py --phases cpu,lag -n 2000000
"""
import argparse
import bisect
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import Table, median  # noqa: E402

NAMES = ("redis", "volley")
BINARIES = {"redis": servers.redis_bin, "volley": servers.volley_bin}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Conn(lib_load.Conn):
    """lib_load's client; syncs can outlast its default timeout."""

    def __init__(self, srv, timeout=300):
        super().__init__(srv, timeout)

    def repl(self):
        return self.info("replication")


def start(name, pin=None, pinned=False):
    srv = servers.Server(BINARIES[name](), ("--repl-diskless-sync-delay", "0"), timeout=60)
    if pinned and pin:
        pin.pin_server(srv.proc.pid)
    return srv


def attach(replica, primary, timeout=600):
    """REPLICAOF primary on `replica`; seconds until master_link_status:up."""
    c = Conn(replica)
    t0 = time.perf_counter()
    reply = c.cmd("REPLICAOF", primary.host, primary.port)
    if not reply.startswith("+"):
        raise RuntimeError(f"REPLICAOF replied {reply}")
    while c.repl().get("master_link_status") != "up":
        if time.perf_counter() - t0 > timeout or replica.proc.poll() is not None:
            raise RuntimeError(f"replica not up after {time.perf_counter() - t0:.1f}s: {replica.log()[-500:]}")
        time.sleep(0.005)
    secs = time.perf_counter() - t0
    c.close()
    return secs


def sync_round(name, payload, keys, pin):
    """Full-sync times (disk, diskless) of a --keys primary to fresh replicas."""
    out = {}
    with start(name, pin, pinned=True) as primary:
        load = lib_load.pipe_load(primary, payload, keys, pin)
        if load["error"]:
            raise RuntimeError(f"{name}: load failed: {load['error']}")
        pc = Conn(primary)
        for mode, flag in (("disk", "no"), ("diskless", "yes")):
            pc.cmd("CONFIG", "SET", "repl-diskless-sync", flag)
            time.sleep(0.5)
            with start(name) as replica:
                out[mode] = attach(replica, primary)
                n = Conn(replica).cmd("DBSIZE")
                if n != f":{keys}":
                    raise RuntimeError(f"{name} {mode}: replica has {n} keys of {keys}")
            # Let the primary notice the replica is gone before the next sync.
            time.sleep(0.5)
    return out


def caught_up(primary, replicas, timeout=120):
    """Wait until every replica applied the primary's whole stream; return
    the time each got there (perf_counter)."""
    pc, rcs = Conn(primary), [Conn(r) for r in replicas]
    target = int(pc.repl()["master_repl_offset"])
    done = [None] * len(replicas)
    t0 = time.perf_counter()
    while None in done:
        for i, rc in enumerate(rcs):
            if done[i] is None and int(rc.repl().get("slave_repl_offset", -1)) >= target:
                done[i] = time.perf_counter()
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"replicas did not catch up to {target} within {timeout}s")
        time.sleep(0.002)
    for c in [pc, *rcs]:
        c.close()
    return done


class LagSampler(threading.Thread):
    """Offsets of the primary and its replicas, read in turn with timestamps."""

    def __init__(self, primary, replicas):
        super().__init__(daemon=True)
        self.pc, self.rcs = Conn(primary), [Conn(r) for r in replicas]
        self.prim, self.reps = [], []  # (t, offset) / (t, offset) of any replica
        self.error = None
        self._stop_evt = threading.Event()

    def run(self):
        try:
            while not self._stop_evt.is_set():
                self.prim.append((time.perf_counter(), int(self.pc.repl()["master_repl_offset"])))
                for rc in self.rcs:
                    off = int(rc.repl().get("slave_repl_offset", -1))
                    self.reps.append((time.perf_counter(), off))
                time.sleep(0.0005)
        except Exception as e:  # reported with the result
            self.error = f"{type(e).__name__}: {e}"

    def stop(self, t_from, t_to):
        """Lag figures over the replica samples taken in [t_from, t_to]."""
        self._stop_evt.set()
        self.join(timeout=30)
        times = [t for t, _ in self.prim]
        offs = [o for _, o in self.prim]
        lags, byte_lags = [], []
        for t, off in self.reps:
            if not t_from <= t <= t_to:
                continue
            i = bisect.bisect_right(times, t)  # primary samples taken before this one
            j = bisect.bisect_right(offs, off, 0, i)  # first of them past `off`
            lags.append(0.0 if j >= i else (t - times[j]) * 1000)
            byte_lags.append(max(0, offs[i - 1] - off) if i else 0)
        lags.sort()
        byte_lags.sort()
        pct = lambda v, p: v[min(len(v) - 1, int(len(v) * p / 100))] if v else None  # noqa: E731
        return {"lag_p50_ms": pct(lags, 50), "lag_p99_ms": pct(lags, 99), "lag_max_ms": lags[-1] if lags else None,
                "bytes_p99": pct(byte_lags, 99), "samples": len(lags), "error": self.error}


def bench_set(primary, n, pin):
    r = lib_load.run_benchmark(primary, "set", 16, n, pin)
    if "error" in r:
        raise RuntimeError(f"redis-benchmark: {r['error']}")
    return r


def cpu_round(name, n, pin, phases):
    """CPU per SET with 0 and 2 replicas, replica CPU per command, lag."""
    out = {}
    with start(name, pin, pinned=True) as primary, start(name) as r1, start(name) as r2:
        replicas = [r1, r2]
        if "cpu" in phases:
            out["primary_ns_0"] = bench_set(primary, n, pin)["server_ns_per_cmd"]
        for r in replicas:
            attach(r, primary)
        if "cpu" in phases:
            caught_up(primary, replicas)
            rcpu0 = [lib_sys.cpu_seconds(r.proc.pid) for r in replicas]
            res = bench_set(primary, n, pin)
            out["primary_ns_2"], out["rps_2"] = res["server_ns_per_cmd"], res["rps"]
            caught_up(primary, replicas)
            rcpu = [lib_sys.cpu_seconds(r.proc.pid) - c0 for r, c0 in zip(replicas, rcpu0)]
            out["replica_ns"] = sum(rcpu) / len(rcpu) * 1e9 / n
        if "lag" in phases:
            caught_up(primary, replicas)
            sampler = LagSampler(primary, replicas)
            sampler.start()
            time.sleep(0.05)
            t_from = time.perf_counter()
            bench_set(primary, n, pin)
            t_to = time.perf_counter()
            caught_up(primary, replicas)
            out.update(sampler.stop(t_from, t_to))
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--keys", type=int, default=5_000_000, help="keys for the full-sync phase")
    ap.add_argument("-n", type=int, default=1_000_000, help="SETs per redis-benchmark run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--phases", default="sync,cpu,lag")
    ap.add_argument("--quick", action="store_true", help="--keys 200000 -n 200000 --rounds 1")
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args(argv)
    if a.quick:
        a.keys, a.n, a.rounds = 200_000, 200_000, 1
    a.phases = set(a.phases.split(","))
    return a


def report(args, results, pin):
    def med(key):
        return [median([r.get(key) for r in results[n]]) for n in NAMES]

    t = Table(f"Replication, medians of {args.rounds}", "measure", extra_cols=("target",))
    if "sync" in args.phases:
        t.add(f"full sync {args.keys:,} keys, disk (s)", *med("sync_disk"), "≤ 0.6")
        t.add(f"full sync {args.keys:,} keys, diskless (s)", *med("sync_diskless"), "≤ 0.6")
    if "cpu" in args.phases:
        t.add("primary CPU/SET -P 16, no replica (ns)", *med("primary_ns_0"), "")
        t.add("primary CPU/SET -P 16, 2 replicas (ns)", *med("primary_ns_2"), "≤ 0.6")
        t.add("replica CPU per applied SET (ns)", *med("replica_ns"), "≤ 0.6")
        t.add("primary SET/s -P 16, 2 replicas", *med("rps_2"), "", digits=0)
        r0, r2 = med("primary_ns_0")[1], med("primary_ns_2")[1]
        if r0 and r2:
            t.note(f"volley primary CPU with 2 replicas / with none: {r2 / r0:.3f} (target ≤ 1.15)")
        r0, r2 = med("primary_ns_0")[0], med("primary_ns_2")[0]
        if r0 and r2:
            t.note(f"redis primary CPU with 2 replicas / with none: {r2 / r0:.3f}")
    if "lag" in args.phases:
        t.add("replication lag p50 (ms)", *med("lag_p50_ms"), "")
        t.add("replication lag p99 (ms)", *med("lag_p99_ms"), "≤ 1.0")
        t.add("replication lag max (ms)", *med("lag_max_ms"), "")
        t.add("lag p99 in bytes", *med("bytes_p99"), "", digits=0)
        t.add("lag samples per run", *med("samples"), "", digits=0)
    t.note(f"load: redis-benchmark -c 50 -P 16 -t set -r 100000 -n {args.n:,}; "
           f"loadavg at end {' '.join(lib_sys.loadavg())}; {pin.describe()}")
    print(t.text())
    print()
    print(t.markdown())


def main():
    args = parse_args()
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    results = {n: [{} for _ in range(args.rounds)] for n in NAMES}
    log(f"loadavg at start {' '.join(lib_sys.loadavg())}")
    with tempfile.TemporaryDirectory(prefix="volley-repl-bench-") as tmp:
        payload = os.path.join(tmp, "set.resp")
        if "sync" in args.phases:
            log(f"writing {args.keys:,} SET commands ...")
            lib_load.write_set_payload(payload, args.keys)
        for rnd in range(args.rounds):
            for name in NAMES:
                res = results[name][rnd]
                if "sync" in args.phases:
                    res.update({f"sync_{k}": v for k, v in sync_round(name, payload, args.keys, pin).items()})
                if args.phases & {"cpu", "lag"}:
                    res.update(cpu_round(name, args.n, pin, args.phases))
                log(f"round {rnd + 1} {name}: {res}")
    report(args, results, pin)


if __name__ == "__main__":
    main()
