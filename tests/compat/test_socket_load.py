"""A Volley replica of a redis-server 7.0.15 primary (repl-diskless-sync
yes) loading the snapshot straight off the socket (repl-diskless-load
swapdb / on-empty-db): while the primary's child writes slowly
(rdb-key-save-delay) the replica stays responsive, serving the old data
(swapdb of its own history: async_loading) or answering -LOADING
(on-empty-db), and ends with the primary's dataset, functions included."""
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from servers import start_redis, start_volley, wait_for

from .conftest import value_of

KEYS = 400
# no-writes: a read-only replica refuses FCALL of a function that may write,
# as redis-server 7.0.15 does.
LIB = ("#!lua name=lib\nredis.register_function{function_name='f', callback=function() return '%s' end, "
       "flags={'no-writes'}}")


def fill(p):
    p.execute_command("DEBUG", "POPULATE", KEYS, "key", 1000)
    p.hset("h", mapping={f"f{i}": i for i in range(200)})
    p.zadd("z", {f"m{i}": i for i in range(200)})
    p.rpush("l", *range(300))
    p.sadd("s", *range(100))
    p.xadd("x", {"a": 1})
    p.set("ttl", "v", ex=1000)
    p.function_load(LIB % "primary", replace=True)


def dump(r):
    out = {}
    for k in r.scan_iter(count=1000):
        t = r.type(k).decode()
        out[k] = r.xrange(k) if t == "stream" else value_of(r, k, t)
    return out


def assert_same(p, r):
    wait_for(lambda: r.info("replication")["master_link_status"] == "up", "the link to come up")
    assert r.dbsize() == p.dbsize()
    assert dump(r) == dump(p)
    assert 0 < r.ttl("ttl") <= 1000
    assert r.fcall("f", 0) == b"primary"


def slow_primary():
    return start_redis("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--save", "",
                       "--rdbcompression", "no", "--enable-debug-command", "yes")


def test_swapdb_serves_old_data_while_loading_its_own_history():
    with slow_primary() as primary, start_volley("--repl-diskless-load", "swapdb", "--save", "") as replica:
        p = redis.Redis(port=primary.port)
        r = redis.Redis(port=replica.port)
        fill(p)
        r.replicaof("127.0.0.1", primary.port)
        assert_same(p, r)
        # Our own history next time: a full sync forced by a backlog
        # overrun is loaded aside while the old data stays readable.
        r.config_set("replica-read-only", "no")
        r.set("mine", "old")
        p.config_set("rdb-key-save-delay", 5000)  # 5 ms a key: ~2 s
        p.config_set("repl-backlog-size", 16384)
        tx = p.pipeline()
        tx.client_kill_filter(_type="replica")
        for i in range(10):
            tx.set(f"fill{i}", "A" * 16384)
        tx.execute()
        wait_for(lambda: r.info("persistence")["async_loading"] == 1, "async_loading", 20)
        assert r.info("persistence")["loading"] == 0
        assert r.get("mine") == b"old"
        assert r.fcall("f", 0) == b"primary"
        assert r.ping()
        assert r.info("persistence")["async_loading"] == 1
        p.config_set("rdb-key-save-delay", 0)
        assert_same(p, r)
        assert r.get("mine") is None


@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db"])
def test_new_history_blocks_with_loading_and_ends_equal(mode):
    with slow_primary() as primary, start_volley("--repl-diskless-load", mode, "--save", "") as replica:
        p = redis.Redis(port=primary.port)
        r = redis.Redis(port=replica.port)
        fill(p)
        p.config_set("rdb-key-save-delay", 5000)
        r.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: "Loading DB in memory" in replica.log(), "the load to start", 20)
        wait_for(lambda: r.info("persistence")["loading"] == 1, "loading", 20)
        # The loop keeps turning: INFO is answered, GET and PING refused
        # at once (redis-py would retry a LOADING reply: not this client).
        once = redis.Redis(port=replica.port, retry=Retry(NoBackoff(), 0))
        for _ in range(3):
            with pytest.raises(redis.exceptions.BusyLoadingError):
                once.get("key:1")
            with pytest.raises(redis.exceptions.BusyLoadingError):
                once.ping()
        assert r.info("persistence")["loading"] == 1
        p.config_set("rdb-key-save-delay", 0)
        assert_same(p, r)
        assert r.info("persistence")["loading"] == 0
        log = replica.log()
        assert "Done loading RDB" in log
        assert ("Swapping active DB with loaded DB" in log) == (mode == "swapdb")


def test_short_read_keeps_old_data_and_retries():
    with slow_primary() as primary, start_volley("--repl-diskless-load", "swapdb", "--save", "") as replica:
        p = redis.Redis(port=primary.port)
        r = redis.Redis(port=replica.port)
        fill(p)
        r.set("mine", "old")
        p.config_set("rdb-key-save-delay", 5000)
        r.replicaof("127.0.0.1", primary.port)
        wait_for(lambda: "Loading DB in memory" in replica.log(), "the load to start", 20)
        time.sleep(0.3)
        p.client_kill_filter(_type="replica")
        wait_for(lambda: "Internal error in RDB" in replica.log(), "the short read", 20)
        log = replica.log()
        assert "assuming connection error, resuming operation" in log
        assert "Discarding temporary DB in background" in log
        wait_for(lambda: r.info("persistence")["loading"] == 0, "loading to stop", 20)
        assert r.get("mine") == b"old"
        p.config_set("rdb-key-save-delay", 0)
        assert_same(p, r)
