"""Replication between Volley and the real redis-server 7.0.15, both ways.

A redis-server replica of a Volley primary and a Volley replica of a
redis-server primary each sync under a pipelined write load of every type
(several databases, expiries, MULTI blocks, scripts) and must end with the
primary's dataset, key by key; then the link is killed mid-stream and the
replica must continue with a partial resynchronization (the primary says
so in INFO stats) and converge again. Volley-to-Volley covers chaining,
WAIT, READONLY and promotion with REPLICAOF NO ONE. These tests always
involve both servers, whatever VOLLEY_TEST_TARGET says.
"""
import os
import random
import signal
import time

import pytest
import redis

from servers import start_redis, start_volley, wait_for
from .conftest import value_of

DBS = (0, 5)


def client(srv, db=0):
    return redis.Redis(host=srv.host, port=srv.port, db=db, socket_timeout=30, protocol=2)


def load(srv, seed, n=1500):
    """A pipelined burst of writes of every type, a transaction, a script."""
    rng = random.Random(seed)
    for db in DBS:
        r = client(srv, db)
        p = r.pipeline(transaction=False)
        for i in range(n):
            k = rng.randrange(200)
            op = rng.randrange(10)
            if op == 0:
                p.set(f"s:{k}", rng.random())
            elif op == 1:
                p.incrby(f"n:{k}", rng.randrange(100))
            elif op == 2:
                p.rpush(f"l:{k}", *[rng.randrange(1000) for _ in range(rng.randrange(1, 5))])
            elif op == 3:
                p.hset(f"h:{k}", f"f{rng.randrange(50)}", rng.random())
            elif op == 4:
                p.sadd(f"st:{k}", rng.randrange(200))
            elif op == 5:
                p.zadd(f"z:{k}", {f"m{rng.randrange(100)}": rng.random()})
            elif op == 6:
                p.xadd(f"x:{k % 20}", {"f": str(i)})
            elif op == 7:
                p.expire(f"s:{k}", 1000)
            elif op == 8:
                p.lpop(f"l:{k}")
            else:
                p.delete(f"h:{k}")
        p.execute()
        t = r.pipeline(transaction=True)
        t.incr("tx:a")
        t.lpush("tx:l", "v")
        t.execute()
        r.eval("redis.call('set', KEYS[1], ARGV[1]); return redis.call('incr', KEYS[2])", 2, "lua:s", "lua:n", "x")


def dataset(srv):
    out = {}
    for db in DBS:
        r = client(srv, db)
        for key in r.scan_iter(count=1000):
            t = r.type(key).decode()
            v = r.xrange(key) if t == "stream" else value_of(r, key, t)
            out[(db, key)] = (t, v, r.ttl(key) > 0)
    return out


def repl_info(srv):
    return client(srv).info("replication")


