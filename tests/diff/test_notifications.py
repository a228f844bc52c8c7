"""Differential test of keyspace notifications: the random command sequences
of generator.py run on redis-server 7.0 (side A) and volley-server (side B)
with `notify-keyspace-events KEAnm`, a subscriber on each side listening to
every keyspace and keyevent channel, and the messages each command caused
compared one command at a time: same events, same order, same channels.

After each command the commanding connection publishes a marker on a plain
channel the subscriber also listens to; the messages read before the marker
are that command's. Replies themselves are the other differential test's
business and are not compared here.

    python3 -m pytest -q tests/diff/test_notifications.py
    DIFF_GROUPS=lists python3 tests/diff/test_notifications.py --seed 3 --port-a 6379 --port-b 6380
"""
import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "support")]

from generator import Gen  # noqa: E402
from resp_wire import Conn  # noqa: E402

N_SEEDS = int(os.environ.get("DIFF_SEEDS", "12"))
COUNT = int(os.environ.get("DIFF_COUNT", "200"))
GROUPS = [g for g in os.environ.get("DIFF_GROUPS", "").split(",") if g] or None
MARKER = b"__volley_diff_marker"
# Commands whose notifications depend on the wall clock or on nothing the
# two servers share (none so far); their events are not compared.
UNCOMPARED = set()
# Commands that look keys up in the order of a set's members (SORT's BY and
# GET patterns), which is each server's own hash order (Redis's seed is random
# per process): their events are compared as multisets.
UNORDERED = {b"SORT", b"SORT_RO"}


def _parts(raw):
    """The bulk strings of one RESP2 message array (flat)."""
    out, pos = [], raw.index(b"\r\n") + 2
    while pos < len(raw):
        assert raw[pos:pos + 1] in (b"$", b":"), raw
        end = raw.index(b"\r\n", pos)
        if raw[pos:pos + 1] == b":":
            out.append(raw[pos + 1:end])
            pos = end + 2
            continue
        n = int(raw[pos + 1:end])
        out.append(raw[end + 2:end + 2 + n])
        pos = end + 2 + n + 2
    return out


class Side:
    """One server: a commanding connection and a subscriber."""

    def __init__(self, host, port):
        self.cmd = Conn(host, port)
        self.sub = Conn(host, port)
        self.in_multi = False

    def __enter__(self):
        self.cmd.__enter__()
        self.sub.__enter__()
        assert self.cmd.call("FLUSHALL") == b"+OK\r\n"
        assert self.cmd.call("CONFIG", "SET", "notify-keyspace-events", "KEAnm") == b"+OK\r\n"
        for name, default in (("hash-max-listpack-entries", "512"), ("hash-max-listpack-value", "64"),
                              ("set-max-intset-entries", "512")):
            assert self.cmd.call("CONFIG", "SET", name, default) == b"+OK\r\n"
        self.sub.send([b"PSUBSCRIBE", b"__keyspace@*", b"__keyevent@*"])
        self.sub.read_reply()
        self.sub.read_reply()
        self.sub.send([b"SUBSCRIBE", MARKER])
        self.sub.read_reply()
        return self

    def __exit__(self, *exc):
        try:
            self.cmd.call("CONFIG", "SET", "notify-keyspace-events", "")
        finally:
            self.sub.__exit__(*exc)
            self.cmd.__exit__(*exc)

    def run(self, cmd, i):
        """Run one command; return its notifications as (channel, payload).
        Inside MULTI the marker would only be queued: events then show up
        with EXEC's."""
        self.cmd.send(cmd)
        self.cmd.read_reply()
        name = cmd[0].upper() if cmd else b""
        if name == b"MULTI":
            self.in_multi = True
        elif name in (b"EXEC", b"DISCARD", b"RESET"):
            self.in_multi = False
        if self.in_multi:
            return []
        self.cmd.call("PUBLISH", MARKER, str(i))
        got = []
        while True:
            parts = _parts(self.sub.read_reply())
            if parts[0] == b"message" and parts[1] == MARKER:
                assert parts[2] == str(i).encode(), (parts, i)
                return got
            got.append((parts[-2], parts[-1]))


def run_seed(addr_a, addr_b, seed, count=COUNT, groups=GROUPS):
    """One seed; None, or a report of the first command whose events differ."""
    cmds = Gen(seed).sequence(count, groups)
    flat = cmds
    with Side(*addr_a) as a, Side(*addr_b) as b:
        for i, cmd in enumerate(flat):
            ea, eb = a.run(cmd, i), b.run(cmd, i)
            name = cmd[0].upper() if cmd else b""
            if name in UNORDERED:
                ea, eb = sorted(ea), sorted(eb)
            if ea != eb and name not in UNCOMPARED:
                before = "\n".join(f"  [{j}] {flat[j]!r}" for j in range(max(0, i - 4), i))
                return (f"seed {seed}: notifications differ at command {i}: {cmd!r}\n{before}\n"
                        f"  A (redis):  {ea!r}\n  B (target): {eb!r}")
    return None


try:
    import pytest
except ImportError:
    pytest = None

if pytest is not None:
    from servers import start_redis, start_volley, volley_bin

    @pytest.fixture(scope="module")
    def servers():
        if not os.path.exists(volley_bin()):
            pytest.fail(f"volley-server not built at {volley_bin()}")
        with start_redis() as a, start_volley() as b:
            yield a, b

    @pytest.mark.parametrize("seed", range(N_SEEDS))
    def test_notifications(servers, seed):
        a, b = servers
        report = run_seed((a.host, a.port), (b.host, b.port), 50_000 + seed)
        if report:
            pytest.fail(report, pytrace=False)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=50_000)
    p.add_argument("--count", type=int, default=COUNT)
    p.add_argument("--port-a", type=int, required=True)
    p.add_argument("--port-b", type=int, required=True)
    a = p.parse_args(argv)
    report = run_seed(("127.0.0.1", a.port_a), ("127.0.0.1", a.port_b), a.seed, a.count)
    print(report or "same notifications")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main())
