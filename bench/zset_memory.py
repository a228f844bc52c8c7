#!/usr/bin/env python3
"""Sorted-set memory and speed: load one zset of N members (default 1M) into
redis-server and volley-server, report each server's RSS growth and the
ratio, plus the wall time of the pipelined ZADD load and of ZRANK / ZRANGE
(by index) / ZSCORE probes.

    python3 bench/zset_memory.py             # 1M members
    python3 bench/zset_memory.py -n 200000   # quicker

Members are `member:<i>` (13-14 bytes), scores `i * 1.5` in shuffled order.
"""
import argparse
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "support"))
import servers  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sys import rss_bytes  # noqa: E402
from lib_load import resp as enc  # noqa: E402




class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def pipeline(self, payload, n):
        """Send `payload` holding n commands and read n simple replies."""
        self.s.sendall(payload)
        got = 0
        while got < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("server closed the connection")
            self.buf += chunk
            got += self.count_replies()

    def count_replies(self):
        # Replies here are single-line (:n, $-1) or one bulk; count line-complete frames.
        n, pos = 0, 0
        while True:
            end = self.buf.find(b"\r\n", pos)
            if end < 0:
                break
            if self.buf[pos:pos + 1] == b"$" and self.buf[pos + 1:pos + 3] != b"-1":
                blen = int(self.buf[pos + 1:end])
                if len(self.buf) < end + 2 + blen + 2:
                    break
                end = end + 2 + blen
            elif self.buf[pos:pos + 1] == b"*":
                # Arrays of bulks (ZRANGE i i): skip header, elements follow as bulks.
                pos = end + 2
                continue
            pos = end + 2
            n += 1
        self.buf = self.buf[pos:]
        return n


def run(srv, n, batch=1000):
    c = Conn(srv.port)
    order = list(range(n))
    random.Random(1).shuffle(order)
    base = (rss_bytes(srv.proc.pid) // 1024)
    t0 = time.perf_counter()
    for start in range(0, n, batch):
        args = []
        for i in order[start:start + batch]:
            args += [str(i * 1.5), f"member:{i}"]
        c.pipeline(enc("ZADD", "z", *args), 1)
    load = time.perf_counter() - t0
    grown = (rss_bytes(srv.proc.pid) // 1024) - base
    probes = [random.Random(2).randrange(n) for _ in range(1)]
    rng = random.Random(2)
    probes = [rng.randrange(n) for _ in range(20000)]
    timings = {}
    for name, mk in (("ZRANK", lambda i: enc("ZRANK", "z", f"member:{i}")),
                     ("ZSCORE", lambda i: enc("ZSCORE", "z", f"member:{i}")),
                     ("ZRANGE i i", lambda i: enc("ZRANGE", "z", i, i))):
        payload = b"".join(mk(i) for i in probes)
        t0 = time.perf_counter()
        c.pipeline(payload, len(probes))
        timings[name] = (time.perf_counter() - t0) / len(probes) * 1e6
    return grown, load, timings


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=1_000_000)
    args = p.parse_args()
    results = {}
    for name, start in (("redis", servers.start_redis), ("volley", servers.start_volley)):
        with start() as srv:
            results[name] = run(srv, args.n)
        grown, load, t = results[name]
        probes = ", ".join(f"{k} {v:.2f} us" for k, v in t.items())
        print(f"{name:7s} RSS +{grown / 1024:.1f} MiB ({grown * 1024 / args.n:.0f} B/member), "
              f"ZADD load {load:.2f} s ({load / args.n * 1e6:.2f} us/member), pipelined probes: {probes}")
    ratio = results["volley"][0] / max(1, results["redis"][0])
    print(f"volley/redis RSS growth ratio: {ratio:.2f}")


if __name__ == "__main__":
    main()
