"""Load generators for compare.py: redis-benchmark, redis-cli --pipe, a PING probe.

* `preflight(srv, *cmd)`: send one command on a fresh connection and return
  None if the server accepted it, else its error line; a test whose command a
  server rejects is reported "unsupported" instead of being benchmarked.
* `run_benchmark(...)`: one redis-benchmark test (`-t set|get|incr --csv`),
  server CPU read before and after it, CSV parsed into rps and latencies.
* `write_set_payload(...)` / `pipe_load(...)`: the RESP of N `SET key:%012d
  value:%010d [EX ttl]` commands, written once to a file and fed to
  `redis-cli --pipe`, which reports how many replies and errors it received.
* `Conn`: a tiny blocking RESP client (simple, error, integer and bulk
  replies; INFO sections as dicts) for the harnesses' own commands.
* `PingProbe`: a thread that sends PING on its own connection every 1 ms and
  records every round trip, to find the longest stall during a load; the
  reply's kernel receive timestamp separates the server's delay from the
  probe thread's own wake-up delay.
"""
import csv
import io
import os
import socket
import statistics
import struct
import threading
import time

import lib_sys

LATENCY_FIELDS = ("avg", "min", "p50", "p95", "p99", "max")
# -t name and CSV row for tests whose name differs from the command (ping has two variants).
BENCH_NAMES = {"ping": ("ping_mbulk", "PING_MBULK")}


