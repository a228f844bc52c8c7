#!/usr/bin/env python3
"""Volley vs redis-server 7.0.15, side by side, on the issue "Volley core performance".

Both servers run on free loopback ports with the same settings (`--save ""
--appendonly no`, via tests/support/servers.py); every load runs against each
in alternation (redis, volley, redis, volley, ... for --rounds rounds) so that
drift in machine load hits both alike; tables show medians over the rounds and
the ratio volley/redis. Measurements:

1. bench:  redis-benchmark -c 50 -n N -P depth -r 100000 -t set|get|incr --csv
           at each --depths; throughput, latency percentiles, and the server's
           CPU seconds (utime+stime from /proc/PID/stat) per command in ns.
2. rss:    VmRSS growth per key after loading --keys keys with redis-cli --pipe
           (16 B values, 100 B values, 16 B values with EX 100000); a fresh
           server per load.
3. stall:  a PING probe every 1 ms on its own connection while --growth-keys
           new keys are SET through a pipe; the longest round trip (ended by
           the reply's kernel receive timestamp) is the longest time the
           server did not serve that connection.

Server pinned to CPU 0, load generators to CPU 1 (taskset), if possible.

    python3 bench/compare.py --quick                   # ~1-2 minutes
    python3 bench/compare.py --json r.json --markdown r.md
    python3 bench/compare.py --growth-keys 10000000    # the issue's full stall run
"""
import argparse
import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import lib_load  # noqa: E402
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import Table, fmt, median, ratio  # noqa: E402

NAMES = ("redis", "volley")
STARTERS = {"redis": servers.start_redis, "volley": servers.start_volley}
PREFLIGHT = {"set": ("SET", "bench:preflight", "v"),
             "get": ("GET", "bench:preflight"),
             "incr": ("INCR", "bench:preflight:n"),
             # redis-benchmark's data-type tests, probed with one harmless command each
             "lpush": ("LPUSH", "bench:preflight:l", "v"), "rpush": ("RPUSH", "bench:preflight:l", "v"),
             "lpop": ("LPOP", "bench:preflight:l"), "rpop": ("RPOP", "bench:preflight:l"),
             "sadd": ("SADD", "bench:preflight:s", "v"), "spop": ("SPOP", "bench:preflight:s"),
             "hset": ("HSET", "bench:preflight:h", "f", "v"), "zadd": ("ZADD", "bench:preflight:z", "1", "v"),
             "zpopmin": ("ZPOPMIN", "bench:preflight:z"), "mset": ("MSET", "bench:preflight", "v"),
             "lrange_100": ("LRANGE", "bench:preflight:l", "0", "99"),
             "lrange_300": ("LRANGE", "bench:preflight:l", "0", "299"),
             "lrange_600": ("LRANGE", "bench:preflight:l", "0", "599")}
RSS_VARIANTS = (("16 B values", 16, None), ("100 B values", 100, None),
                ("16 B values + EX 100000", 16, 100_000))
TARGET_TESTS = ("set", "get", "incr")  # the targets; other tests are shown, not judged
BENCH_BOUND = 0.9  # redis-benchmark CPU/wall above this: it, not the server, is the limit
STALL_TARGET_MS = 10.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("-n", type=int, default=1_000_000, help="requests per redis-benchmark run")
    ap.add_argument("--depths", default="1,16,128", help="pipeline depths (-P), comma-separated")
    ap.add_argument("--tests", default="set,get,incr", help="redis-benchmark tests (-t)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per measurement")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys per RSS load")
    ap.add_argument("--growth-keys", type=int, default=2_000_000, help="keys SET during the stall probe")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds to wait before reading RSS")
    ap.add_argument("--phases", default="bench,rss,stall", help="subset of bench,rss,stall")
    ap.add_argument("--quick", action="store_true",
                    help="fast sanity run: n=100k, keys=100k, rounds=1, growth-keys=200k")
    ap.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    ap.add_argument("--json", metavar="FILE", help="write results as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables as markdown")
    if "--quick" in (sys.argv[1:] if argv is None else argv):  # explicit flags still win
        ap.set_defaults(n=100_000, keys=100_000, rounds=1, growth_keys=200_000, settle=0.5)
    args = ap.parse_args(argv)
    args.depths = [int(d) for d in args.depths.split(",")]
    args.tests = [t.strip().lower() for t in args.tests.split(",")]
    args.phases = set(args.phases.split(","))
    return args


@contextlib.contextmanager
def started(name, pin):
    """A fresh server, pinned; killed on exit (including Ctrl-C / SIGTERM)."""
    with STARTERS[name]() as srv:
        pin.pin_server(srv.proc.pid)
        yield srv


