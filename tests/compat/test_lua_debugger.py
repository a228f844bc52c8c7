"""The Lua debugger (SCRIPT DEBUG) driven by redis-cli's --ldb-sync-mode
(the session runs in the server, its changes stay) and --ldb (a forked
session: the server goes on, the script's changes are thrown away), over
TCP and TLS. redis-cli reads the debugger commands from stdin and prints
each reply's log lines; the tests pin those lines."""
import re

import pytest
from servers import free_port

from .conftest import START, TARGET, cli, make_certs, run, tls_server_args

SCRIPT = """\
local key = KEYS[1]
local items = {ARGV[1], 'two', {n = 3}}
redis.call('set', key, ARGV[1])
redis.debug('items', items, #items)
redis.breakpoint()
local got = redis.call('get', key)
return got .. '!'
"""

# Breakpoint at line 3, continue to it, print locals, a command of our own,
# step over line 3 (its call is logged), continue to redis.breakpoint().
COMMANDS = ["b 3", "c", "p", "p items", "r incr counter", "e 6 * 7", "s", "c", "t", "c"]

EXPECTED = [
    "* Stopped at 1, stop reason = step over",
    "-> 1   local key = KEYS[1]",
    "   2   local items = {ARGV[1], 'two', {n = 3}}",
    "  #3   redis.call('set', key, ARGV[1])",
    "   4   redis.debug('items', items, #items)",
    "* Stopped at 3, stop reason = break point",
    "->#3   redis.call('set', key, ARGV[1])",
    '<value> key = "dbg:key"',
    '<value> items = {"one"; "two"; {["n"]=3}}',
    '<value> {"one"; "two"; {["n"]=3}}',
    "<redis> incr counter",
    "<reply> 1",
    "<retval> 42",
    "<redis> set dbg:key one",
    '<reply> "+OK"',
    "* Stopped at 4, stop reason = step over",
    "-> 4   redis.debug('items', items, #items)",
    '<debug> line 4: "items", {"one"; "two"; {["n"]=3}}, 3',
    "* Stopped at 6, stop reason = redis.breakpoint() called",
    "-> 6   local got = redis.call('get', key)",
    "In top level:",
    "-> 6   local got = redis.call('get', key)",
    "",
    '"one!"',
    "",
]

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def debug_session(srv, tmp_path, mode, *extra, tls=False):
    """Run SCRIPT with redis-cli in debugger mode `mode`, feeding COMMANDS;
    the lines it prints after its banner, without colours."""
    script = tmp_path / "script.lua"
    script.write_text(SCRIPT)
    argv = ["redis-cli", "-h", srv.host, "-p", str(srv.port), *extra,
            mode, "--eval", str(script), "dbg:key", ",", "one"]
    proc = run(argv, input="\n".join(COMMANDS) + "\n", timeout=30, check=False)
    lines = [ANSI.sub("", line) for line in proc.stdout.splitlines()]
    start = lines.index("* Stopped at 1, stop reason = step over")
    end = [i for i, line in enumerate(lines) if line.startswith("(Lua debugging session ended")]
    if not end and tls and proc.returncode == -13:
        # Over TLS redis-cli may die of SIGPIPE right after printing the
        # script's reply: it writes COMMAND DOCS on the connection the
        # session's end closed, then its TLS shutdown meets the reset.
        return lines[start:] + [""], None
    assert proc.returncode == 0 and end, (proc.returncode, lines)
    return lines[start:end[0]], lines[end[0]]


def test_sync_session_keeps_its_changes(server, tmp_path):
    assert debug_session(server, tmp_path, "--ldb-sync-mode") == (EXPECTED, "(Lua debugging session ended)")
    # The session blocked the server; its writes stay, the server goes on.
    assert cli(server, "GET", "dbg:key").stdout == "one\n"
    assert cli(server, "GET", "counter").stdout == "1\n"
    assert cli(server, "PING").stdout == "PONG\n"


def test_forked_session_rolls_back(server, tmp_path):
    ended = "(Lua debugging session ended -- dataset changes rolled back)"
    assert debug_session(server, tmp_path, "--ldb") == (EXPECTED, ended)
    # The session ran in a child: nothing it wrote reached the server.
    assert cli(server, "EXISTS", "dbg:key", "counter").stdout == "0\n"
    assert cli(server, "PING").stdout == "PONG\n"


def test_session_over_tls(tmp_path):
    certs = make_certs(tmp_path)
    tls_port = free_port()
    with START(*tls_server_args(certs, tls_port)) as srv:
        tls = ["--tls", "--cacert", str(certs / "ca.crt"), "--cert", str(certs / "client.crt"),
               "--key", str(certs / "client.key")]
        plain_port, srv.port = srv.port, tls_port
        # Forked: the child carries on with the client's TLS session.
        # (redis-server 7.0.15 cannot: its parent ends that session with
        # close_notify as it drops the client, so redis-cli sees a close.)
        if TARGET != "redis":
            lines, ended = debug_session(srv, tmp_path, "--ldb", *tls, tls=True)
            assert lines == EXPECTED
            assert ended in (None, "(Lua debugging session ended -- dataset changes rolled back)")
        lines, _ = debug_session(srv, tmp_path, "--ldb-sync-mode", *tls, tls=True)
        assert lines == EXPECTED
        srv.port = plain_port
        assert cli(srv, "GET", "dbg:key").stdout == "one\n"


def test_script_debug_errors(server):
    assert cli(server, "SCRIPT", "DEBUG", "maybe", check=False).stdout == "ERR Use SCRIPT DEBUG YES/SYNC/NO\n\n"
    out = cli(server, "EVAL", "return redis.call('script', 'debug', 'sync')", "0", check=False).stdout
    assert out.startswith("ERR This Redis command is not allowed from script"), out
    # Replies already waiting (a pipeline) refuse it, as in Redis.
    proto = "PING\r\nSCRIPT DEBUG SYNC\r\n"
    piped = run(["redis-cli", "-h", server.host, "-p", str(server.port), "--pipe"], input=proto, check=False)
    assert "errors: 1, replies: 2" in piped.stdout, piped.stdout
    assert piped.stderr == "ERR SCRIPT DEBUG must be called outside a pipeline\n"


@pytest.mark.parametrize("mode", ["sync", "yes"])
def test_client_gone_mid_session(server, mode):
    """A client that closes while stopped: the script runs to its end
    (SYNC keeps its writes) and the server serves others again."""
    body = "redis.call('set','gone','1') return 'x'"
    proto = (f"*3\r\n$6\r\nSCRIPT\r\n$5\r\nDEBUG\r\n${len(mode)}\r\n{mode}\r\n"
             f"*3\r\n$4\r\nEVAL\r\n${len(body)}\r\n{body}\r\n$1\r\n0\r\n")
    out = run(["timeout", "3", "nc", "-q1", server.host, str(server.port)], input=proto, check=False).stdout
    assert "* Stopped at 1, stop reason = step over" in out, out
    assert cli(server, "PING").stdout == "PONG\n"
    assert cli(server, "EXISTS", "gone").stdout == ("1\n" if mode == "sync" else "0\n")
