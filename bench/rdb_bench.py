#!/usr/bin/env python3
"""BGSAVE of a large keyspace: Volley vs redis-server 7.0.15.

Each round starts a fresh server of each kind (redis, volley, redis, volley,
... for --rounds rounds), loads --keys small keys (`SET key:%012d
value:%010d`, 16-byte values) through `redis-cli --pipe`, then sends BGSAVE
and measures:

* save time: from BGSAVE until INFO persistence shows
  `rdb_bgsave_in_progress:0` (polled every 5 ms), with the final status;
* memory during the save, sampled every ~50 ms from /proc of the server and
  its forked child: the peak of RSS(server)+RSS(child) (which counts pages
  the two still share twice) and the peak of PSS(server)+PSS(child) from
  smaps_rollup (shared pages split between them: the real footprint, so
  copy-on-write growth shows as the excess over the pre-save PSS);
* the dump file's size;
* loading it back: a second server of the same kind started on the dump
  reports "DB loaded from disk: X seconds" in its log.

Tables show medians and the ratio volley/redis.

    python3 bench/rdb_bench.py                 # 5M keys, 2 rounds
    python3 bench/rdb_bench.py --keys 500000   # quick
"""
import argparse
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
STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}
BINARIES = {"redis": servers.redis_bin, "volley": servers.volley_bin}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def pss_bytes(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


class MemSampler(threading.Thread):
    """Peak RSS and PSS sums of a server and its children until stopped."""

    def __init__(self, pid, interval=0.05):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss = self.peak_pss = 0
        self.saw_child = False
        self._stop_evt = threading.Event()

    def run(self):
        while not self._stop_evt.is_set():
            pids = [self.pid] + children_of(self.pid)
            self.saw_child |= len(pids) > 1
            rss = sum(safe(lib_sys.rss_bytes, p) for p in pids)
            pss = sum(pss_bytes(p) for p in pids)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self._stop_evt.wait(self.interval)

    def stop(self):
        self._stop_evt.set()
        self.join(timeout=10)


def safe(fn, pid):
    try:
        return fn(pid)
    except OSError:
        return 0


class Conn(lib_load.Conn):
    """lib_load's client, plus one INFO persistence field."""

    def info_field(self, name):
        return self.info("persistence").get(name)


def one_run(name, payload, keys, pin):
    with STARTERS[name]() as srv:
        pin.pin_server(srv.proc.pid)
        load = lib_load.pipe_load(srv, payload, keys, pin)
        if load["error"]:
            raise RuntimeError(f"{name}: load failed: {load['error']}")
        c = Conn(srv)
        time.sleep(1.0)
        base_rss = lib_sys.rss_bytes(srv.proc.pid)
        base_pss = pss_bytes(srv.proc.pid)
        sampler = MemSampler(srv.proc.pid)
        sampler.start()
        t0 = time.perf_counter()
        reply = c.cmd("BGSAVE")
        if "started" not in reply:
            raise RuntimeError(f"{name}: BGSAVE replied {reply}")
        while c.info_field("rdb_bgsave_in_progress") != "0":
            time.sleep(0.005)
        secs = time.perf_counter() - t0
        sampler.stop()
        status = c.info_field("rdb_last_bgsave_status")
        size = os.path.getsize(os.path.join(srv.dir, "dump.rdb"))
        load_s = load_time(name, srv.dir, keys)
        return {"save_s": secs, "status": status, "file_mb": size / 2**20, "base_rss_mb": base_rss / 2**20,
                "peak_rss_mb": sampler.peak_rss / 2**20, "base_pss_mb": base_pss / 2**20,
                "peak_pss_mb": sampler.peak_pss / 2**20, "child_seen": sampler.saw_child,
                "pipe_s": load["wall_s"], "rdb_load_s": load_s}


def load_time(name, dump_dir, keys):
    """Seconds a fresh server of kind `name` reports for loading dump_dir's dump."""
    with servers.Server(BINARIES[name](), ("--dir", dump_dir), timeout=300) as again:
        c = Conn(again)
        reply = c.cmd("DBSIZE")
        while reply.startswith("-LOADING"):  # redis-server listens while it loads
            time.sleep(0.05)
            reply = c.cmd("DBSIZE")
        line = next((ln for ln in again.log().splitlines() if "DB loaded from disk:" in ln), "")
        n = int(reply[1:])
        if n != keys:
            raise RuntimeError(f"{name}: loaded {n} keys of {keys}")
        return float(line.split("DB loaded from disk:")[1].split()[0]) if line else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--keys", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-pin", action="store_true")
    args = ap.parse_args()
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    results = {n: [] for n in NAMES}
    with tempfile.TemporaryDirectory(prefix="volley-rdb-bench-") as tmp:
        payload = os.path.join(tmp, "set.resp")
        log(f"writing {args.keys:,} SET commands ...")
        lib_load.write_set_payload(payload, args.keys)
        for rnd in range(args.rounds):
            for name in NAMES:
                r = one_run(name, payload, args.keys, pin)
                log(f"round {rnd + 1} {name}: {r}")
                results[name].append(r)
    t = Table(f"BGSAVE of {args.keys:,} keys (16 B values), median of {args.rounds}", "measure")
    rows = [("save time (s)", "save_s"), ("dump size (MB)", "file_mb"),
            ("RSS before save (MB)", "base_rss_mb"), ("peak RSS server+child (MB)", "peak_rss_mb"),
            ("PSS before save (MB)", "base_pss_mb"), ("peak PSS server+child (MB)", "peak_pss_mb"),
            ("load at start (s)", "rdb_load_s")]
    for label, key in rows:
        t.add(label, median([r[key] for r in results["redis"]]), median([r[key] for r in results["volley"]]))
    for n in NAMES:
        st = {r["status"] for r in results[n]}
        if st != {"ok"} or not all(r["child_seen"] for r in results[n]):
            t.note(f"{n}: status {st}, child seen in every run: {all(r['child_seen'] for r in results[n])}")
    t.note("PSS splits shared pages between server and child: its peak over the pre-save PSS is the "
           "copy-on-write cost")
    t.note(f"pinning: {pin.describe()}")
    print(t.text())


if __name__ == "__main__":
    main()
