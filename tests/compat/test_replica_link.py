"""A primary's replicas and a replica's load, on Volley and on redis-server
7.0.15 alike.

- A client that turned into a replica (SYNC or PSYNC) and then sends a
  command that would be answered is disconnected, the reply never reaching
  the link (it would be read as part of the replication stream), with
  Redis's log lines; a keyspace command gets "Replica can't interact with
  the keyspace" (logged as an error sent to a replica), and so does a
  MONITOR connection's, which Redis flags as a replica too.
- A replica keeps the expired keys of an RDB it loads (a transfer, or its
  own file at startup) until its primary's DEL; a primary drops them.
- A second replica joins a disk snapshot already being written for another.
- `watchdog-period`: a stuck event loop, or a replica's load lasting past
  the period (one piece of work, as Redis's load in its main thread), is
  reported once with the thread's stack; the load survives the EINTR its
  read gets."""
import socket
import time

import pytest
import redis

from servers import free_port, start_redis, start_volley, wait_for

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
            first = b""
            if sync[0] == "PSYNC":  # as the suite: the command follows +FULLRESYNC
                while b"\r\n" not in first:
                    first += s.recv(1)
            else:
                time.sleep(0.2)
            s.sendall(command(*cmd))
            data = first + read_until_closed(s)
        # The link carried at most the snapshot (after +FULLRESYNC for
        # PSYNC; the command may come before the snapshot is ready) and
        # nothing that answers the command.
        if sync[0] == "PSYNC":
            assert data.startswith(b"+FULLRESYNC "), data[:80]
            data = data[data.index(b"\r\n") + 2:]
        assert data == b"" or data.startswith(b"$"), data[:80]
        after_rdb = data[data.index(b"REDIS00"):] if data else b""
        for reply in (b"+PONG", b"-ERR", b"$-1\r\n", b"*1\r\n"):
            assert reply not in after_rdb, reply
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


