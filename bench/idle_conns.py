#!/usr/bin/env python3
"""Many idle connections plus a pipelined load: volley-server vs redis-server.

For each server (alternating, --rounds rounds, medians):
1. open --conns connections (default 10,000), each sending one PING and
   reading its PONG, so every one is accepted and has been served once;
2. wait --settle seconds (Redis shrinks idle clients' buffers in its cron
   after 2 s; Volley after 2 s too), then read the RSS growth per connection;
3. run `redis-benchmark -c 50 -P 16` SET and GET while they stay open
   (its throughput and the server's CPU per command are reported);
4. PING every idle connection again: all must answer, in order.

Both servers get `--maxclients` above the connection count. The script
raises its own open-files limit (both servers inherit it); it needs about
conns + 200 descriptors.

    python3 bench/idle_conns.py                 # 10,000 connections, 3 rounds
    python3 bench/idle_conns.py --conns 2000 --rounds 1
"""
import argparse
import collections
import os
import resource
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import Table, median  # noqa: E402

STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(soft, need)
    if hard != resource.RLIM_INFINITY and want > hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return
        except (ValueError, OSError):
            sys.exit(f"need {need} open files, the hard limit is {hard}: raise it (ulimit -Hn) or use --conns")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def ping_all(socks, timeout=30.0):
    """Send PING on every socket, then read every +PONG; returns how many answered."""
    for s in socks:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
    ok = 0
    deadline = time.monotonic() + timeout
    for s in socks:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        buf = b""
        try:
            while not buf.endswith(b"\r\n"):
                chunk = s.recv(64)
                if not chunk:
                    break
                buf += chunk
        except OSError:
            continue
        ok += buf == b"+PONG\r\n"
    return ok


def one_round(name, args, pin):
    out = {}
    with STARTERS[name]("--maxclients", str(args.conns + 1000)) as srv:
        pin.pin_server(srv.proc.pid)
        time.sleep(0.3)
        rss0 = lib_sys.rss_bytes(srv.proc.pid)
        socks = []
        try:
            for _ in range(args.conns):
                socks.append(socket.create_connection((srv.host, srv.port), timeout=10))
            out["first_pong"] = ping_all(socks)
            time.sleep(args.settle)
            out["bytes_per_conn"] = (lib_sys.rss_bytes(srv.proc.pid) - rss0) / args.conns
            for test in ("set", "get"):
                r = lib_load.run_benchmark(srv, test, 16, args.n, pin)
                if "error" in r:
                    out["error"] = f"{test}: {r['error']}"
                    return out
                out[f"{test}_rps"] = r["rps"]
                out[f"{test}_ns"] = r["server_ns_per_cmd"]
            out["second_pong"] = ping_all(socks)
        finally:
            for s in socks:
                s.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conns", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-n", type=int, default=300_000, help="requests per redis-benchmark run")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds idle before reading RSS")
    ap.add_argument("--no-pin", action="store_true")
    args = ap.parse_args()
    raise_fd_limit(args.conns + 500)
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    results = collections.defaultdict(list)
    for rnd in range(args.rounds):
        for name in STARTERS:
            r = one_round(name, args, pin)
            results[name].append(r)
            print(f"[idle] round {rnd + 1}/{args.rounds} {name:6} {r}", file=sys.stderr, flush=True)
    failed = [f"{n}: {r}" for n, rs in results.items() for r in rs
              if r.get("error") or r.get("first_pong") != args.conns or r.get("second_pong") != args.conns]
    t = Table(f"{args.conns:,} idle connections + redis-benchmark -c 50 -P 16", "measure")
    for key, label, digits in (("bytes_per_conn", "RSS growth per idle connection (B)", 0),
                               ("set_rps", "SET req/s with them open", 0), ("get_rps", "GET req/s", 0),
                               ("set_ns", "server CPU per SET (ns)", 0), ("get_ns", "server CPU per GET (ns)", 0)):
        cells = {n: median([r[key] for r in rs if key in r]) if any(key in r for r in rs) else None
                 for n, rs in results.items()}
        t.add(label, cells["redis"], cells["volley"], digits=digits)
    t.note(f"medians over {args.rounds} round(s); every idle connection answered PING before and after "
           "the load" if not failed else "FAILED: " + "; ".join(failed))
    print(t.text())
    per = median([r["bytes_per_conn"] for r in results["volley"] if "bytes_per_conn" in r] or [0])
    ref = median([r["bytes_per_conn"] for r in results["redis"] if "bytes_per_conn" in r] or [0])
    verdict = "met" if not failed and per <= ref else "MISSED"
    print(f"target: per-idle-connection memory <= redis-server's, all served: {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
