"""A Volley primary restarted from its own RDB keeps its replicas.

The RDB carries the replication id and offset (aux fields); restarted, the
primary takes a new id, keeps the file's as `master_replid2` up to the
file's offset, and starts a backlog there, so its replicas (Volley and
redis-server) continue with PSYNC `+CONTINUE` instead of a full transfer.
Keys that expired while the primary was down are dropped at load and
their DELs go down the stream, so the replicas drop them too and the
offsets still agree, as Redis 7.0 does.
"""
import subprocess
import time

from servers import start_redis, start_volley
from .test_replication import assert_same, client, load, repl_info, stat, wait_synced


def restart(srv):
    """SHUTDOWN SAVE the server and start it again on its port and dir."""
    argv = srv.proc.args
    try:
        client(srv).shutdown(save=True)
    except Exception:  # the connection closes without a reply
        pass
    srv.proc.wait(timeout=20)
    srv.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    assert srv._wait_ready(20), srv.log()


def test_restarted_primary_lets_volley_and_redis_replicas_continue():
    with start_volley("--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes") as primary, \
            start_volley("--replicaof", "127.0.0.1", str(primary.port)) as vrep, \
            start_redis("--replicaof", "127.0.0.1", str(primary.port)) as rrep:
        load(primary, 7)
        p = client(primary)
        # Keys that will have expired by the restart; active expiry is off
        # (and the file keeps them) so only the load at start finds them.
        p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        for i in range(300):
            p.set(f"short:{i}", "v", px=150)
        for rep in (vrep, rrep):
            wait_synced(primary, rep)
        time.sleep(0.3)
        before = repl_info(primary)
        restart(primary)
        time.sleep(0.3)
        after = repl_info(primary)
        assert after["master_replid"] != before["master_replid"]
        assert after["master_replid2"] == before["master_replid"]
        assert after["second_repl_offset"] == before["master_repl_offset"] + 1
        # The DELs of the expired keys moved the offset past the file's.
        assert client(primary).info("persistence")["rdb_last_load_keys_expired"] == 300
        assert after["master_repl_offset"] > before["master_repl_offset"]
        for rep in (vrep, rrep):
            wait_synced(primary, rep)
        assert stat(primary, "sync_partial_ok") == 2
        assert stat(primary, "sync_full") == 0
        load(primary, 8, n=300)
        for rep in (vrep, rrep):
            wait_synced(primary, rep)
            assert repl_info(rep)["master_replid"] == repl_info(primary)["master_replid"]
            assert_same(primary, rep)
            assert client(rep).dbsize() == client(primary).dbsize()
        assert "Successful partial resynchronization with master" in rrep.log()