# ---------------------------------------------------------------- 1. bench
def phase_bench(args, pin):
    """redis-benchmark per (round, depth, test), redis then volley each time.

    Both servers stay up for the whole phase (so GET and INCR find the keys
    SET left); a test whose command a server rejects in the pre-flight check
    is not run against that server and is reported as unsupported.
    """
    runs = collections.defaultdict(list)
    with contextlib.ExitStack() as stack:
        srvs = {name: stack.enter_context(started(name, pin)) for name in NAMES}
        unsupported = {}
        for name, srv in srvs.items():
            for test in args.tests:
                err = lib_load.preflight(srv, *PREFLIGHT.get(test, (test.upper(),)))
                if err:
                    unsupported[(test, name)] = err
                    log(f"[bench] {name}: {test.upper()} unsupported: {err}")
        for rnd in range(args.rounds):
            for depth in args.depths:
                for test in args.tests:
                    for name in NAMES:
                        if (test, name) in unsupported:
                            continue
                        if srvs[name].proc.poll() is not None:
                            runs[(test, depth, name)].append({"error": f"{name} died: {srvs[name].log()[-300:]}"})
                            continue
                        r = lib_load.run_benchmark(srvs[name], test, depth, args.n, pin, args.clients)
                        runs[(test, depth, name)].append(r)
                        log(f"[bench] round {rnd + 1}/{args.rounds} -P {depth:<3} {test.upper():4} {name:6} "
                            + (f"ERROR {r['error']}" if "error" in r else
                               f"{r['rps']:>10,.0f} rps  p99 {r['p99']:.3f} ms  "
                               f"server {r['server_ns_per_cmd']:.0f} ns/cmd  bench core {r['bench_core']:.2f}"))
    return runs, unsupported


def bench_summary(args, runs, unsupported):
    """Medians per (test, depth, server); a string instead when not measured."""
    out = {}
    for test in args.tests:
        for depth in args.depths:
            for name in NAMES:
                rs = runs.get((test, depth, name), [])
                ok = [r for r in rs if "error" not in r]
                if (test, name) in unsupported:
                    out[(test, depth, name)] = "unsupported"
                elif not ok:
                    out[(test, depth, name)] = "error"
                else:
                    keys = ("rps", "p50", "p95", "p99", "max", "server_ns_per_cmd", "bench_core")
                    out[(test, depth, name)] = {k: median([r[k] for r in ok]) for k in keys}
    subtract_lrange_prep(args, out)
    return out


def subtract_lrange_prep(args, summary):
    """redis-benchmark's LRANGE_* tests first run n LPUSHes on the same
    connection count and depth; take the LPUSH test's CPU out of theirs so
    the figure is LRANGE's alone (only possible when lpush ran too)."""
    for test in args.tests:
        if not test.startswith("lrange"):
            continue
        for depth in args.depths:
            for name in NAMES:
                cell, prep = summary.get((test, depth, name)), summary.get(("lpush", depth, name))
                if isinstance(cell, dict) and isinstance(prep, dict):
                    cell["server_ns_per_cmd"] -= prep["server_ns_per_cmd"]