def wait_synced(primary, replica, timeout=40):
    """Until the replica's link is up and it has applied all the primary wrote."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ri = repl_info(replica)
        if ri.get("master_link_status") == "up" and ri.get("slave_repl_offset") == repl_info(primary)["master_repl_offset"]:
            return
        time.sleep(0.05)
    raise AssertionError(f"replica never caught up: {repl_info(primary)} / {repl_info(replica)}")


def assert_same(primary, replica):
    want, got = dataset(primary), dataset(replica)
    assert len(want) > 500
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == want[k], k


def stat(srv, name):
    return client(srv).info("stats")[name]


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_redis_replica_of_volley(diskless):
    with start_volley("--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0") as primary:
        load(primary, 1)
        with start_redis("--replicaof", "127.0.0.1", str(primary.port)) as replica:
            load(primary, 2)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            assert stat(primary, "sync_full") == 1
            # Kill the link mid-stream: the replica continues from the backlog.
            client(primary).client_kill_filter(_type="replica")
            load(primary, 3, n=300)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            assert stat(primary, "sync_partial_ok") == 1
            assert stat(primary, "sync_full") == 1
            assert "Successful partial resynchronization with master" in replica.log()


def test_volley_replica_of_redis():
    with start_redis("--repl-diskless-sync-delay", "0") as primary:
        load(primary, 4)
        with start_volley("--replicaof", "127.0.0.1", str(primary.port)) as replica:
            load(primary, 5)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            with pytest.raises(redis.exceptions.ReadOnlyError):
                client(replica).set("x", 1)
            role = client(replica).execute_command("ROLE")
            assert role[0] == b"slave" and role[2] == primary.port
            client(primary).client_kill_filter(_type="replica")
            load(primary, 6, n=300)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            assert stat(primary, "sync_partial_ok") == 1
            assert stat(primary, "sync_full") == 1


def test_volley_chain_wait_and_promotion():
    with start_volley("--repl-diskless-sync-delay", "0") as primary:
        load(primary, 7)
        with start_volley("--replicaof", "127.0.0.1", str(primary.port), "--repl-diskless-sync-delay", "0") as mid, \
                start_volley("--repl-diskless-sync-delay", "0") as leaf:
            wait_synced(primary, mid)
            client(leaf).replicaof("127.0.0.1", mid.port)
            wait_synced(mid, leaf)
            r = client(primary)
            r.set("w", 1)
            assert r.execute_command("WAIT", 1, 5000) == 1
            assert r.execute_command("WAIT", 2, 200) == 1
            wait_synced(mid, leaf)
            assert_same(primary, leaf)
            # Promote the middle one: the leaf continues with it (PSYNC2).
            client(mid).replicaof("no", "one")
            client(mid).set("after", "promotion")
            wait_synced(mid, leaf)
            assert client(leaf).get("after") == b"promotion"
            assert stat(mid, "sync_partial_ok") >= 1
            info = repl_info(mid)
            assert info["role"] == "master" and info["master_replid2"] != "0" * 40


def test_replica_serve_stale_data_no():
    """With replica-serve-stale-data no a replica whose link is down answers
    only STALE commands (INFO, REPLICAOF...), MASTERDOWN otherwise, also for
    a queued command; once the link is up it serves again."""
    with start_volley() as primary, start_volley("--replica-serve-stale-data", "no") as rep:
        dead = primary.port + 1 if primary.port < 65535 else primary.port - 1
        r = client(rep)
        r.replicaof("127.0.0.1", dead)
        with pytest.raises(redis.ResponseError, match="^Link with MASTER is down and replica-serve-stale-data"):
            r.get("k")
        assert r.info("replication")["master_link_status"] == "down"
        p = r.pipeline(transaction=True)
        p.get("k")
        with pytest.raises(redis.ResponseError):
            p.execute()
        client(primary).set("k", "v")
        r.replicaof("127.0.0.1", primary.port)
        deadline = time.monotonic() + 20
        while r.info("replication")["master_link_status"] != "up":
            assert time.monotonic() < deadline, "replica never synced"
            time.sleep(0.1)
        assert r.get("k") == b"v"


@pytest.mark.parametrize("kind", ["redis", "volley"])
def test_wait_counts_acks_against_the_clients_own_last_write(kind):
    """WAIT waits for the stream up to its client's own last write (Redis's
    `c->woff`), not for what other clients wrote since: with the replica
    stopped (SIGSTOP, so it acknowledges nothing new), a client whose write
    was acknowledged gets 1 at once, while one whose write came after the
    stop gets 0."""
    start = start_redis if kind == "redis" else start_volley
    with start("--repl-diskless-sync-delay", "0") as primary, start() as replica:
        client(replica).replicaof("127.0.0.1", primary.port)
        wait_synced(primary, replica)
        mine, other = client(primary), client(primary)
        mine.set("mine", 1)
        assert mine.execute_command("WAIT", 1, 5000) == 1
        os.kill(replica.proc.pid, signal.SIGSTOP)
        try:
            other.set("other", 1)
            assert other.execute_command("WAIT", 1, 300) == 0
            assert mine.execute_command("WAIT", 1, 300) == 1
        finally:
            os.kill(replica.proc.pid, signal.SIGCONT)
        assert other.execute_command("WAIT", 1, 5000) == 1


def serves(r, key, want):
    """Whether `key` reads as `want` now (False while the server loads)."""
    try:
        return r.get(key) == want
    except redis.exceptions.BusyLoadingError:
        return False


def test_swapdb_loading_keeps_old_data_until_the_snapshot_is_in():
    """repl-diskless-load swapdb: a full sync of a new history (different
    replication id) reports loading and answers LOADING; a full sync that
    continues our own history (same id, after a failed PSYNC) serves the old
    data meanwhile (async_loading); an aborted transfer leaves the old data."""
    with start_volley("--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes") as primary, \
            start_volley("--repl-diskless-load", "swapdb", "--replica-read-only", "no") as rep:
        p, r = client(primary), client(rep)
        p.execute_command("DEBUG", "POPULATE", 200, "m", 10)
        r.set("mine", "old")
        # 200 keys: 20 s of snapshot, so that the kills below land inside
        # it however loaded the machine is (they cut it short).
        p.config_set("rdb-key-save-delay", 100000)
        r.replicaof("127.0.0.1", primary.port)
        # Polled together: the loading state follows the link thread once
        # per cron tick.
        wait_for(lambda: r.info("persistence")["loading"] == 1 and r.info("persistence")["async_loading"] == 0
                   and not serves(r, "mine", b"old"), "never loading with reads refused")
        p.client_kill_filter(_type="replica")  # the transfer fails
        # The replica retries a second later and loads again (the delay is
        # still on): the old data must be back in between.
        wait_for(lambda: serves(r, "mine", b"old") and r.dbsize() == 1, "old data never back")
        p.config_set("rdb-key-save-delay", 0)
        wait_synced(primary, rep)
        assert r.dbsize() == 200 and r.get("mine") is None
        # Same history: a full sync forced by a backlog that moved on.
        r.set("mine", "again")
        p.config_set("repl-backlog-size", 16384)
        p.config_set("rdb-key-save-delay", 100000)
        pipe = p.pipeline(transaction=True)
        pipe.client_kill_filter(_type="replica")
        for i in range(4):
            pipe.set(f"big{i}", "A" * 16384)
        pipe.execute()
        wait_for(lambda: r.info("persistence")["async_loading"] == 1, "never async_loading")
        assert r.get("mine") == b"again"
        with pytest.raises(redis.exceptions.BusyLoadingError):
            r.replicaof("no", "one")
        p.config_set("rdb-key-save-delay", 0)
        p.client_kill_filter(_type="replica")
        wait_synced(primary, rep)
        assert r.get("mine") is None and r.dbsize() == 204


def test_writable_replica_expires_its_own_keys_and_replica_buffers_are_counted():
    with start_volley("--enable-debug-command", "yes") as primary, start_volley("--replica-read-only", "no") as rep:
        p, r = client(primary), client(rep)
        r.replicaof("127.0.0.1", primary.port)
        wait_synced(primary, rep)
        # The replica expires what its own clients wrote, and only that
        # (the primary's key waits for a DEL that, active expiry off, never
        # comes).
        p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        p.set("from-primary", 1, px=100)
        wait_synced(primary, rep)
        r.set("own", 1, px=100)
        r.set("own-kept", 1)
        wait_for(lambda: r.dbsize() == 2, f"replica kept its own key: {r.keys()}")
        assert r.exists("own-kept") == 1
        # An EXPIRE in the past on a replica sets the deadline instead of
        # deleting (Redis's checkAlreadyExpired): the key reads as gone at
        # once, and the replica's cron deletes it.
        r.set("past", 1)
        pipe = r.pipeline(transaction=False)
        pipe.expire("past", -1).dbsize().exists("past")
        assert pipe.execute() == [True, 3, 0]
        wait_for(lambda: r.dbsize() == 2, "replica never expired its key with a past deadline")
        # A stalled replica's pending stream is mem_clients_slaves, not
        # counted for maxmemory (as Redis: the shared buffer beyond the
        # backlog's size, less the backlog's block overhead).
        rep.proc.send_signal(19)  # SIGSTOP
        try:
            for _ in range(20):
                p.set("big", "x" * 1_000_000)
            mem = p.info("memory")
            assert mem["mem_clients_slaves"] > 4_000_000
            assert mem["mem_not_counted_for_evict"] > mem["mem_clients_slaves"] - 64_000
        finally:
            rep.proc.send_signal(18)  # SIGCONT


def test_replicas_share_one_replication_buffer():
    """Two stalled replicas keep one copy of the stream, not two; the
    backlog holds what they have not taken beyond repl-backlog-size (a
    reconnecting replica may continue from it) and shrinks once they go."""
    with start_volley() as primary, start_volley() as r1, start_volley() as r2:
        p = client(primary)
        p.config_set("repl-backlog-size", 16384)
        for rep in (r1, r2):
            client(rep).replicaof("127.0.0.1", primary.port)
        for rep in (r1, r2):
            wait_synced(primary, rep)
        for rep in (r1, r2):
            rep.proc.send_signal(19)  # SIGSTOP
        try:
            value = "v" * 10_000
            for i in range(1000):
                p.set(f"k{i}", value)
            mem, ri = p.info("memory"), repl_info(primary)
            stream = 1000 * 10_000
            # Sockets take some of it; the rest is held once.
            assert ri["repl_backlog_histlen"] > stream // 2, ri
            assert mem["mem_total_replication_buffers"] < 1.5 * ri["repl_backlog_histlen"], mem
            assert mem["mem_clients_slaves"] == mem["mem_total_replication_buffers"] - 16384
        finally:
            for rep in (r1, r2):
                rep.proc.send_signal(18)  # SIGCONT
        for rep in (r1, r2):
            wait_synced(primary, rep)
        # Caught up: the backlog is back to about its size.
        deadline = time.time() + 10
        while repl_info(primary)["repl_backlog_histlen"] > 4 * 16384 and time.time() < deadline:
            p.set("tick", 1)
            time.sleep(0.05)
        assert repl_info(primary)["repl_backlog_histlen"] <= 4 * 16384
        assert assert_same_keys(primary, r1) and assert_same_keys(primary, r2)


def assert_same_keys(primary, replica):
    p, r = client(primary), client(replica)
    assert r.dbsize() == p.dbsize()
    return all(r.get(f"k{i}") == p.get(f"k{i}") for i in (0, 499, 999))
