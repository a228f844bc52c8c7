"""A Volley primary's diskless full synchronization to two redis-server
replicas, one of which loads slowly (key-load-delay, loading straight from
the socket): the snapshot child's pipe is relayed by the event loop at the
pace of the slowest replica. A replica that stops reading is dropped after
repl-timeout ("Disconnecting timedout replica (full sync)") and the other
one finishes ("done reading from pipe, 1 replicas still up"), with the
write made during the transfer arriving after the snapshot."""
import os
import signal

import redis

from servers import start_redis, start_volley, wait_for

KEYS = 2000


def test_stuck_replica_times_out_and_the_other_finishes():
    args = ["--enable-debug-command", "yes", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "5",
            "--repl-diskless-sync-max-replicas", "2", "--rdbcompression", "no"]
    with start_volley(*args) as primary:
        p = redis.Redis(host=primary.host, port=primary.port, db=9)
        p.execute_command("DEBUG", "POPULATE", KEYS, "test", 10000)
        with start_redis("--repl-diskless-load", "swapdb", "--key-load-delay", "2000") as slow, \
                start_redis() as fast:
            s, f = redis.Redis(port=slow.port, db=9), redis.Redis(port=fast.port, db=9)
            s.replicaof("127.0.0.1", primary.port)
            f.replicaof("127.0.0.1", primary.port)
            wait_for(lambda: "Loading DB in memory" in slow.log(), "the slow replica to start loading")
            p.incr("during")
            p.config_set("repl-timeout", 2)
            os.kill(slow.proc.pid, signal.SIGSTOP)
            try:
                wait_for(lambda: "Disconnecting timedout replica (full sync)" in primary.log(), "the timeout", 30)
                wait_for(lambda: "done reading from pipe, 1 replicas still up" in primary.log(), "the transfer end")
            finally:
                os.kill(slow.proc.pid, signal.SIGCONT)
            wait_for(lambda: f.info("replication")["master_link_status"] == "up", "the fast replica's link")
            wait_for(lambda: f.get("during") == b"1", "the write made during the transfer")
            assert f.dbsize() == KEYS + 1
            # The child is reaped by the primary's cron, a tick after the
            # replica's link is up: a moment later, not at once.
            wait_for(lambda: p.info("persistence")["rdb_bgsave_in_progress"] == 0, "the snapshot child's end", 5)
