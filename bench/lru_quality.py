#!/usr/bin/env python3
"""LRU exactness check (issue #16): which keys does allkeys-lru keep after a
sequential scan over several times the memory limit?

Each server (redis-server 7.0.15, volley-server, and valkey-server 9.1 for
reference) is started fresh with `maxmemory` (32mb), `maxmemory-policy
allkeys-lru` and the same `maxmemory-samples` (5). One connection writes
`SET key:<i> <100 bytes>` for i = 0 .. N-1 in order, each key once, in
pipelined batches of --batch (1000) paced evenly over --seconds (10 s). Every
key is used exactly once, so its recency is its position i: a perfect LRU
keeps exactly the last K = DBSIZE keys written.

Why paced: Redis's LRU clock has a resolution of one second, and an unpaced
write of ~800k keys takes about a second, so every key would look equally
old to it and its choice would be close to random. Spread over 10 s, the
surviving window (the last ~2-3 s of writes at 32mb) spans several clock
ticks, which is what a real cache's traffic looks like to Redis.

Default N = maxmemory / 40 bytes (838,860 keys at 32mb): more than twice what
any of the servers holds at that limit (Redis about 172k 100-byte values,
Volley and Valkey about 200k); the script reports N / DBSIZE and warns below 2.

Reported per server: DBSIZE (K), evicted_keys, and the recency quality score
= share of the K most recently written keys (key:N-K .. key:N-1) that
survived (1.0 = exact LRU); also where the survivors come from (the oldest
surviving position and the share of survivors in each fifth of the last 2K
writes). Target: Volley's score >= Redis's, same run, same samples.

    python3 bench/lru_quality.py                     # 32mb, ~840k keys over 10 s
    python3 bench/lru_quality.py --seconds 30 --samples 10 --rounds 3
"""
import argparse
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import lib_sys  # noqa: E402
import servers  # noqa: E402
from cache import binaries, mem_bytes  # noqa: E402
from lib_report import median  # noqa: E402
from stream import Conn  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--maxmemory", default="32mb")
    ap.add_argument("--samples", type=int, default=5, help="maxmemory-samples, the same for every server")
    ap.add_argument("--keys", type=int, default=None, help="N keys written (default maxmemory / 40 B)")
    ap.add_argument("--seconds", type=float, default=10.0, help="the writes are paced evenly over this time")
    ap.add_argument("--batch", type=int, default=1000, help="SETs per pipelined write")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--servers", default="redis,volley,valkey")
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds (medians are reported)")
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args(argv)
    a.servers = [s.strip() for s in a.servers.split(",") if s.strip()]
    a.maxmemory_bytes = mem_bytes(a.maxmemory)
    a.keys = a.keys or a.maxmemory_bytes // 40
    return a


