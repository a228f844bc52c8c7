"""RDB files exchanged with the real redis-server 7.0.15, both ways.

Each test fills one server with every type in its small and large
encodings (listpack / intset / quicklist / hashtable / skiplist), expiries
and several databases, SAVEs, starts the other server on the same file and
compares the whole dataset (values exactly, TTLs within a tolerance, and the
encodings OBJECT ENCODING reports). redis-check-rdb also checks Volley's
file. These tests always involve both servers, whatever VOLLEY_TEST_TARGET
says. Streams (several nodes, tombstones, consumer groups, consumers and
PELs) cross both ways in files and in DUMP payloads, compared through
XRANGE, XPENDING and XINFO STREAM FULL.
"""
import random
import subprocess

import pytest
import redis

from servers import start_redis, start_volley
from .conftest import value_of

DBS = (0, 3, 15)


def client(srv, db=0):
    return redis.Redis(host=srv.host, port=srv.port, db=db, socket_timeout=30)


def fill(srv):
    """Every type and encoding Redis 7.0 writes, in DBS, some with TTLs."""
    rng = random.Random(7)
    for db in DBS:
        r = client(srv, db)
        p = r.pipeline(transaction=False)
        p.set("s:int", 12345)
        p.set("s:negint", -7)
        p.set("s:bigint", 9223372036854775807)
        p.set("s:emb", "hello")
        p.set("s:raw", "r" * 64)
        p.set("s:lzf", "abcdefghij" * 200)
        p.set("s:random", bytes(rng.getrandbits(8) for _ in range(3000)))
        p.set("s:bin", b"\x00\xff\r\n")
        p.set("s:ttl", "soon", px=3_600_000)
        p.pfadd("hll", *[f"e{i}" for i in range(100)])
        p.rpush("l:small", "a", 1, -2, "x" * 50, 300000, 5_000_000_000)
        p.rpush("l:big", *[f"item-{i}" for i in range(20000)])
        p.rpush("l:bigvals", *["v" * 10000 for _ in range(5)])
        p.sadd("set:int", 1, 2, 3, -40000, 2**40)
        p.sadd("set:bigint", *range(1000))
        p.sadd("set:str", "a", "b", "c")
        p.sadd("set:big", *[f"m{i}" for i in range(2000)])
        p.zadd("z:small", {"a": 1, "b": 2.5, "c": float("-inf"), "d": 1e300})
        p.zadd("z:big", {f"m{i}": rng.random() * 1000 for i in range(1000)})
        p.zadd("z:longmember", {"x" * 100: 1})
        p.hset("h:small", mapping={"f": "v", "n": 42, "neg": -1})
        p.hset("h:big", mapping={f"f{i}": f"v{i}" for i in range(1000)})
        p.hset("h:longval", mapping={"f": "y" * 200})
        p.expire("h:big", 7200)
        p.pexpire("z:small", 9_000_000)
        p.execute()
        r.close()


def contents(srv):
    """{(db, key): (type, value, ttl_ms, encoding)} of the whole dataset."""
    out = {}
    for db in DBS:
        r = client(srv, db)
        for key in r.keys("*"):
            t = r.type(key).decode()
            v = value_of(r, key, t)
            enc = r.object("encoding", key)
            out[(db, key)] = (t, v, r.pttl(key), enc)
        r.close()
    return out


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        ta, va, ttla, enca = a[k]
        tb, vb, ttlb, encb = b[k]
        assert (ta, va) == (tb, vb), k
        assert (ttla < 0) == (ttlb < 0) and abs(ttla - ttlb) < 10_000, (k, ttla, ttlb)
        assert enca == encb, (k, enca, encb)


def save(srv):
    r = client(srv)
    assert r.save() is True
    r.close()


def test_volley_loads_redis_dump(shared_dir):
    with start_redis("--dir", shared_dir) as red:
        fill(red)
        want = contents(red)
        save(red)
    with start_volley("--dir", shared_dir) as vol:
        got = contents(vol)
        assert "Done loading RDB, keys loaded: %d, keys expired: 0." % len(want) in vol.log()
    assert len(want) == 23 * len(DBS)
    assert_same(want, got)


def test_redis_loads_volley_dump(shared_dir):
    with start_volley("--dir", shared_dir) as vol:
        fill(vol)
        want = contents(vol)
        save(vol)
    check = subprocess.run(["redis-check-rdb", f"{shared_dir}/dump.rdb"], capture_output=True, text=True)
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    with start_redis("--dir", shared_dir) as red:
        got = contents(red)
        assert "Done loading RDB, keys loaded: %d" % len(want) in red.log()
    assert_same(want, got)


def test_uncompressed_and_unchecksummed_dumps_cross_over(shared_dir):
    with start_volley("--dir", shared_dir, "--rdbcompression", "no", "--rdbchecksum", "no") as vol:
        fill(vol)
        want = contents(vol)
        save(vol)
    with start_redis("--dir", shared_dir, "--rdbchecksum", "no") as red:
        assert_same(want, contents(red))
        save(red)
    with start_volley("--dir", shared_dir) as vol:
        assert_same(want, contents(vol))


def test_volley_loads_compressed_quicklist_nodes(shared_dir):
    """With list-compress-depth, Redis stores inner list nodes LZF-compressed
    and writes them to the RDB as they are."""
    with start_redis("--dir", shared_dir, "--list-compress-depth", "1") as red:
        r = client(red)
        r.rpush("l", *[f"element-{i % 50}-{'q' * (i % 30)}" for i in range(50000)])
        want = r.lrange("l", 0, -1)
        save(red)
        r.close()
    with start_volley("--dir", shared_dir) as vol:
        r = client(vol)
        assert r.lrange("l", 0, -1) == want
        r.close()