def resp(*args):
    """Encode one command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def preflight(srv, *cmd):
    """None if `cmd` gets a non-error reply, else the error (or failure) text."""
    try:
        with socket.create_connection((srv.host, srv.port), timeout=5) as s:
            s.sendall(resp(*cmd))
            buf = b""
            while b"\r\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    return "connection closed"
                buf += chunk
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    line = buf.split(b"\r\n", 1)[0].decode(errors="replace")
    return line[1:] if line.startswith("-") else None


def run_benchmark(srv, test, depth, n, pin, clients=50, keyspace=100_000):
    """Run one redis-benchmark test against `srv`; return a result dict.

    `server_ns_per_cmd` is the server's CPU (utime+stime) spent during the run
    divided by n, `server_sys_ns_per_cmd` the kernel's part of it (stime);
    `bench_core` is redis-benchmark's own CPU / wall time, where ~1.0 means it
    saturated its core and the throughput is its limit.
    """
    t_name, row_name = BENCH_NAMES.get(test, (test, test.upper()))
    argv = pin.load_prefix() + [
        "redis-benchmark", "-h", srv.host, "-p", str(srv.port), "-c", str(clients),
        "-n", str(n), "-P", str(depth), "-r", str(keyspace), "-t", t_name, "--csv"]
    cpu0 = lib_sys.cpu_times(srv.proc.pid)
    dead = lambda: srv.proc.poll() is not None  # noqa: E731
    code, out, err, wall, bench_cpu = lib_sys.run_measured(argv, timeout=60 + n / 2000, abort_if=dead)
    cpu1 = lib_sys.cpu_times(srv.proc.pid)
    row = parse_benchmark_csv(out).get(row_name)
    problem = _benchmark_problem(code, out, err, row, srv)
    if problem:
        return {"error": problem}
    return {"rps": row["rps"], **{k: row[k] for k in LATENCY_FIELDS},
            "server_ns_per_cmd": (sum(cpu1) - sum(cpu0)) * 1e9 / n,
            "server_sys_ns_per_cmd": (cpu1[1] - cpu0[1]) * 1e9 / n,
            "wall_s": wall, "bench_core": bench_cpu / wall if wall else 0.0}


def parse_benchmark_csv(text):
    """{TEST: {rps, avg, min, p50, p95, p99, max}} from redis-benchmark --csv output.

    Non-CSV lines (warnings such as "Could not fetch server CONFIG", error
    messages) are skipped.
    """
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = {}
    for rec in csv.reader(io.StringIO("\n".join(lines))):
        if len(rec) < 8 or rec[0] == "test":
            continue
        try:
            vals = [float(x) for x in rec[1:8]]
        except ValueError:
            continue
        # "LRANGE_100 (first 100 elements)", "MSET (10 keys)": key by the -t name.
        rows[rec[0].split(" (")[0]] = dict(zip(("rps",) + LATENCY_FIELDS, vals))
    return rows


def _benchmark_problem(code, out, err, row, srv):
    if srv.proc.poll() is not None:
        return f"server died (exit {srv.proc.returncode})"
    for text in (out, err):
        for ln in text.splitlines():
            if ln.startswith("Error") or "ERR " in ln:
                return ln.strip()[:200]
    if code != 0:
        return f"redis-benchmark exited {code}: {(err or out).strip()[-200:]}"
    if row is None:
        return "no CSV row in redis-benchmark output"
    return None


def set_command_template(value_len=16, ttl=None):
    """RESP %-template for `SET key:%012d <value> [EX ttl]` taking (i, i).

    The value is 'value:%010d' padded with 'x' to value_len bytes (>= 16). The
    fields have fixed widths, so the lengths are right for every i < 10**10.
    """
    pad = b"x" * max(0, value_len - 16)
    head = b"*%d\r\n$3\r\nSET\r\n$16\r\nkey:%%012d\r\n" % (3 if ttl is None else 5)
    value = b"$%d\r\nvalue:%%010d%s\r\n" % (16 + len(pad), pad)
    expire = b"" if ttl is None else resp("EX", ttl)[4:]  # drop the "*2\r\n" array header
    return head + value + expire


def write_set_payload(path, n, value_len=16, ttl=None, start=0):
    """Write n SET commands (keys start..start+n-1) as RESP to `path`."""
    tmpl = set_command_template(value_len, ttl)
    with open(path, "wb") as f:
        step = 50_000
        for lo in range(start, start + n, step):
            f.write(b"".join(tmpl % (i, i) for i in range(lo, min(lo + step, start + n))))


def pipe_load(srv, path, n, pin):
    """Feed the RESP file at `path` (n commands) to `redis-cli --pipe`.

    Returns {"wall_s", "cli_core", "error"}; error is None only if redis-cli
    reported n replies and 0 errors.
    """
    argv = pin.load_prefix() + ["redis-cli", "-h", srv.host, "-p", str(srv.port), "--pipe"]
    with open(path, "rb") as f:
        code, out, err, wall, cpu = lib_sys.run_measured(argv, stdin=f, timeout=60 + n / 2000,
                                                         abort_if=lambda: srv.proc.poll() is not None)
    error = None
    summary = [ln for ln in out.splitlines() if "errors:" in ln]
    if not summary:
        error = f"redis-cli --pipe exited {code}: {(err or out).strip()[-200:]}"
    else:
        nums = dict(p.strip().split(": ") for p in summary[-1].split(",") if ": " in p)
        if int(nums.get("errors", -1)) != 0 or int(nums.get("replies", -1)) != n:
            first_err = next((ln for ln in out.splitlines() if ln.startswith("ERR")), "")
            error = f"{summary[-1].strip()} {first_err}".strip()
    if srv.proc.poll() is not None:
        error = f"server died (exit {srv.proc.returncode})"
    return {"wall_s": wall, "cli_core": cpu / wall if wall else 0.0, "error": error}



class Conn:
    """A tiny blocking RESP client: simple, error, integer and bulk replies."""

    def __init__(self, srv, timeout=120):
        self.s = socket.create_connection((srv.host, srv.port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def cmd(self, *args):
        self.s.sendall(resp(*args))
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            while len(self.buf) < n + 2:
                self._more()
            body, self.buf = self.buf[:n], self.buf[n + 2:]
            return body.decode()
        return line.decode()

    def _more(self):
        chunk = self.s.recv(1 << 16)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def info(self, section):
        """One INFO section as a dict of its fields."""
        return dict(ln.split(":", 1) for ln in self.cmd("INFO", section).splitlines() if ":" in ln)

    def close(self):
        self.s.close()

# SO_TIMESTAMPNS: the kernel stamps each received segment (CLOCK_REALTIME,
# ns); the Python module lacks the constant on some builds. Linux value.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def recv_line_stamped(s):
    """Read one single-line reply from `s` (SO_TIMESTAMPNS on): the kernel's
    receive timestamp of its last segment (CLOCK_REALTIME ns), or None when
    the kernel gave none."""
    buf, stamp_ns = b"", None
    while not buf.endswith(b"\r\n"):
        chunk, anc, _, _ = s.recvmsg(64, socket.CMSG_SPACE(16))
        if not chunk:
            raise ConnectionError("server closed the connection")
        buf += chunk
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                sec, nsec = struct.unpack("qq", data[:16])
                stamp_ns = sec * 1_000_000_000 + nsec  # the last segment's stamp wins
    return stamp_ns


class PingProbe(threading.Thread):
    """PING every `interval` s on a dedicated connection; keep every round trip.

    A PING is sent only after the previous reply arrived, so a stall of X ms
    shows up as one round trip of about X ms.

    Each round trip is measured twice: `wall` ends when this thread has woken
    up and read the reply, so it also holds the probe's own scheduling delay
    (an unpinned Python thread on a machine whose CPUs the load saturates);
    `server` ends at the kernel's receive timestamp of the reply
    (SO_TIMESTAMPNS), i.e. when the server sent it, whenever the probe
    happened to run. `server` is what the stall figures use; a reply without
    a timestamp falls back to its wall time and is counted.

    `own` is `server` minus the time the server's main thread spent runnable
    but waiting for a CPU during that round trip (/proc/PID/schedstat, read
    around each PING): what remains is the server's own doing, not that of
    other processes sharing its core.
    """

    def __init__(self, srv, interval=0.001):
        super().__init__(daemon=True)
        self.srv, self.interval = srv, interval
        self.rtts, self.server_rtts, self.own_rtts, self.untimestamped, self.error = [], [], [], 0, None
        self._stop_evt = threading.Event()
        self._schedstat = None

    def _cpu_wait_ns(self):
        """The server main thread's total run-queue wait so far, in ns."""
        if self._schedstat is None:
            return 0
        return int(os.pread(self._schedstat, 128, 0).split()[1])

    def run(self):
        try:
            self._schedstat = os.open(f"/proc/{self.srv.proc.pid}/schedstat", os.O_RDONLY)
        except (OSError, AttributeError):
            self._schedstat = None  # `own` then equals `server`
        try:
            with socket.create_connection((self.srv.host, self.srv.port), timeout=30) as s:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                ping = resp("PING")
                next_at = time.perf_counter()
                while not self._stop_evt.is_set():
                    self._ping(s, ping)
                    next_at = max(next_at + self.interval, time.perf_counter())
                    time.sleep(max(0.0, next_at - time.perf_counter()))
        except Exception as e:  # reported, not raised: the load thread decides
            self.error = f"{type(e).__name__}: {e}"
        finally:
            if self._schedstat is not None:
                os.close(self._schedstat)
                self._schedstat = None

    def _ping(self, s, ping):
        waited_ns = self._cpu_wait_ns()
        sent_ns, t0 = time.time_ns(), time.perf_counter()
        s.sendall(ping)
        stamp_ns = recv_line_stamped(s)
        wall = time.perf_counter() - t0
        # The server has run since (it sent the reply), so its wait is booked.
        waited_ns = self._cpu_wait_ns() - waited_ns
        self.rtts.append(wall)
        if stamp_ns is None:
            self.untimestamped += 1
            server = wall
        else:
            server = min(wall, max(0.0, (stamp_ns - sent_ns) / 1e9))
        self.server_rtts.append(server)
        self.own_rtts.append(max(0.0, server - waited_ns / 1e9))

    def stop(self):
        """Stop and summarize: max/p99.9/p99/median of the server-side round
        trips; max and p99.9 of the wall and `own` round trips beside them."""
        self._stop_evt.set()
        self.join(timeout=35)
        ms = sorted(x * 1000 for x in self.server_rtts)
        wall = sorted(x * 1000 for x in self.rtts)
        own = sorted(x * 1000 for x in self.own_rtts)
        if not ms:
            return {"samples": 0, "max_ms": None, "p999_ms": None, "p99_ms": None, "median_ms": None,
                    "wall_max_ms": None, "wall_p999_ms": None, "own_max_ms": None, "own_p999_ms": None,
                    "untimestamped": 0, "error": self.error or "no samples"}
        return {"samples": len(ms), "max_ms": ms[-1], "p999_ms": _pct(ms, 99.9),
                "p99_ms": _pct(ms, 99), "median_ms": statistics.median(ms),
                "wall_max_ms": wall[-1], "wall_p999_ms": _pct(wall, 99.9),
                "own_max_ms": own[-1], "own_p999_ms": _pct(own, 99.9),
                "untimestamped": self.untimestamped, "error": self.error}


def _pct(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p / 100))]
