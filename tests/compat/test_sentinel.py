"""High availability with Debian's unmodified redis-sentinel 7.0.15 managing
Volley servers, and FAILOVER between Volley and redis-server.

Three Volley servers (a primary and two replicas, each started from its own
config file) and three sentinels (quorum 2) on loopback. A writer that finds
the primary through redis-py's `Sentinel` writes pipelined batches, each
followed by `WAIT 1 100`; the primary is killed with SIGKILL mid-load. After
the sentinels promote a replica, every write that WAIT acknowledged to at
least one replica must be on the new primary, the other replica must follow
it, the sentinels' CONFIG REWRITEs must show in the config files, and the
old primary, restarted, must be turned into a replica of the new one and
catch up. `VOLLEY_FAILOVER_RUNS` (default 3; the issue's proof is 20) sets
how many kill-and-rejoin rounds run back to back on the same group.
A Jedis `JedisSentinelPool` keeps writing through a failover too.
"""
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis
from redis.sentinel import Sentinel

import servers
from servers import free_port, start_redis, start_volley, volley_bin

MASTER = "volleymaster"
RUNS = int(os.environ.get("VOLLEY_FAILOVER_RUNS", "3"))


def wait_for(what, cond, timeout=40):
    """Errors while servers die, restart or change role count as not yet."""
    servers.wait_for(cond, what, timeout=timeout, step=0.1,
                     transient=(redis.ConnectionError, redis.TimeoutError, redis.ResponseError))


