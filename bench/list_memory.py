#!/usr/bin/env python3
"""List memory benchmark: build one list of N elements (1M by default) in
redis-server and volley-server and compare each server's RSS growth.

Profiles (each on fresh servers):
  ints     RPUSH of "0".."N-1" (stored as packed integers by both)
  strings  RPUSH of "element:<i>" (13-14 byte strings)
  lpush    LPUSH of the same strings (the other end's growth path)

Elements are pushed 1000 per command, pipelined. After building, both
servers must return identical LRANGE samples, and a timed pass of LINDEX
probes and LPOP/RPOP drains both ends.

    python3 bench/list_memory.py              # 1M elements
    python3 bench/list_memory.py -n 200000
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "support"))
import servers  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sys import rss_bytes  # noqa: E402
from lib_load import resp as enc  # noqa: E402

BATCH = 1000



class Conn:
    def __init__(self, srv):
        self.s = socket.create_connection((srv.host, srv.port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 16)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        """Read one reply; return it raw enough to compare."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        return line

    def call(self, *args):
        self.s.sendall(enc(*args))
        return self.reply()


def element(profile, i):
    return str(i).encode() if profile == "ints" else b"element:%d" % i


def build(conn, profile, n):
    cmd = "LPUSH" if profile == "lpush" else "RPUSH"
    sent = 0
    while sent < n:
        k = min(BATCH, n - sent)
        conn.s.sendall(enc(cmd, "biglist", *(element(profile, sent + j) for j in range(k))))
        sent += k
        conn.reply()


def run(profile, n):
    rows, samples = [], []
    for name, start in (("redis", servers.start_redis), ("volley", servers.start_volley)):
        with start() as srv:
            c = Conn(srv)
            c.call("PING")
            time.sleep(0.2)
            before = (rss_bytes(srv.proc.pid) // 1024)
            t = time.perf_counter()
            build(c, profile, n)
            build_s = time.perf_counter() - t
            time.sleep(0.2)
            grown = (rss_bytes(srv.proc.pid) // 1024) - before
            assert c.call("LLEN", "biglist") == b":%d" % n
            samples.append([c.call("LRANGE", "biglist", a, a + 20) for a in (0, n // 3, n - 21)])
            t = time.perf_counter()
            for i in range(0, n, max(1, n // 2000)):
                c.call("LINDEX", "biglist", i)
            while c.call("LPOP", "biglist", 5000) is not None:
                if c.call("RPOP", "biglist", 5000) is None:
                    break
            ops_s = time.perf_counter() - t
            rows.append((name, grown, build_s, ops_s))
    assert samples[0] == samples[1], "servers disagree on list contents"
    (_, r_kib, r_b, r_o), (_, v_kib, v_b, v_o) = rows
    print(f"{profile:8} n={n}: redis +{r_kib / 1024:7.1f} MiB ({r_kib * 1024 / n:5.1f} B/elem, build {r_b:.2f}s, "
          f"index+drain {r_o:.2f}s) | volley +{v_kib / 1024:7.1f} MiB ({v_kib * 1024 / n:5.1f} B/elem, "
          f"build {v_b:.2f}s, index+drain {v_o:.2f}s) | ratio {v_kib / r_kib:.2f}")
    return v_kib / r_kib


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=1_000_000)
    p.add_argument("--profiles", default="ints,strings,lpush")
    a = p.parse_args()
    for profile in a.profiles.split(","):
        run(profile, a.n)


if __name__ == "__main__":
    main()