def bench_tables(args, summary, targets):
    res_ns = 1e9 / lib_sys.CLK_TCK / args.n
    cpu = Table("Server CPU per command", "test", ["target", "status"], unit="ns/command, utime+stime")
    cpu.note(f"CPU time has a resolution of 1 tick ({1000 / lib_sys.CLK_TCK:.0f} ms) per run, "
             f"i.e. {res_ns:.0f} ns/command at n={args.n:,}")
    thr = Table("Throughput (redis-benchmark)", "test", ["bench core r/v", "status"], unit="requests/s")
    thr.note("bench core r/v: redis-benchmark's CPU / wall time during the redis / volley runs (1.00 = a full core)")
    if any(t.startswith("lrange") for t in args.tests):
        cpu.note("LRANGE_* rows: redis-benchmark runs n LPUSHes before each; their CPU is subtracted "
                 "when the lpush test ran in the same run" + ("" if "lpush" in args.tests else
                                                                " (it did not: figures include them)"))
    lat = Table("Latency (redis-benchmark)", "test / percentile", unit="ms")
    for test in args.tests:
        for depth in args.depths:
            label = f"{test.upper()} -P {depth}"
            r, v = summary[(test, depth, "redis")], summary[(test, depth, "volley")]
            judged = test in TARGET_TESTS
            limit = (0.8 if depth == 1 else 0.5 if depth >= 16 else None) if judged else None
            rc = ratio(get(v, "server_ns_per_cmd"), get(r, "server_ns_per_cmd")) \
                if isinstance(r, dict) and isinstance(v, dict) else None
            status = target(targets, f"CPU/command {label} <= {limit}x redis", rc, limit, "le",
                            None if rc is not None else why(r, v)) if limit else "-"
            cpu.add(label, get(r, "server_ns_per_cmd"), get(v, "server_ns_per_cmd"),
                    f"<= {limit}x" if limit else "-", status, digits=0)
            tr = ratio(get(v, "rps"), get(r, "rps")) if isinstance(r, dict) and isinstance(v, dict) else None
            bound = [n for n, s in (("redis", r), ("volley", v))
                     if isinstance(s, dict) and s["bench_core"] >= BENCH_BOUND]
            status = target(targets, f"throughput {label} >= redis", tr, 1.0, "ge",
                            None if tr is not None else why(r, v)) if judged else "-"
            if bound:
                status += " (bench-bound: " + ",".join(bound) + ")"
                thr.note(f"bench-bound: redis-benchmark used >= {BENCH_BOUND:.0%} of its core during that "
                         "server's runs, so the figure is the load generator's limit, not the server's")
            cores = "/".join(f"{s['bench_core']:.2f}" if isinstance(s, dict) else "-" for s in (r, v))
            thr.add(label, get(r, "rps"), get(v, "rps"), cores, status, digits=0)
            for pct in ("p50", "p99", "max"):
                lat.add(f"{label} {pct}", get(r, pct), get(v, pct), digits=3)
    return [cpu, thr, lat]


def get(summary_cell, key):
    return summary_cell[key] if isinstance(summary_cell, dict) else summary_cell


def why(redis_cell, volley_cell):
    state = lambda c: "ok" if isinstance(c, dict) else c  # noqa: E731
    return f"redis {state(redis_cell)}, volley {state(volley_cell)}"


def target(targets, what, value, limit, op, untested=None):
    """Record one target; return 'met', 'MISSED' or 'untested'."""
    if value is None:
        status = "untested"
    else:
        status = "met" if (value <= limit if op == "le" else value >= limit) else "MISSED"
    targets.append({"target": what, "value": value, "status": status, "why_untested": untested})
    return status


# ---------------------------------------------------------------- 2. rss
def phase_rss(args, pin, tmp):
    """RSS growth per key: fresh server, VmRSS before, --keys SETs via redis-cli --pipe, VmRSS after."""
    results = collections.defaultdict(list)
    for label, value_len, ttl in RSS_VARIANTS:
        path = os.path.join(tmp, "rss.resp")
        lib_load.write_set_payload(path, args.keys, value_len, ttl)
        for rnd in range(args.rounds):
            for name in NAMES:
                with started(name, pin) as srv:
                    probe = ("SET", "bench:preflight", "v") + (("EX", str(ttl)) if ttl else ())
                    err = lib_load.preflight(srv, *probe)
                    if err:
                        results[(label, name)].append({"error": f"unsupported: {err}"})
                        log(f"[rss] round {rnd + 1}/{args.rounds} {label:24} {name:6} unsupported: {err}")
                        continue
                    time.sleep(args.settle)
                    before = lib_sys.rss_bytes(srv.proc.pid)
                    load = lib_load.pipe_load(srv, path, args.keys, pin)
                    time.sleep(args.settle)
                    after = lib_sys.rss_bytes(srv.proc.pid)
                    r = {"rss_before": before, "rss_after": after,
                         "bytes_per_key": (after - before) / args.keys, **load}
                    if load["error"]:
                        r["error"] = load["error"]
                    results[(label, name)].append(r)
                    log(f"[rss] round {rnd + 1}/{args.rounds} {label:24} {name:6} "
                        + (f"ERROR {r['error']}" if r.get("error") else
                           f"{r['bytes_per_key']:.1f} B/key (RSS {before >> 20} -> {after >> 20} MiB, "
                           f"{load['wall_s']:.1f} s)"))
        os.unlink(path)
    return results


