#!/usr/bin/env python3
"""Lazy freeing: UNLINK vs DEL of a huge set, Volley against redis-server 7.0.15.

Per round and server (redis, volley, redis, volley, ...; fresh server each):
build a set of --members (10M) members `m:<i>` (hashtable-encoded) with
pipelined `SADD` batches, then delete it while a second connection (its own
process, so this script's GIL plays no part) sends PING every ~0.2 ms and
records the longest round trip. Once with UNLINK (the value is freed on the
server's lazy-free thread), once with DEL after rebuilding the set (freed
inline). Reported, medians over --rounds (3):

- the delete command's own latency (send to reply), in ms;
- the longest PING round trip from 0.2 s before the delete until 1.5 s
  after its reply (so a stall the background free causes counts too).

Targets (issue 16): UNLINK < 1 ms and no PING stall > 2 ms; DEL's stall
comparable to Redis's DEL. Exit status 0 only if Volley meets the UNLINK
targets.

    python3 bench/lazyfree.py                      # 10M members, 3 rounds
    python3 bench/lazyfree.py --members 1000000 --rounds 1   # quick look
"""
import argparse
import multiprocessing as mp
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
sys.path.insert(0, HERE)
import servers  # noqa: E402
from lib_load import resp as encode  # noqa: E402
from lib_report import Table, median  # noqa: E402

NAMES = ("redis", "volley")
STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}
PROBE_INTERVAL = 0.0002
BEFORE_S, AFTER_S = 0.2, 1.5
UNLINK_TARGET_MS, STALL_TARGET_MS = 1.0, 2.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--members", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=1000, help="members per SADD")
    ap.add_argument("--pipeline", type=int, default=50, help="SADDs in flight")
    ap.add_argument("--rounds", type=int, default=3)
    return ap.parse_args()


class Conn:
    """A bare RESP connection: this script only needs integer/status
    replies and INFO's bulk string."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        if line[:1] == b"$":
            n = int(line[1:])
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        return line[1:]

    def cmd(self, *args):
        self.s.sendall(encode(*args))
        return self.reply()

    def info(self, field):
        text = self.cmd("INFO", "memory").decode()
        for ln in text.split("\r\n"):
            if ln.startswith(field + ":"):
                return ln.split(":", 1)[1]
        return None


def build_set(c, key, members, batch, depth):
    """SADD `members` members in batches of `batch`, `depth` in flight."""
    in_flight = 0
    for start in range(0, members, batch):
        c.s.sendall(encode("SADD", key, *(f"m:{i}" for i in range(start, min(start + batch, members)))))
        in_flight += 1
        if in_flight >= depth:
            c.reply()
            in_flight -= 1
    for _ in range(in_flight):
        c.reply()
    got = int(c.cmd("SCARD", key))
    if got != members:
        raise RuntimeError(f"SCARD {got}, expected {members}")


def prober(port, go, stop, results):
    """PING every PROBE_INTERVAL s between `go` and `stop`; report the
    longest round trip (ms) and the number of PINGs."""
    c = Conn(port)
    go.wait()
    worst, n = 0.0, 0
    while not stop.is_set():
        t0 = time.perf_counter()
        c.s.sendall(b"*1\r\n$4\r\nPING\r\n")
        c.reply()
        dt = time.perf_counter() - t0
        worst, n = max(worst, dt), n + 1
        while time.perf_counter() - t0 < PROBE_INTERVAL:
            pass
    results.put((worst * 1000, n))


def wait_lazyfree_done(c):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pending = c.info("lazyfree_pending_objects")
        if pending in (None, "0"):
            return
        time.sleep(0.05)
    raise RuntimeError("lazy free never finished")


def measure_delete(srv, c, command, args):
    """Build the set, delete it with `command` under the PING probe:
    (command latency ms, longest PING ms, PINGs sent)."""
    build_set(c, "bigset", args.members, args.batch, args.pipeline)
    go, stop, results = mp.Event(), mp.Event(), mp.Queue()
    p = mp.Process(target=prober, args=(srv.port, go, stop, results))
    p.start()
    time.sleep(0.1)  # the prober is connected
    go.set()
    time.sleep(BEFORE_S)
    t0 = time.perf_counter()
    n = int(c.cmd(command, "bigset"))
    op_ms = (time.perf_counter() - t0) * 1000
    time.sleep(AFTER_S)
    stop.set()
    worst, pings = results.get(timeout=30)
    p.join()
    if n != 1:
        raise RuntimeError(f"{command} returned {n}")
    wait_lazyfree_done(c)
    return op_ms, worst, pings


def run(args):
    data = {(name, cmd): {"op": [], "stall": []} for name in NAMES for cmd in ("UNLINK", "DEL")}
    for rnd in range(args.rounds):
        for name in NAMES:
            with STARTERS[name]() as srv:
                c = Conn(srv.port)
                for command in ("UNLINK", "DEL"):
                    op, stall, pings = measure_delete(srv, c, command, args)
                    data[(name, command)]["op"].append(op)
                    data[(name, command)]["stall"].append(stall)
                    log(f"[lazyfree] round {rnd + 1}/{args.rounds} {name:6} {command:6} "
                        f"op {op:9.3f} ms  longest PING {stall:9.3f} ms  ({pings} PINGs)")
    return data


def report(args, data):
    t = Table(f"Deleting a {args.members:,}-member set, PING probe every ~{PROBE_INTERVAL * 1000:.1f} ms "
              f"(medians of {args.rounds} rounds)", "measurement", ("target",), unit="ms")
    med = {k: {m: median(v) for m, v in d.items()} for k, d in data.items()}
    t.add("UNLINK latency", med[("redis", "UNLINK")]["op"], med[("volley", "UNLINK")]["op"],
          f"< {UNLINK_TARGET_MS:g}", digits=3)
    t.add("UNLINK longest PING", med[("redis", "UNLINK")]["stall"], med[("volley", "UNLINK")]["stall"],
          f"< {STALL_TARGET_MS:g}", digits=3)
    t.add("DEL latency", med[("redis", "DEL")]["op"], med[("volley", "DEL")]["op"], "-", digits=3)
    t.add("DEL longest PING", med[("redis", "DEL")]["stall"], med[("volley", "DEL")]["stall"],
          "~ redis", digits=3)
    t.note("longest PING: worst round trip from 0.2 s before the delete to 1.5 s after its reply")
    print(t.text())
    v = med[("volley", "UNLINK")]
    return v["op"] < UNLINK_TARGET_MS and v["stall"] < STALL_TARGET_MS


def main():
    args = parse_args()
    ok = report(args, run(args))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
