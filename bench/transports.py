#!/usr/bin/env python3
"""Unix socket and TLS: volley-server vs redis-server 7.0.15 in one run.

For each transport, redis-benchmark runs SET and GET at -P 1 and -P 16
against both servers in alternating rounds (server pinned to CPU 0, load
to CPU 1, as bench/compare.py), and the script prints medians of server
CPU per command (utime+stime from /proc) and throughput, with the
volley/redis ratio. Over Unix sockets: `redis-benchmark -s`; over TLS:
`redis-benchmark --tls --cert --key --cacert` with a client certificate
(tls-auth-clients yes, both servers). New TLS connections per second are
measured with `openssl s_time` (handshakes in a fixed time, `-new` for
full handshakes, `-reuse` for session resumption).

`volley-floor` (bench/floor.py's do-nothing server) runs in the same
rounds over the same transport, so each row also prints floor/redis and,
since the issue reads its 0.6x target above the floor wherever the floor
is above 0.45x Redis's, the ratio above the floor:
(volley - floor) / (redis - floor).

    python3 bench/transports.py                  # ~5 minutes
    python3 bench/transports.py --rounds 5 -n 200000
"""
import argparse
import collections
import contextlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
from certs import make_certs, server_args  # noqa: E402
from floor import floor_bin  # noqa: E402
import servers  # noqa: E402
from lib_report import median  # noqa: E402

NAMES = ("redis", "volley", "floor")
# Pairs a row of the handshake table compares (the floor has no session cache).
HS_NAMES = ("redis", "volley")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=200_000, help="requests per redis-benchmark run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--depths", default="1,16")
    p.add_argument("--tests", default="set,get")
    p.add_argument("--handshake-seconds", type=int, default=5)
    p.add_argument("--no-pin", action="store_true")
    a = p.parse_args(argv)
    a.depths = [int(d) for d in a.depths.split(",")]
    a.tests = a.tests.split(",")
    return a


def start(name, certs, sock, tls_port, pin):
    binary = {"redis": servers.redis_bin(), "volley": servers.volley_bin(), "floor": floor_bin()}[name]
    srv = servers.Server(binary, ["--unixsocket", sock, *server_args(certs, tls_port)])
    pin.pin_server(srv.proc.pid)
    return srv


def bench(srv, how, test, depth, n, pin):
    t = srv.transport
    d = t["certs"]
    target = ["-s", t["sock"]] if how == "unix" else [
        "-p", str(t["tls_port"]), "--tls", "--cacert", str(d / "ca.crt"), "--cert", str(d / "client.crt"),
        "--key", str(d / "client.key")]
    argv = pin.load_prefix() + ["redis-benchmark", *target, "-c", "50", "-n", str(n), "-P", str(depth),
                                "-r", "100000", "-t", test, "--csv"]
    cpu0 = lib_sys.cpu_times(srv.proc.pid)
    code, out, err, wall, _ = lib_sys.run_measured(argv, timeout=120 + n / 1000)
    cpu1 = lib_sys.cpu_times(srv.proc.pid)
    row = lib_load.parse_benchmark_csv(out).get(test.upper())
    if code != 0 or row is None:
        raise RuntimeError(f"redis-benchmark failed against {srv.binary}: {err or out}")
    return (sum(cpu1) - sum(cpu0)) * 1e9 / n, row["rps"]


def handshakes(srv, mode, seconds, pin):
    """New TLS connections per second (openssl s_time, -new or -reuse)."""
    t, d = srv.transport, srv.transport["certs"]
    argv = pin.load_prefix() + ["openssl", "s_time", "-connect", f"127.0.0.1:{t['tls_port']}", f"-{mode}",
                                "-time", str(seconds), "-CAfile", str(d / "ca.crt"), "-cert", str(d / "client.crt"),
                                "-key", str(d / "client.key")]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds * 4 + 30).stdout
    m = re.findall(r"(\d+) connections in (\d+) real seconds", out)
    if not m:
        raise RuntimeError(f"openssl s_time: {out}")
    conns, secs = map(int, m[-1])
    return conns / max(secs, 1)


def print_cpu_table(a, cpu, rps):
    print("| transport | test | -P | redis ns/cmd | volley ns/cmd | floor ns/cmd | volley/redis | floor/redis |"
          " above the floor | redis rps | volley rps | rps ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for how in ("unix", "tls"):
        for depth in a.depths:
            for test in a.tests:
                c = {n: median(cpu[(how, test, depth, n)]) for n in NAMES}
                r = {n: median(rps[(how, test, depth, n)]) for n in NAMES if n != "floor"}
                above = (c["volley"] - c["floor"]) / (c["redis"] - c["floor"]) if c["redis"] > c["floor"] else None
                print(f"| {how} | {test.upper()} | {depth} | {c['redis']:.0f} | {c['volley']:.0f} | {c['floor']:.0f} | "
                      f"{c['volley'] / c['redis']:.2f} | {c['floor'] / c['redis']:.2f} | "
                      f"{'-' if above is None else f'{above:.2f}'} | {r['redis']:.0f} | {r['volley']:.0f} | "
                      f"{r['volley'] / r['redis']:.2f} |")


def main():
    a = parse_args()
    pin = lib_sys.Pinning(enabled=not a.no_pin)
    cpu = collections.defaultdict(list)
    rps = collections.defaultdict(list)
    hs = collections.defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="vt-bench-") as d, contextlib.ExitStack() as stack:
        certs = make_certs(d)
        srvs = {}
        for name in NAMES:
            sock = os.path.join(d, f"{name}.sock")
            tls_port = servers.free_port()
            srvs[name] = stack.enter_context(start(name, certs, sock, tls_port, pin))
            srvs[name].transport = {"sock": sock, "tls_port": tls_port, "certs": certs}
        for rnd in range(a.rounds):
            for how in ("unix", "tls"):
                for depth in a.depths:
                    for test in a.tests:
                        for name in NAMES:
                            c, r = bench(srvs[name], how, test, depth, a.n, pin)
                            cpu[(how, test, depth, name)].append(c)
                            rps[(how, test, depth, name)].append(r)
            for mode in ("new", "reuse"):
                for name in HS_NAMES:
                    hs[(mode, name)].append(handshakes(srvs[name], mode, a.handshake_seconds, pin))
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    print_cpu_table(a, cpu, rps)
    print()
    print("| new TLS connections/s | redis | volley | ratio |")
    print("|---|---|---|---|")
    for mode, label in (("new", "full handshake (s_time -new)"), ("reuse", "session resumption (s_time -reuse)")):
        h = {n: median(hs[(mode, n)]) for n in HS_NAMES}
        print(f"| {label} | {h['redis']:.0f} | {h['volley']:.0f} | {h['volley'] / h['redis']:.2f} |")


if __name__ == "__main__":
    main()
