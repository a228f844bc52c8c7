"""Scripts and replication on Volley alone (as unit/scripting's replica
tests): a replica refuses, as a write, a script that declared flags
without `no-writes`."""
import time

import pytest
import redis

from servers import start_volley


def client(srv):
    return redis.Redis(host=srv.host, port=srv.port, socket_timeout=30, protocol=2)


def wait_until(cond, what, timeout=10):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def attach(primary, replica):
    client(replica).replicaof(primary.host, primary.port)
    wait_until(lambda: client(replica).info("replication").get("master_link_status") == "up",
               "replica never linked")


def test_replica_refuses_scripts_that_declare_writes():
    with start_volley("--repl-diskless-sync-delay", "0") as primary, start_volley() as replica:
        client(primary).set("x", "some value")
        attach(primary, replica)
        rr = client(replica)
        assert rr.eval("#!lua flags=no-writes\nreturn redis.call('get','x')", 1, "x") == b"some value"
        assert rr.eval("return redis.call('get','x')", 1, "x") == b"some value"
        # redis-py turns the READONLY prefix into the exception's class.
        with pytest.raises(redis.exceptions.ReadOnlyError, match="^You can't write against a read only replica.$"):
            rr.eval("#!lua\nreturn redis.call('get','x')", 1, "x")
        # Queued while a primary, judged at EXEC once a replica.
        rr.replicaof("no", "one")
        tx = redis.Redis(host=replica.host, port=replica.port, single_connection_client=True, protocol=2)
        tx.execute_command("MULTI")
        assert tx.execute_command("EVAL", "#!lua\nreturn 1", 0) == b"QUEUED"
        attach(primary, replica)
        with pytest.raises(redis.exceptions.ExecAbortError, match="^Transaction discarded because of: READONLY"):
            tx.execute_command("EXEC")


def test_a_replica_refuses_a_scripts_first_write_and_a_stale_replica_its_scripts():
    with start_volley("--repl-diskless-sync-delay", "0") as primary, start_volley() as replica:
        attach(primary, replica)
        rr = client(replica)
        # No shebang: the script runs, its first write is refused (inside
        # EXEC too, where nothing judged it before).
        tx = rr.pipeline(transaction=True)
        tx.eval("redis.call('set','x',1) return 1", 1, "x")
        with pytest.raises(redis.exceptions.ReadOnlyError,
                           match="caused error: You can't write against a read only replica. script: "):
            tx.execute()
        rr.config_set("replica-serve-stale-data", "no")
        rr.replicaof("127.0.0.1", "1")
        masterdown = "Link with MASTER is down and replica-serve-stale-data is set to 'no'."
        for script in ("return redis.call('get','x')", "#!lua flags=no-writes\nreturn 1"):
            with pytest.raises(redis.exceptions.ResponseError, match=f"^{masterdown}$"):
                rr.eval(script, 0)
        assert rr.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','ok')", 0) == b"ok"
        with pytest.raises(redis.exceptions.ResponseError, match="Can not execute the command on a stale replica"):
            rr.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('get','x')", 0)