def paced_writes(port, args):
    """SET key:0 .. key:N-1 in order, batches evenly spaced over args.seconds;
    returns (error replies, seconds the writes took)."""
    value = (b"0123456789abcdefghijklmnopqrstuvwxyz" * (args.value_size // 36 + 1))[:args.value_size]
    tail = b"\r\n$%d\r\n%s\r\n" % (len(value), value)
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    batches = (args.keys + args.batch - 1) // args.batch
    gap = args.seconds / batches
    errors, t0 = 0, time.monotonic()
    try:
        for b in range(batches):
            wait = t0 + b * gap - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            lo, hi = b * args.batch, min((b + 1) * args.batch, args.keys)
            keys = [b"key:%d" % i for i in range(lo, hi)]
            sock.sendall(b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s%s" % (len(k), k, tail) for k in keys))
            errors += read_lines(sock, hi - lo)
    finally:
        sock.close()
    return errors, time.monotonic() - t0


def read_lines(sock, n):
    """Read n one-line replies (+OK or -ERR ...); returns how many were errors."""
    data, lines = b"", 0
    while lines < n:
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk
        lines = data.count(b"\r\n")
    return sum(1 for line in data.split(b"\r\n") if line.startswith(b"-"))


def survivors(conn):
    """Positions i of every key:i left, by SCAN."""
    out, cursor = [], b"0"
    while True:
        cursor, keys = conn.call("SCAN", cursor, "COUNT", 10_000)
        out += [int(k[4:]) for k in keys]
        if cursor == b"0":
            return out


def score(alive, n):
    """Recency quality and where the survivors come from."""
    k = len(alive)
    recent = sum(1 for i in alive if i >= n - k)
    fifths = [0] * 5
    for i in alive:
        back = n - 1 - i  # 0 = the last key written
        if back < 2 * k:
            fifths[4 - back * 5 // (2 * k)] += 1
    return {"dbsize": k, "quality": recent / k if k else 0.0, "oldest": min(alive) if alive else None,
            "fifths": [f / k if k else 0.0 for f in fifths]}


def one_run(name, binary, args, pin):
    conf = ["--maxmemory", args.maxmemory, "--maxmemory-policy", "allkeys-lru",
            "--maxmemory-samples", str(args.samples)]
    with servers.Server(binary, conf) as srv:
        pin.pin_server(srv.proc.pid)
        errors, took = paced_writes(srv.port, args)
        conn = Conn(srv.port)
        try:
            # Every command's reply counts as used memory and could evict
            # more keys while we look: lift the limit first so the set stays.
            conn.call("CONFIG", "SET", "maxmemory", "0")
            dbsize = conn.call("DBSIZE")
            info = conn.call("INFO", "stats").decode()
            evicted = int(info.split("evicted_keys:")[1].split()[0]) if "evicted_keys:" in info else 0
            alive = survivors(conn)
        finally:
            conn.close()
    r = score(sorted(set(alive)), args.keys)
    r.update({"evicted": evicted, "errors": errors, "took": took, "scan_matches_dbsize": len(set(alive)) == dbsize})
    return r


def main(argv=None):
    args = parse_args(argv)
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    bins = binaries(args)
    names = list(bins)
    log(f"[lru] {pin.describe()}; N = {args.keys:,} keys of {args.value_size} B over {args.seconds} s, "
        f"maxmemory {args.maxmemory}, maxmemory-samples {args.samples}; load average {' '.join(lib_sys.loadavg())}")
    runs = {k: [] for k in names}
    for rnd in range(args.rounds):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            r = one_run(name, bins[name], args, pin)
            runs[name].append(r)
            log(f"[lru] round {rnd + 1}/{args.rounds} {name:6} quality {r['quality']:.4f}  DBSIZE {r['dbsize']:,} "
                f"(N/DBSIZE {args.keys / max(r['dbsize'], 1):.1f})  evicted {r['evicted']:,}  oldest survivor "
                f"key:{r['oldest']}  last-2K fifths {' '.join(f'{f:.2f}' for f in r['fifths'])}  "
                f"writes took {r['took']:.1f} s  errors {r['errors']}"
                + ("" if r["scan_matches_dbsize"] else "  SCAN count != DBSIZE"))
    title = (f"LRU exactness: allkeys-lru, maxmemory {args.maxmemory}, maxmemory-samples {args.samples}, "
             f"{args.keys:,} sequential SETs over {args.seconds:g} s (medians of {args.rounds})")
    print(title + "\n" + "-" * len(title))
    print(f"{'server':8} {'quality':>8} {'DBSIZE':>9} {'N/DBSIZE':>9} {'evicted':>9}  survivors per fifth of last 2K")
    med = {k: {f: median([r[f] for r in rs]) for f in ("quality", "dbsize", "evicted")} for k, rs in runs.items()}
    for k, rs in runs.items():
        fifths = [median([r["fifths"][i] for r in rs]) for i in range(5)]
        print(f"{k:8} {med[k]['quality']:8.4f} {med[k]['dbsize']:9,.0f} {args.keys / max(med[k]['dbsize'], 1):9.1f} "
              f"{med[k]['evicted']:9,.0f}  {' '.join(f'{f:.2f}' for f in fifths)}")
    short = [k for k in med if args.keys < 2 * med[k]["dbsize"]]
    if short:
        print(f"  * WARNING: N < 2 x DBSIZE for {', '.join(short)}: raise --keys")
    if "volley" in med and "redis" in med:
        ok = med["volley"]["quality"] >= med["redis"]["quality"]
        print(f"  * target volley quality >= redis: {med['volley']['quality']:.4f} vs {med['redis']['quality']:.4f} "
              f"-> {'met' if ok else 'MISSED'}")
        return 0 if ok else 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
