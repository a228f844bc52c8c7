#!/usr/bin/env python3
"""Memory of small hashes and sets: volley-server vs redis-server.

Loads N hashes of 10 small fields (listpack) and N sets of 10 integers
(intset) into a fresh server of each kind with `redis-cli --pipe`, and
prints the growth of VmRSS and volley/redis ratios. A third line loads N
plain strings (`SET key 1`, same key lengths): the per-key cost of the
keyspace itself, so value cost = type line - string line. Issue #4's target
(RSS growth <= 0.8x Redis's) applies to the hash and set lines.

    python3 bench/types_memory.py [--keys 100000]

VOLLEY_SERVER_BIN / REDIS_SERVER_BIN pick the binaries (see
tests/support/servers.py; the default volley binary is the release build).
"""
import argparse
import random
import subprocess
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from servers import start_redis, start_volley  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_sys import rss_bytes  # noqa: E402
from lib_load import resp  # noqa: E402



def payload(kind, n, seed=1):
    rng = random.Random(seed)
    cmds = []
    for i in range(n):
        if kind == "str":
            cmds.append(resp("SET", f"str:{i}", "1"))
        elif kind == "hash":
            args = [a for j in range(10) for a in (f"field{j}", f"val{rng.randrange(100000)}")]
            cmds.append(resp("HSET", f"hash:{i}", *args))
        else:
            cmds.append(resp("SADD", f"set:{i}", *(rng.randrange(1000000) for _ in range(10))))
    return b"".join(cmds)



def measure(start, kind, n):
    data = payload(kind, n)
    with start() as srv:
        time.sleep(0.2)
        before = (rss_bytes(srv.proc.pid) // 1024)
        subprocess.run(["redis-cli", "-p", str(srv.port), "--pipe"], input=data, check=True,
                       stdout=subprocess.DEVNULL)
        enc = subprocess.run(["redis-cli", "-p", str(srv.port), "OBJECT", "ENCODING", f"{kind}:0"],
                             capture_output=True, check=True).stdout.decode().strip()
        time.sleep(0.2)
        return (rss_bytes(srv.proc.pid) // 1024) - before, enc


TARGETS = {"hash": 0.8, "set": 0.8}  # issue #4: volley/redis RSS growth


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys", type=int, default=100_000)
    args = p.parse_args()
    for kind in ("hash", "set", "str"):
        v, venc = measure(start_volley, kind, args.keys)
        r, renc = measure(start_redis, kind, args.keys)
        target = TARGETS.get(kind)
        verdict = "" if target is None else f"  target <= {target}x {'met' if v / r <= target else 'MISSED'}"
        print(f"{kind:4}: volley {v / 1024:7.1f} MiB ({venc}), redis {r / 1024:7.1f} MiB ({renc}), "
              f"ratio {v / r:.2f}  ({v * 1024 / args.keys:.0f} vs {r * 1024 / args.keys:.0f} bytes/key){verdict}")


if __name__ == "__main__":
    main()