def rss_table(args, results, targets):
    t = Table(f"RSS growth per key, {args.keys:,} keys key:%012d", "values", ["target", "status"],
              unit="bytes/key")
    for label, _, _ in RSS_VARIANTS:
        cells = {}
        for name in NAMES:
            ok = [r["bytes_per_key"] for r in results.get((label, name), []) if not r.get("error")]
            errs = [r["error"] for r in results.get((label, name), []) if r.get("error")]
            cells[name] = median(ok) if ok else ("unsupported" if errs and errs[0].startswith("unsupported")
                                                 else "error" if errs else "-")
        rr = ratio(cells["volley"], cells["redis"]) if not any(isinstance(c, str) for c in cells.values()) \
            else None
        if label != RSS_VARIANTS[0][0]:
            # The issue asks for these to be reported; only 16 B values have a target.
            t.add(label, cells["redis"], cells["volley"], "report", "", digits=1)
            continue
        status = target(targets, f"RSS/key ({label}) <= 0.6x redis", rr, 0.6, "le",
                        None if rr is not None else f"redis {fmt(cells['redis'])}, volley {fmt(cells['volley'])}")
        t.add(label, cells["redis"], cells["volley"], "<= 0.6x", status, digits=1)
    t.note(f"VmRSS read {args.settle:g} s after the load; growth = after - before, divided by the key count")
    return t


# ---------------------------------------------------------------- 3. stall
def phase_stall(args, pin, tmp):
    """Longest PING round trip while --growth-keys new keys are SET through a pipe."""
    path = os.path.join(tmp, "growth.resp")
    lib_load.write_set_payload(path, args.growth_keys)
    results = collections.defaultdict(list)
    for rnd in range(args.rounds):
        for name in NAMES:
            with started(name, pin) as srv:
                err = lib_load.preflight(srv, "SET", "bench:preflight", "v")
                if err:
                    results[name].append({"error": f"unsupported: {err}"})
                    log(f"[stall] round {rnd + 1}/{args.rounds} {name:6} unsupported: {err}")
                    continue
                probe = lib_load.PingProbe(srv)
                probe.start()
                time.sleep(0.2)
                waited = runqueue_wait_s(srv.proc.pid)
                load = lib_load.pipe_load(srv, path, args.growth_keys, pin)
                waited = runqueue_wait_s(srv.proc.pid) - waited
                r = {**probe.stop(), "load_s": load["wall_s"], "load_error": load["error"],
                     "cpu_wait_ms": waited * 1000}
                if load["error"] or r["error"]:
                    r["error"] = load["error"] or r["error"]
                results[name].append(r)
                log(f"[stall] round {rnd + 1}/{args.rounds} {name:6} "
                    + (f"ERROR {r['error']}" if r.get("error") else
                       f"max {r['max_ms']:.2f} ms  p99.9 {r['p999_ms']:.2f} ms  "
                       f"(own max {r['own_max_ms']:.2f} ms; wall max {r['wall_max_ms']:.2f} ms; "
                       f"waited {r['cpu_wait_ms']:.0f} ms for a CPU; "
                       f"{r['samples']} pings over {load['wall_s']:.1f} s)"))
    os.unlink(path)
    return results


