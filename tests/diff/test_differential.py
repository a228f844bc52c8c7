"""Differential test: random command sequences give byte-identical replies on
redis-server 7.0 (side A, the reference) and volley-server (side B).

This module owns running sequences on two servers and comparing replies:
  * `same_reply` — byte equality plus a few normalizers keyed by command name
    (TTL-family tolerance, sorted KEYS);
  * `run_seed`   — one seed, command by command or as one pipelined write,
    RESP2 or RESP3; returns a failure report or None;
  * pytest tests — one redis + one target server per module;
  * a CLI for debugging by hand against already running servers:
      python3 tests/diff/test_differential.py --seed 7 --port-a 6379 --port-b 6380

Env: VOLLEY_TEST_TARGET=redis makes side B a second redis-server (validates
the harness: any mismatch then means the generator is nondeterministic).
DIFF_SEEDS / DIFF_COUNT override the number of seeds / commands per seed;
DIFF_GROUPS=strings,keys restricts the command groups (default: all).
"""
import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "support")]

from generator import Gen  # noqa: E402
from resp_wire import Conn, reply_end  # noqa: E402

N_SEEDS = int(os.environ.get("DIFF_SEEDS", "40"))
COUNT = int(os.environ.get("DIFF_COUNT", "300"))
GROUPS = [g for g in os.environ.get("DIFF_GROUPS", "").split(",") if g] or None
RESP3_SEEDS = [10_000 + i for i in range(4)]
HISTORY = 5

# ------------------------------------------------------------- normalizers
# Replies that legitimately depend on the wall clock: relative TTLs are set
# at slightly different instants on the two servers (and a pipelined run of
# side A finishes before side B starts), so allow a small skew. Negative
# values (-1 no expiry, -2 no key) must match exactly.
TOLERANCE = {b"TTL": 1, b"EXPIRETIME": 1, b"PTTL": 1500, b"PEXPIRETIME": 1500}


def _int_reply(raw):
    return int(raw[1:-2]) if raw[:1] == b":" else None


def _array_elements(raw):
    """Split a '*N' / '~N' / '%N' reply into (header, [raw element, ...])."""
    if raw[:1] not in (b"*", b"~", b"%"):
        return raw, []
    head_end = raw.index(b"\r\n") + 2
    items, pos = [], head_end
    while pos < len(raw):
        end = reply_end(raw, pos)
        items.append(raw[pos:end])
        pos = end
    return raw[:head_end], items


# Replies in hash-table order (value = elements per item: 2 for field/value
# pairs); compared as sorted multisets of items.
UNORDERED = {b"HGETALL": 2, b"HKEYS": 1, b"HVALS": 1, b"SMEMBERS": 1, b"SINTER": 1,
             b"SUNION": 1, b"SDIFF": 1, b"SPOP": 1}
# Cursor + elements: the cursor must match, the elements are compared sorted.
SCANS = {b"HSCAN": 2, b"SSCAN": 1}
# Random picks: only the reply's type and length must match.
RANDOM_SHAPE = {b"HRANDFIELD", b"SRANDMEMBER"}


def _items(raw, width):
    head, elems = _array_elements(raw)
    if head[:1] == b"%":
        width = 2
    return head, sorted(tuple(elems[i:i + width]) for i in range(0, len(elems), width))


def _same_unordered(name, a, b):
    if name in UNORDERED:
        return a[:1] in b"*~%" and _items(a, UNORDERED[name]) == _items(b, UNORDERED[name])
    if name in SCANS:
        (ha, [ca, ea]), (hb, [cb, eb]) = _array_elements(a), _array_elements(b)
        return ha == hb and ca == cb and _items(ea, SCANS[name]) == _items(eb, SCANS[name])
    if name in RANDOM_SHAPE:
        if a[:1] != b[:1] or a[:1] in b"-:":
            return False
        return a[:1] not in b"*~" or a.split(b"\r\n", 1)[0] == b.split(b"\r\n", 1)[0]
    return False


def same_reply(cmd, a, b):
    """True if replies a and b to cmd count as identical."""
    if a == b:
        return True
    name = cmd[0].upper()
    tol = TOLERANCE.get(name)
    if tol is not None:
        x, y = _int_reply(a), _int_reply(b)
        return x is not None and y is not None and x >= 0 and y >= 0 and abs(x - y) <= tol
    if name == b"KEYS":           # key order is hash-table order: compare as a set
        ha, ia = _array_elements(a)
        hb, ib = _array_elements(b)
        return ha == hb and sorted(ia) == sorted(ib)
    if a[:1] != b"-":
        try:
            return _same_unordered(name, a, b)
        except ValueError:         # not the reply shape the normalizer expects
            return False
    return False


# ------------------------------------------------------------- running
def _clip(raw, n=400):
    r = repr(raw)
    return r if len(r) <= n else r[:n] + f"... ({len(raw)} bytes)"