# ---------------------------------------------------------------- streams

STREAMS = ("st", "empty", "mkstream", "small")


def fill_streams(srv, db=0):
    """Streams as Redis persists them: several nodes (7 entries each),
    entries with and without the master fields, integers, long values,
    XDEL and trim tombstones, groups with pending entries (one XCLAIMed
    with a fixed TIME and RETRYCOUNT), an idle consumer, a numeric group
    name, an empty stream with a group and a MKSTREAM one."""
    r = client(srv, db)
    r.config_set("stream-node-max-entries", 7)
    p = r.pipeline(transaction=False)
    for i in range(1, 60):
        if i % 4:
            fields = {"f": f"v{i}", "n": i * 1000 - 30000}
        else:
            fields = {"other": i, "x" * 70: "y" * (i * 10)}
        p.xadd("st", fields, id=f"{1000 + i // 5}-{i}")
    p.execute()
    assert r.xdel("st", "1001-5", "1003-17", "1010-50") == 3
    assert r.xtrim("st", minid="1000-3", approximate=False) == 2
    r.xgroup_create("st", "g1", id="0")
    r.xgroup_create("st", "g2", id="$")
    r.xgroup_create("st", "99", id="1002-10")
    alice = r.xreadgroup("g1", "alice", {"st": ">"}, count=5)[0][1]
    r.xreadgroup("g1", "bob", {"st": ">"}, count=3)
    r.xreadgroup("99", "eve", {"st": ">"}, count=2)
    assert r.xack("st", "g1", alice[0][0]) == 1
    r.xclaim("st", "g1", "carol", 0, [alice[1][0]], time=1_700_000_000_000, retrycount=7, force=True, justid=True)
    r.xgroup_createconsumer("st", "g2", "idle")
    r.xadd("empty", {"a": "b"}, id="5-5", maxlen=0, approximate=False)
    r.xgroup_create("empty", "eg", id="$")
    r.xgroup_create("mkstream", "g", id="$", mkstream=True)
    r.xadd("small", {"a": 1}, id="1-1")
    r.close()


# What a command replay (AOF) cannot reproduce: consumers are seen at
# replay time, and entries deleted before the rewrite leave no tombstones,
# so nodes split elsewhere.
REPLAY_MASK = (b"seen-time", b"radix-tree-keys", b"radix-tree-nodes")


def _masked(reply, mask):
    """XINFO STREAM FULL's reply without the fields in `mask`."""
    if isinstance(reply, dict):
        return {k: _masked(v, mask) for k, v in reply.items() if k not in mask}
    if isinstance(reply, list):
        return [_masked(v, mask) for v in reply]
    return reply


def stream_state(r, key, replayed=False):
    """What a stream holds: its entries, length, every group's pending
    entries (without idle times) and XINFO STREAM FULL (less what a replay
    changes, if `replayed`)."""
    out = {"entries": r.xrange(key), "len": r.xlen(key), "encoding": r.object("encoding", key)}
    full = r.execute_command("XINFO", "STREAM", key, "FULL")
    out["full"] = _masked(full, REPLAY_MASK if replayed else ())
    for g in full[b"groups"]:
        pending = r.xpending_range(key, g[b"name"], "-", "+", 1000)
        out[g[b"name"]] = [(e["message_id"], e["consumer"], e["times_delivered"]) for e in pending]
    return out


def streams_of(srv, db=0, replayed=False):
    r = client(srv, db)
    out = {k: stream_state(r, k, replayed) for k in STREAMS}
    r.close()
    return out


def test_streams_cross_both_ways_in_rdb_files(shared_dir):
    """redis-server's streams load into Volley; Volley saves them again,
    redis-check-rdb accepts the file and redis-server loads the same."""
    with start_redis("--dir", shared_dir) as red:
        fill_streams(red)
        fill_streams(red, 3)
        want, want3 = streams_of(red), streams_of(red, 3)
        assert want["st"]["full"][b"radix-tree-keys"] > 5 and len(want["st"]["full"][b"groups"]) == 3
        save(red)
    with start_volley("--dir", shared_dir) as vol:
        assert streams_of(vol) == want
        assert streams_of(vol, 3) == want3
        save(vol)
    check = subprocess.run(["redis-check-rdb", f"{shared_dir}/dump.rdb"], capture_output=True, text=True)
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    with start_redis("--dir", shared_dir) as red:
        assert streams_of(red) == want
        assert streams_of(red, 3) == want3


def test_volley_streams_load_into_redis(shared_dir):
    with start_volley("--dir", shared_dir) as vol:
        fill_streams(vol)
        want = streams_of(vol)
        save(vol)
    check = subprocess.run(["redis-check-rdb", f"{shared_dir}/dump.rdb"], capture_output=True, text=True)
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    with start_redis("--dir", shared_dir) as red:
        assert streams_of(red) == want
        assert "keys loaded: %d" % len(STREAMS) in red.log()


def test_stream_dump_payloads_cross_both_ways():
    """DUMP on one server RESTOREs on the other to the same stream; with
    rdbcompression off the two servers' payloads are the same bytes."""
    with start_redis() as red, start_volley() as vol:
        fill_streams(red)
        rr, vr = client(red), client(vol)
        for k in STREAMS:
            vr.restore(k, 0, rr.dump(k))
        assert streams_of(vol) == streams_of(red)
        for k in STREAMS:
            rr.restore(k + ":back", 0, vr.dump(k))
            assert stream_state(rr, k + ":back") == stream_state(rr, k), k
        rr.config_set("rdbcompression", "no")
        vr.config_set("rdbcompression", "no")
        for k in STREAMS:
            assert vr.dump(k) == rr.dump(k), k
        rr.close()
        vr.close()