def runqueue_wait_s(pid):
    """Seconds the server's main thread has spent runnable but waiting for a
    CPU (/proc/PID/schedstat, field 2): time other processes held its core,
    which the probe sees as stalls that are not the server's doing."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def stall_table(args, results, targets):
    t = Table(f"PING round trip during a {args.growth_keys:,}-key SET load", "statistic", ["status"], unit="ms")
    rows = {}
    for stat in ("max_ms", "p999_ms", "p99_ms", "median_ms", "own_max_ms", "own_p999_ms", "wall_max_ms",
                 "wall_p999_ms", "cpu_wait_ms", "load_s"):
        cells = {}
        for name in NAMES:
            rs = results.get(name, [])
            ok = [r[stat] for r in rs if not r.get("error") and stat in r]
            cells[name] = median(ok) if ok else ("unsupported" if rs and rs[0]["error"].startswith("unsupported")
                                                 else "error")
        rows[stat] = cells
    v = rows["max_ms"]["volley"]
    status = target(targets, f"longest stall <= {STALL_TARGET_MS:g} ms", v if not isinstance(v, str) else None,
                    STALL_TARGET_MS, "le", None if not isinstance(v, str) else f"volley {v}")
    labels = {"max_ms": "longest stall (max)", "p999_ms": "p99.9", "p99_ms": "p99", "median_ms": "median",
              "own_max_ms": "max minus server's CPU wait", "own_p999_ms": "p99.9 minus server's CPU wait",
              "wall_max_ms": "max incl. probe wake-up", "wall_p999_ms": "p99.9 incl. probe wake-up",
              "cpu_wait_ms": "server waited for a CPU (total)", "load_s": "load duration (s)"}
    for stat, cells in rows.items():
        t.add(labels[stat], cells["redis"], cells["volley"], status if stat == "max_ms" else "", digits=2)
    worst = {n: max((r["max_ms"] for r in results.get(n, []) if not r.get("error")), default=None) for n in NAMES}
    untimed = sum(r.get("untimestamped", 0) for rs in results.values() for r in rs if not r.get("error"))
    t.note(f"medians over {args.rounds} round(s); worst single round: redis {fmt_value(worst['redis'])} ms, "
           f"volley {fmt_value(worst['volley'])} ms. A round trip ends at the kernel's receive timestamp "
           "of the reply (SO_TIMESTAMPNS), so the probe thread's own wake-up delay (an unpinned Python "
           "thread) is left out; the 'incl. probe wake-up' rows keep it. The server's core is shared with "
           "whatever else runs on the machine, for both servers alike; the 'minus CPU wait' rows subtract, "
           "per round trip, the time the server's main thread waited for a CPU meanwhile "
           f"(/proc/PID/schedstat). Untimestamped replies: {untimed}")
    return t


# ---------------------------------------------------------------- main
def render(tables, targets, meta):
    text = [t.text() for t in tables]
    md = [t.markdown() for t in tables]
    summ = ["Targets (issue: Volley core performance)", "-" * 40]
    summ += [f"  {x['status']:9} {x['target']}  (value {fmt_value(x['value'])})"
             + (f" [{x['why_untested']}]" if x["why_untested"] else "") for x in targets]
    counts = collections.Counter(x["status"] for x in targets)
    summ.append(f"  => {counts['met']} met, {counts['MISSED']} MISSED, {counts['untested']} untested")
    md.append("**Targets**\n\n| target | value | status |\n|---|---:|---|\n" + "\n".join(
        f"| {x['target']} | {fmt_value(x['value'])} | {x['status']} |" for x in targets))
    head = (f"volley {meta['volley_bin']} vs redis-server {meta['redis_version']}; {meta['pinning']}; "
            f"loadavg at start {' '.join(meta['loadavg_start'])}, at end {' '.join(meta['loadavg_end'])}")
    return "\n\n".join([head] + text + ["\n".join(summ)]), f"_{head}_\n\n" + "\n\n".join(md) + "\n"


def fmt_value(v):
    return "-" if v is None else f"{v:.3f}"


def _interrupt(*_):
    raise KeyboardInterrupt


def main(argv=None):
    args = parse_args(argv)
    # Ctrl-C and SIGTERM both unwind through the context managers, which kill every
    # server; SIGINT explicitly too, since a shell may start a background job with it ignored.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    meta = {"volley_bin": servers.volley_bin(), "redis_bin": servers.redis_bin(), "pinning": pin.describe(),
            "redis_version": subprocess.run([servers.redis_bin(), "--version"], capture_output=True,
                                            text=True).stdout.split()[2].removeprefix("v="),
            "args": {k: sorted(v) if isinstance(v, set) else v for k, v in vars(args).items()},
            "cpus": os.cpu_count(), "loadavg_start": lib_sys.loadavg(), "started": time.strftime("%FT%T%z")}
    if not os.path.exists(meta["volley_bin"]):
        sys.exit(f"volley-server not found at {meta['volley_bin']}: cargo build --release -p volley-server "
                 "or set VOLLEY_SERVER_BIN")
    log(f"[compare] {pin.describe()}")
    tables, targets, raw = [], [], {}
    with tempfile.TemporaryDirectory(prefix="volley-bench-") as tmp:
        if "bench" in args.phases:
            runs, unsupported = phase_bench(args, pin)
            tables += bench_tables(args, bench_summary(args, runs, unsupported), targets)
            raw["bench"] = {f"{t} -P {d} {n}": rs for (t, d, n), rs in runs.items()}
            raw["unsupported"] = {f"{t} {n}": e for (t, n), e in unsupported.items()}
        if "rss" in args.phases:
            rss = phase_rss(args, pin, tmp)
            tables.append(rss_table(args, rss, targets))
            raw["rss"] = {f"{label} {n}": rs for (label, n), rs in rss.items()}
        if "stall" in args.phases:
            stall = phase_stall(args, pin, tmp)
            tables.append(stall_table(args, stall, targets))
            raw["stall"] = dict(stall)
    meta["loadavg_end"] = lib_sys.loadavg()
    text, md = render(tables, targets, meta)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "tables": [t.as_dict() for t in tables], "targets": targets, "raw": raw},
                      f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    return 0 if targets and all(x["status"] == "met" for x in targets) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("[compare] interrupted; servers stopped")
        sys.exit(130)
