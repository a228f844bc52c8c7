#!/usr/bin/env python3
"""Backpressure benchmark: a client writes N `GET k` (k holds 1 KiB) before
reading a single reply, against redis-server and volley-server in the same run.

Reports, per server: whether the client's writes completed while it read
nothing, the server's peak RSS growth over its baseline, replies received
(all must arrive, in order), and the wall time. Redis queues every reply
(RSS grows by about the reply volume); Volley pauses execution and parks
input, so its growth stays bounded.

    python3 bench/backpressure.py            # 2M GETs, the issue's full size
    python3 bench/backpressure.py -n 200000  # quicker
"""
import argparse
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "support"))
import servers  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sys import rss_bytes  # noqa: E402

VALUE = b"v" * 1024
GET = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
REPLY = b"$1024\r\n" + VALUE + b"\r\n"



def run_one(srv, n):
    with socket.create_connection((srv.host, srv.port)) as s:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1024\r\n" + VALUE + b"\r\n")
        assert s.recv(5) == b"+OK\r\n"
    time.sleep(0.2)
    base = (rss_bytes(srv.proc.pid) // 1024)
    peak = base
    sock = socket.create_connection((srv.host, srv.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    done = threading.Event()

    def writer():
        chunk = GET * 10_000
        for _ in range(n // 10_000):
            sock.sendall(chunk)
        done.set()

    started = time.monotonic()
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    # Read nothing until the whole pipeline is written (or 120 s pass).
    while not done.wait(0.05):
        peak = max(peak, (rss_bytes(srv.proc.pid) // 1024))
        if time.monotonic() - started > 120:
            break
    wrote_all = done.is_set()
    write_secs = time.monotonic() - started
    expected = len(REPLY) * (n // 10_000) * 10_000
    got = 0
    tail = b""
    ok_order = True
    sock.settimeout(60)
    while got < expected:
        peak = max(peak, (rss_bytes(srv.proc.pid) // 1024)) if got % (64 << 20) < (1 << 20) else peak
        data = sock.recv(1 << 20)
        if not data:
            break
        if got == 0 and not data.startswith(REPLY[:16]):
            ok_order = False
        got += len(data)
        tail = (tail + data)[-len(REPLY):]
    sock.close()
    ok_order = ok_order and tail == REPLY
    return {
        "wrote_all": wrote_all,
        "write_secs": write_secs,
        "peak_growth_mib": (peak - base) / 1024,
        "replies_ok": got == expected and ok_order,
        "total_secs": time.monotonic() - started,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2_000_000, help="GETs to pipeline (multiple of 10000)")
    args = ap.parse_args()
    results = {}
    for name, start in (("redis-server", servers.start_redis), ("volley-server", servers.start_volley)):
        with start() as srv:
            results[name] = run_one(srv, args.n)
    print(f"\n{args.n} pipelined GETs of a 1 KiB value, written before reading any reply\n")
    print(f"{'server':15} {'writes done':>11} {'write s':>8} {'peak RSS growth':>16} {'all replies':>11} {'total s':>8}")
    for name, r in results.items():
        print(f"{name:15} {str(r['wrote_all']):>11} {r['write_secs']:8.2f} {r['peak_growth_mib']:13.1f} MiB"
              f" {str(r['replies_ok']):>11} {r['total_secs']:8.2f}")
    v, rd = results["volley-server"], results["redis-server"]
    if rd["peak_growth_mib"] > 0:
        print(f"\nvolley/redis peak RSS growth ratio: {v['peak_growth_mib'] / rd['peak_growth_mib']:.3f}")
    bad = not (v["wrote_all"] and v["replies_ok"] and v["peak_growth_mib"] < 128)
    print("target (volley growth < 128 MiB, every reply, writes never blocked):", "MISSED" if bad else "met")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
