"""PUBLISH and replication, against redis-server 7.0.15.

Redis 7.0 propagates PUBLISH and SPUBLISH (outside cluster mode) to its
replicas but not to its AOF (`forceCommandPropagation(c, PROPAGATE_REPL)`),
wrapped in MULTI/EXEC as any other propagated command when a transaction
or script propagates more than one; a replica applying it delivers it to
its own subscribers. The same commands run on a Volley and a redis-server
primary (AOF on, a raw SYNC attached) must give the same replication
stream and AOF; and subscribers of a replica hear what is published on
its primary, for each pairing of Volley and redis-server.
"""
import time

import pytest
import redis

from replstream import SyncStream, aof_commands
from servers import start_redis, start_volley, wait_for

# (db, command) run in order on the primary.
COMMANDS = [
    (0, ["SET", "a", "1"]),
    (0, ["PUBLISH", "ch", "plain"]),
    (5, ["PUBLISH", "ch", "in-db-5"]),
    (5, ["SET", "b", "2"]),
    (0, ["SET", "c", "3"]),
    (0, ["SPUBLISH", "sch", "shard"]),
    (0, "MULTI", [["PUBLISH", "ch", "tx-alone"]]),
    (0, "MULTI", [["PUBLISH", "ch", "tx-1"], ["PUBLISH", "ch", "tx-2"]]),
    (0, "MULTI", [["SET", "d", "4"], ["PUBLISH", "ch", "tx-after-set"]]),
    (0, ["EVAL", "redis.call('publish', 'ch', 'lua'); redis.call('set', KEYS[1], 'v')", "1", "e"]),
    (0, ["EVAL", "return redis.call('publish', 'ch', 'lua-alone')", "0"]),
    # A block whose first command is a PUBLISH in the replicas' db, not the
    # AOF's: the AOF selects it before MULTI.
    (5, ["PUBLISH", "ch", "to-5"]),
    (5, "MULTI", [["PUBLISH", "ch", "tx-5-first"], ["SET", "g", "6"]]),
    (0, ["SET", "h", "7"]),
    # The last command a PUBLISH in another db: EXEC goes in its db.
    (0, "MULTI", [["SET", "i", "8"], ["SELECT", "5"], ["PUBLISH", "ch", "tx-5-last"]]),
    (0, ["SET", "f", "5"]),
]


def run_commands(srv):
    conns = {db: redis.Redis(host=srv.host, port=srv.port, db=db, protocol=2) for db in (0, 5)}
    for entry in COMMANDS:
        r = conns[entry[0]]
        if entry[1] == "MULTI":
            # Its own connection: a SELECT inside must not move the others.
            with redis.Redis(host=srv.host, port=srv.port, db=entry[0], protocol=2) as own:
                p = own.pipeline(transaction=True)
                for cmd in entry[2]:
                    p.execute_command(*cmd)
                p.execute()
        else:
            r.execute_command(*entry[1])


def stream_and_aof(start):
    with start("--appendonly", "yes", "--appendfsync", "always", "--repl-ping-replica-period", "3600") as srv:
        stream = SyncStream(srv)
        run_commands(srv)
        return stream.commands(until=["SET", "f", "5"]), aof_commands(srv)


def test_publish_goes_to_replicas_and_not_to_the_aof():
    want_stream, want_aof = stream_and_aof(start_redis)
    got_stream, got_aof = stream_and_aof(start_volley)
    published = [c for c in want_stream if c[0].upper() in ("PUBLISH", "SPUBLISH")]
    assert len(published) == 12, want_stream
    assert not any(c[0].upper() in ("PUBLISH", "SPUBLISH") for c in want_aof), want_aof
    assert got_stream == want_stream
    # Exact, SELECTs included: a PUBLISH in db 5 moves only the replicas'
    # database, so the AOF needs its own SELECT 5 for SET b.
    assert got_aof == want_aof


def pairings():
    return [
        pytest.param(start_volley, start_redis, id="volley-primary-redis-replica"),
        pytest.param(start_redis, start_volley, id="redis-primary-volley-replica"),
        pytest.param(start_volley, start_volley, id="volley-both"),
    ]


def synced(p, r):
    ri = r.info("replication")
    return ri.get("master_link_status") == "up" and ri.get("slave_repl_offset") == p.info("replication")[
        "master_repl_offset"]


@pytest.mark.parametrize("start_primary,start_replica", pairings())
def test_a_replicas_subscribers_hear_what_the_primary_publishes(start_primary, start_replica):
    with start_primary() as primary, start_replica() as replica:
        r = redis.Redis(host=replica.host, port=replica.port, protocol=2)
        r.execute_command("REPLICAOF", primary.host, primary.port)
        p = redis.Redis(host=primary.host, port=primary.port, protocol=2)
        wait_for(lambda: synced(p, r), "the replica to catch up", 30)
        sub = r.pubsub()
        sub.subscribe("ch")
        sub.execute_command("SSUBSCRIBE", "sch")
        p.publish("ch", "plain")
        t = p.pipeline(transaction=True)
        t.publish("ch", "tx")
        t.set("k", "v")
        t.execute()
        p.eval("return redis.call('publish', 'ch', 'lua')", 0)
        p.execute_command("SPUBLISH", "sch", "shard")
        got, deadline = [], time.monotonic() + 10
        while len(got) < 4 and time.monotonic() < deadline:
            m = sub.get_message(timeout=0.2)
            if m and m["type"] in ("message", "smessage"):
                got.append((m["type"], m["channel"], m["data"]))
        assert got == [("message", b"ch", b"plain"), ("message", b"ch", b"tx"), ("message", b"ch", b"lua"),
                       ("smessage", b"sch", b"shard")]
        sub.close()