def keyspace_keys(r, db=0):
    return r.info("keyspace").get(f"db{db}", {}).get("keys", 0)


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_replica_keeps_expired_keys_of_a_transfer_until_the_primarys_del(kind):
    start = STARTERS[kind]
    with start("--save", "", "--enable-debug-command", "yes") as primary, start("--save", "") as replica:
        p, r = redis.Redis(port=primary.port), redis.Redis(port=replica.port)
        p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        p.set("gone", "v", px=100)
        p.set("kept", "v")
        time.sleep(0.3)  # "gone" has expired; nobody touched it, so it is still in the snapshot
        r.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: r.info("replication")["master_link_status"] == "up", "the link", 30)
        assert r.info("persistence")["rdb_last_load_keys_expired"] == 0
        assert r.dbsize() == 2 and keyspace_keys(r) == 2
        assert r.get("gone") is None and r.exists("gone") == 0  # hidden from reads
        assert r.dbsize() == 2  # ... and reading it did not delete it
        assert p.get("gone") is None  # the primary expires it and sends its DEL
        wait_for(lambda: r.dbsize() == 1, "the primary's DEL to reach the replica", 10)


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_replica_keeps_expired_keys_of_its_own_rdb_at_startup(kind, tmp_path):
    start = STARTERS[kind]
    with start("--save", "", "--enable-debug-command", "yes", "--dir", str(tmp_path)) as first:
        f = redis.Redis(port=first.port)
        f.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        f.set("gone", "v", px=100)
        f.set("kept", "v")
        f.save()
    time.sleep(0.3)
    nobody = free_port()  # a primary that is not there: the replica keeps its own data
    with start("--dir", str(tmp_path), "--replicaof", "127.0.0.1", str(nobody)) as rep:
        r = redis.Redis(port=rep.port)
        assert r.info("persistence")["rdb_last_load_keys_expired"] == 0
        assert r.dbsize() == 2
        assert r.get("gone") is None
        time.sleep(0.3)  # no active expiry on a replica either
        assert r.dbsize() == 2
        r.replicaof("no", "one")  # a primary now: it expires the key itself
        wait_for(lambda: r.dbsize() == 1, "the promoted server to expire the key", 10)
    # A primary starting from the same file drops the key at load.
    with start("--dir", str(tmp_path)) as prim:
        r = redis.Redis(port=prim.port)
        assert r.info("persistence")["rdb_last_load_keys_expired"] == 1
        assert r.dbsize() == 1


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_watchdog_reports_a_stuck_event_loop(kind):
    with STARTERS[kind]("--save", "", "--enable-debug-command", "yes") as srv:
        r = redis.Redis(port=srv.port)
        # Raised to twice the cron period (hz 10), as Redis does.
        r.config_set("watchdog-period", 50)
        assert r.config_get("watchdog-period") == {"watchdog-period": "200"}
        r.execute_command("DEBUG", "SLEEP", "0.1")  # shorter than the period
        assert "WATCHDOG TIMER EXPIRED" not in srv.log()
        r.execute_command("DEBUG", "SLEEP", "0.6")
        wait_for(lambda: "--------" in srv.log(), "the end of the report", 5)
        log = srv.log()
        assert log.count("--- WATCHDOG TIMER EXPIRED ---") == 1  # once per stall
        assert ":signal-handler (" in log
        report = log[log.index("WATCHDOG TIMER EXPIRED"):log.index("--------")]
        assert len(report.splitlines()) > 3  # the stuck thread's stack
        time.sleep(0.5)  # idle is not stuck
        assert srv.log().count("WATCHDOG TIMER EXPIRED") == 1
        r.config_set("watchdog-period", 0)
        r.execute_command("DEBUG", "SLEEP", "0.5")
        assert srv.log().count("WATCHDOG TIMER EXPIRED") == 1
        assert r.ping()


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_replica_loading_from_a_stalled_primary_survives_the_watchdog(kind):
    """The load of a diskless transfer is watched (Redis loads it in its
    main thread; Volley on the link's thread): when the primary's child
    stalls past the period the report is written and the load's blocked
    read gets EINTR, which must not break the synchronization."""
    with start_redis("--save", "", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                     "--rdbcompression", "no") as primary, STARTERS[kind]("--save", "") as replica:
        p, r = redis.Redis(port=primary.port), redis.Redis(port=replica.port)
        for i in range(4):
            p.set(f"k{i}", "v" * 100000)  # past the child's write buffer: each key arrives alone
        p.config_set("rdb-key-save-delay", 300000)  # 0.3 s a key
        r.config_set("repl-diskless-load", "on-empty-db")
        r.config_set("watchdog-period", 200)
        r.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: "WATCHDOG TIMER EXPIRED" in replica.log(), "the watchdog's report", 10)
        wait_for(lambda: r.info("replication")["master_link_status"] == "up", "the link", 20)
        assert r.dbsize() == 4
        assert p.info("stats")["sync_full"] == 1
        assert "Reconnecting to MASTER" not in replica.log()


@pytest.mark.parametrize("kind", sorted(STARTERS))
def test_second_replica_attaches_to_the_running_disk_snapshot(kind):
    """With repl-diskless-sync no, a replica asking for a full sync while
    the snapshot for another is being written joins it (one BGSAVE for
    both), and both get the writes made since the fork."""
    start = STARTERS[kind]
    args = ("--save", "", "--repl-diskless-sync", "no", "--enable-debug-command", "yes")
    with start(*args) as primary, start("--save", "") as a, start("--save", "") as b:
        p = redis.Redis(port=primary.port)
        p.execute_command("DEBUG", "POPULATE", 20, "key", 10)
        p.config_set("rdb-key-save-delay", 100000)  # 0.1 s a key: a 2 s BGSAVE
        ra, rb = redis.Redis(port=a.port), redis.Redis(port=b.port)
        ra.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: p.info("persistence")["rdb_bgsave_in_progress"] == 1, "the BGSAVE", 10)
        p.set("during", "1")
        rb.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: "Waiting for end of BGSAVE for SYNC" in primary.log(), "the attachment", 10)
        p.set("after", "2")
        for r in (ra, rb):
            wait_for(lambda: r.info("replication")["master_link_status"] == "up", "the links", 30)
            wait_for(lambda: r.get("after") == b"2", "the stream", 10)
            assert r.dbsize() == 22 and r.get("during") == b"1"
        assert primary.log().count("Starting BGSAVE for SYNC") == 1
        assert p.info("stats")["sync_full"] == 2
