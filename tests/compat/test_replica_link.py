"""A primary's side of a replica's link, on Volley and on redis-server
7.0.15 alike: a client that turned into a replica (SYNC or PSYNC) and then
sends a command that would be answered is disconnected, the reply never
reaching the link (it would be read as part of the replication stream),
with Redis's log lines; a keyspace command gets "Replica can't interact
with the keyspace" (logged as an error sent to a replica), and so does a
MONITOR connection's, which Redis flags as a replica too."""
import socket
import time

import pytest

from servers import start_redis, start_volley, wait_for

STARTERS = {"volley": start_volley, "redis": start_redis}


def command(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_until_closed(sock, timeout=10):
    """Everything the server sends until it closes the connection."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"the link stayed open; got {data[:200]!r}")


@pytest.mark.parametrize("kind", sorted(STARTERS))
@pytest.mark.parametrize("sync,cmd,name,keyspace", [
    (("SYNC",), ("PING",), "ping", False),
    (("SYNC",), ("XINFO", "HELP"), "xinfo|help", False),
    (("PSYNC", "replicationid", "-1"), ("GET", "foo"), "get", True),
    (("PSYNC", "replicationid", "-1"), ("SLOWLOG", "GET"), "slowlog|get", False),
])
def test_replica_that_gets_a_reply_is_disconnected(kind, sync, cmd, name, keyspace):
    with STARTERS[kind]("--save", "") as srv:
        with socket.create_connection((srv.host, srv.port), timeout=10) as s:
            s.sendall(command(*sync))
            time.sleep(0.2)
            s.sendall(command(*cmd))
            data = read_until_closed(s)
        # The link carried the snapshot (after +FULLRESYNC for PSYNC) and
        # nothing that answers the command.
        assert data.startswith(b"+FULLRESYNC " if sync[0] == "PSYNC" else b"$"), data[:80]
        assert b"REDIS00" in data
        for reply in (b"+PONG", b"-ERR", b"$-1\r\n", b"*1\r\n"):
            assert reply not in data[data.index(b"REDIS00"):], reply
        wait_for(lambda: f"Replica generated a reply to command '{name}', disconnecting it: id=" in srv.log(),
                 "the disconnection's log line", 10)
        line = next(ln for ln in srv.log().splitlines() if "Replica generated a reply" in ln)
        assert " flags=S " in line and f" cmd={name} " in line
        critical = ("== CRITICAL == This master is sending an error to its replica: "
                    f"'Replica can't interact with the keyspace' after processing the command '{name}'")
        assert (critical in srv.log()) == keyspace
        # The server carries on.
        with socket.create_connection((srv.host, srv.port), timeout=10) as c:
            c.sendall(command("PING"))
            assert c.recv(100) == b"+PONG\r\n"


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_monitor_connection_cannot_touch_the_keyspace(kind):
    with STARTERS[kind]("--save", "") as srv:
        with socket.create_connection((srv.host, srv.port), timeout=10) as s:
            s.sendall(command("MONITOR"))
            time.sleep(0.2)
            s.sendall(command("GET", "foo") + command("SET", "foo", "1"))
            data = b""
            while data.count(b"\r\n") < 3:
                chunk = s.recv(1000)
                assert chunk, data
                data += chunk
        assert data == b"+OK\r\n" + b"-ERR Replica can't interact with the keyspace\r\n" * 2
        assert "Replica generated a reply" not in srv.log()