class Proc:
    """A server process started from a config file it may rewrite."""

    def __init__(self, argv_head, root, name, lines):
        self.port = free_port()
        self.dir = Path(root) / name
        self.dir.mkdir()
        self.conf = self.dir / "node.conf"
        self.conf.write_text("".join(f"{line}\n" for line in [
            f"port {self.port}", "bind 127.0.0.1", f'dir "{self.dir}"',
            f'logfile "{self.dir / "log"}"', *lines]))
        self.argv_head = argv_head
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen([*self.argv_head, str(self.conf)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(f"{self.dir.name} to answer", lambda: self.client().ping(), timeout=15)

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, **kw)

    def kill9(self):
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log(self):
        p = self.dir / "log"
        return p.read_text(errors="replace")[-3000:] if p.exists() else ""


@pytest.fixture
def group():
    """Three Volley servers (n0 primary) and three sentinels watching them."""
    root = tempfile.mkdtemp(prefix="volley-sentinel-")
    nodes, sentinels = [], []
    try:
        common = ['save ""', "appendonly no", "repl-diskless-sync-delay 0"]
        nodes.append(Proc([volley_bin()], root, "n0", common))
        for i in (1, 2):
            nodes.append(Proc([volley_bin()], root, f"n{i}",
                              [*common, f"replicaof 127.0.0.1 {nodes[0].port}"]))
        for i in range(3):
            sentinels.append(Proc(["redis-sentinel"], root, f"s{i}", [
                f"sentinel monitor {MASTER} 127.0.0.1 {nodes[0].port} 2",
                f"sentinel down-after-milliseconds {MASTER} 2000",
                f"sentinel failover-timeout {MASTER} 10000",
                f"sentinel parallel-syncs {MASTER} 2"]))

        def discovered():
            for s in sentinels:
                m = s.client(decode_responses=True).sentinel_master(MASTER)
                if m["num-slaves"] != 2 or m["num-other-sentinels"] != 2:
                    return False
            return True
        wait_for("the sentinels to discover both replicas and each other", discovered, timeout=30)
        yield nodes, sentinels
    finally:
        for p in nodes + sentinels:
            p.stop()
        if not os.environ.get("VOLLEY_KEEP_TEST_DIRS"):
            shutil.rmtree(root, ignore_errors=True)


def primary_port(sentinels):
    return int(sentinels[0].client().sentinel_get_master_addr_by_name(MASTER)[1])


class Writer(threading.Thread):
    """Pipelined batches through redis-py's Sentinel discovery, each followed
    by WAIT 1 100; keeps the keys WAIT acknowledged to a replica."""

    def __init__(self, sentinels, tag):
        super().__init__(daemon=True)
        self.sentinel = Sentinel([("127.0.0.1", s.port) for s in sentinels], socket_timeout=2)
        self.tag = tag
        self.acked = {}
        self.batches = 0
        self.errors = 0
        self.stopping = threading.Event()

    def run(self):
        master = self.sentinel.master_for(MASTER, socket_timeout=2)
        n = 0
        while not self.stopping.is_set():
            batch = {f"w:{self.tag}:{n + i}": str(n + i) for i in range(20)}
            n += 20
            try:
                p = master.pipeline(transaction=False)
                for k, v in batch.items():
                    p.set(k, v)
                p.incr(f"c:{self.tag}")
                p.execute()
                if master.execute_command("WAIT", 1, 100) >= 1:
                    self.acked.update(batch)
                self.batches += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
                self.errors += 1
                time.sleep(0.05)


def replication(node):
    return node.client(decode_responses=True).info("replication")


def settled(nodes, sentinels, live):
    """The primary all sentinels name, once it is one and every other live
    node follows it with its link up (a loaded machine may see a second,
    spurious failover right after the first: judge the final state)."""
    ports = {primary_port([s]) for s in sentinels}
    if len(ports) != 1:
        return None
    port = ports.pop()
    primary = next(n for n in nodes if n.port == port)
    if primary not in live or replication(primary)["role"] != "master":
        return None
    for n in live:
        if n is not primary:
            info = replication(n)
            if info.get("master_port") != port or info["master_link_status"] != "up":
                return None
    return primary


def test_sentinel_failover_keeps_acknowledged_writes(group):
    nodes, sentinels = group
    for run_no in range(RUNS):
        old = next(n for n in nodes if n.port == primary_port(sentinels))
        live = [n for n in nodes if n is not old]
        writer = Writer(sentinels, run_no)
        writer.start()
        wait_for("the writer to get acknowledged batches", lambda: len(writer.acked) >= 400, timeout=20)
        killed = time.monotonic()
        old.kill9()
        wait_for("the sentinels to promote a replica",
                 lambda: all(primary_port([s]) != old.port for s in sentinels), timeout=40)
        promoted = time.monotonic() - killed
        before = writer.batches
        wait_for("the writer to find and write to the new primary",
                 lambda: writer.batches > before + 5, timeout=30)
        # The figures the proof quotes (seen with pytest -s).
        print(f"run {run_no}: all sentinels name the new primary {promoted:.2f} s after the kill, "
              f"writes resumed at {time.monotonic() - killed:.2f} s")
        writer.stopping.set()
        writer.join(timeout=10)
        wait_for("the group to settle", lambda: settled(nodes, sentinels, live), timeout=40)
        new = settled(nodes, sentinels, live)
        r = new.client(decode_responses=True)
        missing = [k for k, v in writer.acked.items() if r.get(k) != v]
        assert not missing, f"run {run_no}: {len(missing)} of {len(writer.acked)} acknowledged writes lost, e.g. {missing[:5]}"
        # The sentinels rewrote the configs: the primary has no replicaof,
        # the other replica follows it.
        assert "replicaof" not in new.conf.read_text()
        for n in live:
            if n is not new:
                assert f"replicaof 127.0.0.1 {new.port}" in n.conf.read_text()
        # The old primary comes back as a primary with its old data; the
        # sentinels turn it into a replica of the new one.
        old.start()
        wait_for("the restarted old primary to rejoin as a replica",
                 lambda: settled(nodes, sentinels, nodes) is not None, timeout=60)
        new = settled(nodes, sentinels, nodes)
        wait_for("the rejoined replica to catch up", lambda: replication(old)["slave_repl_offset"]
                 == replication(new)["master_repl_offset"], timeout=20)
        assert old.client().dbsize() == new.client().dbsize()
        assert f"replicaof 127.0.0.1 {new.port}" in old.conf.read_text()


def test_jedis_sentinel_pool_follows_a_failover(group, classpath):
    nodes, sentinels = group
    old = next(n for n in nodes if n.port == primary_port(sentinels))
    addrs = ",".join(f"127.0.0.1:{s.port}" for s in sentinels)
    prog = subprocess.Popen(["java", "-cp", classpath, "sentinel.JedisSentinelCheck", MASTER, addrs, "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("Jedis to write through the pool",
                 lambda: int(old.client().get("jedis:counter") or 0) >= 200, timeout=60)
        old.kill9()
        out, err = prog.communicate(timeout=90)
    finally:
        prog.kill()
    lines = out.splitlines()
    assert prog.returncode == 0, f"exit {prog.returncode}\n{out}\n{err[-3000:]}"
    masters = [line for line in lines if line.startswith("master ")]
    assert masters[0] == f"master 127.0.0.1:{old.port}" and len(masters) == 2, lines
    new_port = primary_port(sentinels)
    assert masters[1] == f"master 127.0.0.1:{new_port}"
    assert lines[-1] == "switched after writes, 100 on the new primary"


@pytest.mark.parametrize("primary_kind", ["volley", "redis"])
def test_failover_command_between_volley_and_redis(primary_kind):
    """FAILOVER TO hands the primary role over without losing a write, from
    a Volley primary to a redis-server replica and the other way round."""
    starts = {"volley": start_volley, "redis": start_redis}
    other = "redis" if primary_kind == "volley" else "volley"
    with starts[primary_kind]("--repl-diskless-sync-delay", "0") as p, \
            starts[other]("--repl-diskless-sync-delay", "0") as r:
        pc = redis.Redis(port=p.port, decode_responses=True)
        rc = redis.Redis(port=r.port, decode_responses=True)
        rc.replicaof("127.0.0.1", p.port)
        wait_for("the replica to sync", lambda: rc.info("replication")["master_link_status"] == "up")
        pipe = pc.pipeline(transaction=False)
        for i in range(2000):
            pipe.set(f"k{i}", i)
            pipe.rpush("list", i)
        pipe.execute()
        assert pc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port, "TIMEOUT", 5000) == "OK"
        wait_for("the failover to end", lambda: pc.info("replication")["master_failover_state"] == "no-failover"
                 and rc.info("replication")["role"] == "master")
        assert pc.info("replication")["role"] == "slave"
        wait_for("the old primary to follow", lambda: pc.info("replication")["master_link_status"] == "up")
        assert rc.dbsize() == 2001 and rc.llen("list") == 2000 and rc.get("k1999") == "1999"
        # Nothing was sent twice: the old primary continued (partial resync).
        assert rc.info("stats")["sync_partial_ok"] >= 1
        rc.set("after", "1")
        wait_for("the new primary's writes to reach the old one", lambda: pc.get("after") == "1")
        with pytest.raises(redis.ReadOnlyError):
            pc.set("x", 1)
