"""A redis-server replica with `tls-replication yes` syncs from a Volley
primary's TLS port: the full synchronization (diskless, relayed from the
snapshot child's pipe, and disk-based, the RDB file sent in chunks) goes
through the replica's TLS connection, then the stream follows. The
snapshot is several times the socket buffers, so the relay must wait for
the replica to read (the transfer runs from the event loop, and PING keeps
being answered meanwhile)."""

import pytest
import redis

from servers import free_port, start_redis, start_volley, wait_for
from .conftest import make_certs, tls_server_args

KEYS = 20000


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_redis_replica_syncs_over_tls(tmp_path, diskless):
    make_certs(tmp_path)
    tls_port = free_port()
    primary_args = [*tls_server_args(tmp_path, tls_port), "--repl-diskless-sync", diskless,
                    "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes"]
    with start_volley(*primary_args) as primary:
        p = redis.Redis(host=primary.host, port=primary.port, decode_responses=True)
        p.execute_command("DEBUG", "POPULATE", KEYS, "key", 500)
        p.set("before", "sync")
        replica_args = ["--tls-replication", "yes", "--tls-cert-file", str(tmp_path / "client.crt"),
                        "--tls-key-file", str(tmp_path / "client.key"), "--tls-ca-cert-file",
                        str(tmp_path / "ca.crt"), "--replicaof", "127.0.0.1", str(tls_port)]
        with start_redis(*replica_args) as replica:
            r = redis.Redis(host=replica.host, port=replica.port, decode_responses=True)
            wait_for(lambda: r.info("replication").get("master_link_status") == "up", "the link up")
            assert r.dbsize() == KEYS + 1
            assert r.get("before") == "sync"
            assert r.get("key:123") == p.get("key:123")
            p.set("after", "stream")
            wait_for(lambda: r.get("after") == "stream", "the stream after the snapshot")
            # The primary saw a TLS replica complete its full sync.
            info = p.info("replication")
            assert info["connected_slaves"] == 1 and info["slave0"]["state"] == "online"
            assert p.info("stats")["sync_full"] == 1
            target = "replicas sockets" if diskless == "yes" else "disk"
            assert f"Starting BGSAVE for SYNC with target: {target}" in primary.log()