def _report(seed, mode, i, cmds, ra, rb, note=""):
    lines = [f"seed={seed} mode={mode} index={i}/{len(cmds)} {note}".rstrip()]
    for j in range(max(0, i - HISTORY), i):
        lines.append(f"  [{j}] {cmds[j]!r} -> A {_clip(ra[j], 120)}")
    lines.append(f"  [{i}] {cmds[i]!r}")
    lines.append(f"    A (redis):  {_clip(ra[i]) if i < len(ra) else '<no reply>'}")
    lines.append(f"    B (target): {_clip(rb[i]) if i < len(rb) else '<no reply>'}")
    return "\n".join(lines)


def _prepare(conn, resp3):
    if resp3:
        hello = conn.call("HELLO", "3")     # content has server name/id: not compared
        assert hello[:1] == b"%", f"HELLO 3 did not return a map: {_clip(hello)}"
    for name, default in (("hash-max-listpack-entries", "512"), ("hash-max-listpack-value", "64"),
                          ("set-max-intset-entries", "512")):
        assert conn.call("CONFIG", "SET", name, default) == b"+OK\r\n"
    ok = conn.call("FLUSHALL")
    assert ok == b"+OK\r\n", f"FLUSHALL failed: {_clip(ok)}"


def run_seed(addr_a, addr_b, seed, count=COUNT, pipeline=False, resp3=False, groups=GROUPS):
    """Run one seed on fresh connections; return None or a failure report."""
    cmds = Gen(seed).sequence(count, groups)
    mode = ("pipe" if pipeline else "seq") + ("+resp3" if resp3 else "")
    ra, rb = [], []
    try:
        with Conn(*addr_a) as a, Conn(*addr_b) as b:
            _prepare(a, resp3)
            _prepare(b, resp3)
            if pipeline:
                a.send_pipeline(cmds, ra)
                b.send_pipeline(cmds, rb)
            else:
                for i, cmd in enumerate(cmds):
                    a.send(cmd)
                    b.send(cmd)
                    ra.append(a.read_reply())
                    rb.append(b.read_reply())
                    if not same_reply(cmd, ra[i], rb[i]):
                        break
    except (OSError, ValueError) as e:   # ConnectionError, timeout, ProtocolError
        i = min(len(ra), len(rb), len(cmds) - 1)
        return _report(seed, mode, i, cmds, ra, rb, f"ERROR {type(e).__name__}: {e}")
    for i, cmd in enumerate(cmds[:len(rb)]):
        if not same_reply(cmd, ra[i], rb[i]):
            return _report(seed, mode, i, cmds, ra, rb)
    return None


# ------------------------------------------------------------- pytest
def _cases():
    cases = [(s, s % 2 == 1, False) for s in range(N_SEEDS)]
    cases += [(s, s % 2 == 1, True) for s in RESP3_SEEDS]
    return cases


def _case_id(case):
    seed, pipeline, resp3 = case
    return f"{seed}-{'pipe' if pipeline else 'seq'}{'-resp3' if resp3 else ''}"


try:
    import pytest
except ImportError:       # CLI use without pytest installed
    pytest = None

if pytest is not None:
    from servers import start_redis, start_volley, volley_bin

    @pytest.fixture(scope="module")
    def servers():
        target = os.environ.get("VOLLEY_TEST_TARGET", "volley")
        if target not in ("volley", "redis"):
            pytest.fail(f"VOLLEY_TEST_TARGET must be 'volley' or 'redis', not {target!r}")
        if target == "volley" and not os.path.exists(volley_bin()):
            pytest.fail(f"volley-server not built at {volley_bin()} (cargo build --release, "
                        "or VOLLEY_SERVER_BIN=..., or VOLLEY_TEST_TARGET=redis)")
        with start_redis() as a, (start_redis() if target == "redis" else start_volley()) as b:
            yield a, b

    @pytest.mark.parametrize("case", _cases(), ids=_case_id)
    def test_differential(servers, case):
        a, b = servers
        for srv, side in ((a, "A (redis)"), (b, "B (target)")):
            if srv.proc.poll() is not None:
                pytest.fail(f"{side} server exited with {srv.proc.returncode}; log:\n{srv.log()[-2000:]}")
        seed, pipeline, resp3 = case
        report = run_seed((a.host, a.port), (b.host, b.port), seed, COUNT, pipeline, resp3)
        if report:
            if b.proc.poll() is not None:
                report += f"\nB exited with {b.proc.returncode}; log tail:\n{b.log()[-2000:]}"
            pytest.fail(report, pytrace=False)


# ------------------------------------------------------------- CLI
def main(argv=None):
    p = argparse.ArgumentParser(description="Run one differential seed against two running "
                                "servers (FLUSHALLs both first).")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=COUNT)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port-a", type=int, required=True, help="reference redis-server")
    p.add_argument("--port-b", type=int, required=True, help="server under test")
    p.add_argument("--pipeline", action="store_true")
    p.add_argument("--resp3", action="store_true")
    p.add_argument("--print", action="store_true", help="only print the command sequence")
    args = p.parse_args(argv)
    if args.print:
        for i, cmd in enumerate(Gen(args.seed).sequence(args.count, GROUPS)):
            print(i, cmd)
        return 0
    report = run_seed((args.host, args.port_a), (args.host, args.port_b), args.seed,
                      args.count, args.pipeline, args.resp3)
    print(report or f"seed {args.seed}: {args.count} commands, all replies identical")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main())
