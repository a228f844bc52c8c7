#!/usr/bin/env python3
"""Scripting and transaction cost: redis-server vs volley-server, same run.

Two loads, each run alternately on both servers (A B A B ...), medians of
server CPU per call (utime+stime from /proc/PID/stat around the run) and of
throughput, then the volley/redis ratios:

  * EVALSHA: `redis-benchmark -c 50 -P 16` sending
    `EVALSHA <sha> 2 counter:__rand_int__ other:__rand_int__` for a script
    that INCRs the first key and GETs the second (loaded with SCRIPT LOAD
    first). Target: CPU ratio <= 0.7.
  * MULTI; SET; INCR; EXEC: a raw-socket Python generator pipelining whole
    transactions (several connections, `--tx-batch` transactions per write).
    Target: CPU ratio per transaction <= 0.6.

Usage: python3 bench/script_bench.py [--rounds 3] [--n 400000] [--tx 1000000]
"""
import argparse
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import Table, median, ratio  # noqa: E402

SCRIPT = "redis.call('incr', KEYS[1]) return redis.call('get', KEYS[2])"
STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}


def command(srv, *args):
    """One command on a fresh connection; the reply's first line."""
    with socket.create_connection((srv.host, srv.port), timeout=10) as s:
        s.sendall(lib_load.resp(*args))
        buf = b""
        while b"\r\n" not in buf or (buf[:1] == b"$" and buf.count(b"\r\n") < 2):
            buf += s.recv(4096)
        return buf


def evalsha_run(srv, sha, n, pin, clients, depth):
    argv = pin.load_prefix() + [
        "redis-benchmark", "-h", srv.host, "-p", str(srv.port), "-c", str(clients), "-n", str(n),
        "-P", str(depth), "-r", "100000", "--csv",
        "EVALSHA", sha, "2", "counter:__rand_int__", "other:__rand_int__"]
    cpu0 = lib_sys.cpu_seconds(srv.proc.pid)
    code, out, err, wall, _ = lib_sys.run_measured(argv, timeout=120 + n / 2000)
    cpu1 = lib_sys.cpu_seconds(srv.proc.pid)
    rows = [line for line in out.splitlines() if line.startswith('"EVALSHA')]
    if code != 0 or not rows:
        return {"error": f"redis-benchmark exit {code}: {err[-300:] or out[-300:]}"}
    rps = float(rows[0].split('","')[1].strip('"'))
    return {"rps": rps, "cpu_ns": (cpu1 - cpu0) * 1e9 / n}


def tx_payload(batch, conn_id):
    one = b"".join(lib_load.resp(*c) for c in (
        ("MULTI",), ("SET", f"txkey:{conn_id}", "value"), ("INCR", f"txcount:{conn_id}"), ("EXEC",)))
    return one * batch


def tx_client(srv, total, batch, conn_id, done):
    """Send `total` transactions in pipelined writes of `batch`; wait for every EXEC reply."""
    payload = tx_payload(batch, conn_id)
    with socket.create_connection((srv.host, srv.port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sent = 0
        while sent < total:
            s.sendall(payload)
            sent += batch
            seen, tail = 0, b""
            while seen < batch:
                chunk = s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("server closed the connection")
                data = tail + chunk
                seen += data.count(b"*2\r\n") - tail.count(b"*2\r\n")
                tail = data[-3:]
    done.append(sent)


def tx_run(srv, total, pin, conns, batch):
    if pin.active:
        os.sched_setaffinity(0, {pin.load_cpu})
    done = []
    per = total // conns
    threads = [threading.Thread(target=tx_client, args=(srv, per, batch, i, done)) for i in range(conns)]
    cpu0 = lib_sys.cpu_seconds(srv.proc.pid)
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    cpu1 = lib_sys.cpu_seconds(srv.proc.pid)
    count = sum(done)
    if len(done) != conns:
        return {"error": "a client failed"}
    return {"rps": count / wall, "cpu_ns": (cpu1 - cpu0) * 1e9 / count}


def summarize(title, runs, unit, target):
    t = Table(title, "metric", ("target",), unit)
    cpu = {name: median([r.get("cpu_ns") for r in runs[name]]) for name in runs}
    rps = {name: median([r.get("rps") for r in runs[name]]) for name in runs}
    t.add(f"server CPU ns per {unit}", cpu["redis"], cpu["volley"], f"ratio <= {target}", digits=0)
    t.add(f"throughput ({unit}/s)", rps["redis"], rps["volley"], "-", digits=0)
    for name in runs:
        for r in runs[name]:
            if "error" in r:
                t.note(f"{name}: {r['error']}")
    print(t.text())
    print()
    return ratio(cpu["volley"], cpu["redis"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--n", type=int, default=400_000, help="EVALSHA calls per run")
    p.add_argument("--tx", type=int, default=1_000_000, help="transactions per run")
    p.add_argument("--tx-conns", type=int, default=4)
    p.add_argument("--tx-batch", type=int, default=64)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--no-pin", action="store_true")
    args = p.parse_args(argv)
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    print(f"# {pin.describe()}; load average {' '.join(lib_sys.loadavg())}", file=sys.stderr)
    eval_runs = {"redis": [], "volley": []}
    tx_runs = {"redis": [], "volley": []}
    with STARTERS["redis"]() as redis, STARTERS["volley"]() as volley:
        srvs = {"redis": redis, "volley": volley}
        shas = {}
        for name, srv in srvs.items():
            pin.pin_server(srv.proc.pid)
            reply = command(srv, "SCRIPT", "LOAD", SCRIPT)
            shas[name] = reply.split(b"\r\n")[1].decode()
        for rnd in range(args.rounds):
            for name, srv in srvs.items():
                r = evalsha_run(srv, shas[name], args.n, pin, args.clients, args.depth)
                eval_runs[name].append(r)
                print(f"[evalsha] round {rnd + 1} {name:6} {r}", file=sys.stderr)
            for name, srv in srvs.items():
                r = tx_run(srv, args.tx, pin, args.tx_conns, args.tx_batch)
                tx_runs[name].append(r)
                print(f"[multi]   round {rnd + 1} {name:6} {r}", file=sys.stderr)
    e = summarize(f"EVALSHA (INCR + GET script), redis-benchmark -c {args.clients} -P {args.depth}",
                  eval_runs, "call", 0.7)
    m = summarize(f"MULTI; SET; INCR; EXEC, {args.tx_conns} conns x {args.tx_batch} tx per write",
                  tx_runs, "tx", 0.6)
    print(f"EVALSHA CPU ratio volley/redis: {e:.3f} (target <= 0.7)" if e else "EVALSHA: not measured")
    print(f"MULTI/EXEC CPU ratio volley/redis: {m:.3f} (target <= 0.6)" if m else "MULTI/EXEC: not measured")


if __name__ == "__main__":
    main()
