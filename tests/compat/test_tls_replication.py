"""TLS beyond client connections (#20): a Volley replica whose link to a
redis-server primary runs over TLS (`tls-replication yes`), encrypted key
files (`tls-key-file-pass`) and `tls-session-cache-timeout`. These tests
always involve the real redis-server or openssl, whatever VOLLEY_TEST_TARGET
says."""
import subprocess
import time

import pytest
import redis

from servers import free_port, start_redis, start_volley
from .conftest import make_certs, tls_server_args
from .test_replication import assert_same, client, load, stat, wait_synced


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("tlsrepl"))


def test_volley_replica_of_redis_over_tls(certs):
    """The primary's TLS port speaks nothing but TLS, and it asks for a client
    certificate: the replica syncs through it with tls-client-cert-file,
    follows a write load, and continues with PSYNC over a new TLS link."""
    ptls = free_port()
    with start_redis(*tls_server_args(certs, ptls), "--repl-diskless-sync-delay", "0") as primary:
        load(primary, 11)
        args = [*tls_server_args(certs, free_port()), "--tls-replication", "yes",
                "--tls-client-cert-file", str(certs / "client.crt"),
                "--tls-client-key-file", str(certs / "client.key"),
                "--replicaof", "127.0.0.1", str(ptls)]
        with start_volley(*args) as replica:
            load(primary, 12)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            assert client(replica).execute_command("ROLE")[2] == ptls
            client(primary).client_kill_filter(_type="replica")
            load(primary, 13, n=300)
            wait_synced(primary, replica)
            assert_same(primary, replica)
            assert stat(primary, "sync_full") == 1
            assert stat(primary, "sync_partial_ok") == 1


def test_plain_replica_cannot_sync_from_a_tls_port(certs):
    """The control for the test above: without tls-replication the same
    link to the TLS port never comes up."""
    ptls = free_port()
    with start_redis(*tls_server_args(certs, ptls)) as primary:
        with start_volley("--replicaof", "127.0.0.1", str(ptls)) as replica:
            time.sleep(1.5)
            assert client(replica).info("replication")["master_link_status"] == "down"
            assert stat(primary, "sync_full") == 0


def encrypt_key(certs):
    out = certs / "server.key.encrypted"
    subprocess.run(["openssl", "rsa", "-in", str(certs / "server.key"), "-out", str(out), "-aes256",
                    "-passout", "pass:1234"], check=True, capture_output=True, timeout=30)
    assert out.read_text().startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    return out


@pytest.mark.parametrize("cipher", ["-aes256", "-aes128", "-des3"])
def test_legacy_encrypted_key_file(certs, cipher):
    """A key in OpenSSL's traditional form (Proc-Type: 4,ENCRYPTED), as
    OpenSSL 1.x wrote every encrypted key and 3.x does with -traditional."""
    out = certs / f"server.key.legacy{cipher}"
    subprocess.run(["openssl", "rsa", "-in", str(certs / "server.key"), "-out", str(out), "-traditional", cipher,
                    "-passout", "pass:s3cret"], check=True, capture_output=True, timeout=30)
    assert "Proc-Type: 4,ENCRYPTED" in out.read_text()
    port = free_port()
    with start_volley(*tls_server_args(certs, port)) as srv:
        r = client(srv)
        r.config_set("tls-key-file-pass", "wrong")
        with pytest.raises(redis.ResponseError, match="Unable to update TLS"):
            r.config_set("tls-key-file", str(out))
        r.config_set("tls-key-file-pass", "s3cret")
        r.config_set("tls-key-file", str(out))
        assert r.config_get("tls-key-file")["tls-key-file"] == str(out)
        assert tls_ping(certs, port) == "PONG"


def tls_ping(certs, port):
    proc = subprocess.run(["redis-cli", "-p", str(port), "--tls", "--cacert", str(certs / "ca.crt"),
                           "--cert", str(certs / "client.crt"), "--key", str(certs / "client.key"), "PING"],
                          capture_output=True, text=True, timeout=30)
    return proc.stdout.strip()


def test_encrypted_key_file(certs):
    enc = encrypt_key(certs)
    port = free_port()
    with start_volley(*tls_server_args(certs, port)) as srv:
        r = client(srv)
        with pytest.raises(redis.ResponseError, match="Unable to update TLS"):
            r.config_set("tls-key-file", str(enc))
        assert r.config_get("tls-key-file")["tls-key-file"] == str(certs / "server.key")
        r.config_set("tls-key-file-pass", "wrong")
        with pytest.raises(redis.ResponseError, match="Unable to update TLS"):
            r.config_set("tls-key-file", str(enc))
        r.config_set("tls-key-file-pass", "1234")
        r.config_set("tls-key-file", str(enc))
        assert tls_ping(certs, port) == "PONG"
    # At start, too.
    port = free_port()
    args = [*tls_server_args(certs, port)]
    args[args.index("--tls-key-file") + 1] = str(enc)
    with start_volley(*args, "--tls-key-file-pass", "1234"):
        assert tls_ping(certs, port) == "PONG"


def resumed(port, sess, version, save):
    """Whether openssl s_client resumed the session in file `sess`
    (saving the new one when `save`). QUIT, with -ign_eof, keeps s_client
    reading until the server closes: a TLS 1.3 ticket comes after the
    handshake."""
    flag = "-sess_out" if save else "-sess_in"
    proc = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", version, "-ign_eof", flag,
                           str(sess)], input="QUIT\r\n", capture_output=True, text=True, timeout=30)
    assert "+OK" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    return "Reused," in proc.stdout


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
def test_session_cache_timeout(certs, tmp_path, version):
    port = free_port()
    args = [*tls_server_args(certs, port), "--tls-auth-clients", "no", "--tls-session-cache-timeout", "1"]
    with start_volley(*args) as srv:
        sess = tmp_path / "sess"
        resumed(port, sess, version, save=True)
        assert resumed(port, sess, version, save=False)
        resumed(port, sess, version, save=True)
        time.sleep(2.5)
        assert not resumed(port, sess, version, save=False)
        client(srv).config_set("tls-session-cache-timeout", "300")
        resumed(port, sess, version, save=True)
        time.sleep(2.5)
        assert resumed(port, sess, version, save=False)
