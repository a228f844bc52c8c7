"""AOF compatibility with Redis 7.0.15 in both directions: redis-server writes
a multi-part AOF of every data type and Volley loads it with the same
contents; Volley's files (base, incr files, manifest) load in redis-server
too. Bases in both forms: commands (`aof-use-rdb-preamble no`) and an RDB
snapshot (`yes`, Redis's default). Streams rewritten as commands (XADD,
XSETID, XGROUP CREATE/CREATECONSUMER, XCLAIM) replay on the other server to
the same stream."""
import os
import time

import pytest
import redis

from .conftest import TARGET, value_of
from servers import start_redis, start_volley
from .test_rdb_compat import fill_streams, streams_of

pytestmark = pytest.mark.skipif(TARGET == "redis", reason="compares the two servers; nothing to swap")


def write_everything(r):
    """Writes of every type, across databases, with translated commands."""
    r.set("s", "hello")
    r.append("s", " world")
    r.set("n", 10)
    r.incrby("n", 5)
    r.incrbyfloat("f", 1.25)
    r.set("ttl", "v", ex=1000)
    r.execute_command("SETEX", "ttl2", 500, "v")
    r.rpush("l", *[f"e{i}" for i in range(200)])
    r.lpop("l")
    r.sadd("set", *[f"m{i}" for i in range(100)])
    r.sadd("ints", 1, 2, 3, 99)
    r.spop("set")
    r.spop("set", 3)
    r.hset("h", mapping={f"f{i}": f"v{i}" for i in range(100)})
    r.hincrbyfloat("h", "fl", 0.5)
    r.zadd("z", {f"m{i}": i * 1.5 for i in range(100)})
    r.zincrby("z", 0.25, "m1")
    r.zpopmin("z")
    r.expire("l", 2000)
    with r.pipeline(transaction=True) as p:
        p.incr("tx1").incr("tx2").execute()
    r.set("gone", 1)
    r.delete("gone")
    r.rpush("blk", "a", "b")
    r.blpop("blk", 1)
    r2 = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                     port=r.connection_pool.connection_kwargs["port"], db=2, decode_responses=True)
    r2.set("db2", "v")
    r2.rpush("db2list", "x")
    r2.close()


def dump(port):
    """Every key of dbs 0..3 with type, value and whether it has a TTL."""
    out = []
    for db in range(4):
        r = redis.Redis(host="127.0.0.1", port=port, db=db, decode_responses=True)
        for k in sorted(r.keys("*")):
            t = r.type(k)
            v = value_of(r, k, t)
            out.append((db, k, t, v, r.ttl(k) > 0))
        r.close()
    return out


def wait_rewrite(r):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and info["aof_rewrites"] >= 1:
            return
        time.sleep(0.05)
    raise AssertionError("AOF rewrite did not finish")


def aof_args(preamble):
    return ("--appendonly", "yes", "--aof-use-rdb-preamble", preamble, "--appendfsync", "always")


# (rewrite, preamble): the base file is RDB with Redis's default preamble "yes".
CASES = [(False, "no"), (True, "no"), (True, "yes")]
CASE_IDS = ["incr-only", "rewritten-base", "rewritten-rdb-base"]


def fill(port, shared_dir, rewrite, preamble):
    """Write every type (then rewrite, if asked, and write once more);
    return the server's contents."""
    r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    write_everything(r)
    if rewrite:
        r.bgrewriteaof()
        wait_rewrite(r)
        r.set("after-rewrite", "1")
        base = [f for f in os.listdir(os.path.join(shared_dir, "appendonlydir")) if ".base." in f]
        assert base and base[0].endswith(".rdb" if preamble == "yes" else ".aof"), base
    want = dump(port)
    r.close()
    return want


@pytest.mark.parametrize("rewrite,preamble", CASES, ids=CASE_IDS)
def test_volley_loads_what_redis_wrote(shared_dir, rewrite, preamble):
    with start_redis(*aof_args(preamble), "--dir", shared_dir) as rs:
        want = fill(rs.port, shared_dir, rewrite, preamble)
    with start_volley("--appendonly", "yes", "--dir", shared_dir) as vs:
        assert dump(vs.port) == want, vs.log()


@pytest.mark.parametrize("rewrite,preamble", CASES, ids=CASE_IDS)
def test_redis_loads_what_volley_wrote(shared_dir, rewrite, preamble):
    with start_volley(*aof_args(preamble), "--dir", shared_dir) as vs:
        want = fill(vs.port, shared_dir, rewrite, preamble)
    with start_redis("--appendonly", "yes", "--dir", shared_dir) as rs:
        assert dump(rs.port) == want, rs.log()


@pytest.mark.parametrize("writer", ["volley", "redis"])
def test_rewritten_streams_replay_on_the_other_server(shared_dir, writer):
    """A command-form base holding streams (groups, consumers, PELs, an
    empty stream) replays on the other server to the same streams; only
    seen times and where nodes split differ (see REPLAY_MASK)."""
    first, second = (start_volley, start_redis) if writer == "volley" else (start_redis, start_volley)
    nodes = ("--stream-node-max-entries", "7")
    with first(*aof_args("no"), *nodes, "--dir", shared_dir) as a:
        fill_streams(a)
        r = redis.Redis(host="127.0.0.1", port=a.port)
        r.bgrewriteaof()
        wait_rewrite(r)
        r.close()
        want = streams_of(a, replayed=True)
    aof_dir = os.path.join(shared_dir, "appendonlydir")
    base = [f for f in os.listdir(aof_dir) if f.endswith(".base.aof")]
    with open(os.path.join(aof_dir, base[0]), "rb") as f:
        text = f.read()
    for cmd in (b"XSETID", b"ENTRIESREAD", b"CREATECONSUMER", b"XCLAIM", b"MAXLEN"):
        assert cmd in text, cmd
    with second("--appendonly", "yes", *nodes, "--dir", shared_dir) as b:
        assert streams_of(b, replayed=True) == want, b.log()
