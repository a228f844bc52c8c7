"""RDB files exchanged with the real redis-server 7.0.15, both ways.

Each test fills one server with every type in its small and large
encodings (listpack / intset / quicklist / hashtable / skiplist), expiries
and several databases, SAVEs, starts the other server on the same file and
compares the whole dataset (values exactly, TTLs within a tolerance, and the
encodings OBJECT ENCODING reports). redis-check-rdb also checks Volley's
file. These tests always involve both servers, whatever VOLLEY_TEST_TARGET
says.
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
