"""Real clients over Volley's other transports: redis-cli -s and --tls,
redis-py over a Unix socket and with ssl=True (client certificate, since
tls-auth-clients defaults to yes, as in Redis)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))
from servers import free_port, start_volley  # noqa: E402

from .conftest import make_certs, tls_server_args  # noqa: E402

redis = pytest.importorskip("redis")


@pytest.fixture(scope="module")
def tserver(tmp_path_factory):
    d = tmp_path_factory.mktemp("transports")
    make_certs(d)
    sock = str(d / "v.sock")
    tls_port = free_port()
    args = ["--unixsocket", sock, "--unixsocketperm", "770", *tls_server_args(d, tls_port)]
    with start_volley(*args) as srv:
        srv.sock, srv.tls_port, srv.certs = sock, tls_port, d
        yield srv


def tls_args(srv):
    d = srv.certs
    return ["-p", str(srv.tls_port), "--tls", "--cacert", str(d / "ca.crt"),
            "--cert", str(d / "client.crt"), "--key", str(d / "client.key")]


def cli(*args, input=None):
    return subprocess.run(["redis-cli", *args], capture_output=True, text=True, input=input, timeout=30).stdout


def test_redis_cli_over_the_unix_socket(tserver):
    assert cli("-s", tserver.sock, "SET", "k", "unix") == "OK\n"
    assert cli("-s", tserver.sock, "GET", "k") == "unix\n"
    listing = cli("-s", tserver.sock, "CLIENT", "LIST")
    assert f"addr={tserver.sock}:0 laddr={tserver.sock}:0 " in listing and " flags=U " in listing, listing
    assert oct(os.stat(tserver.sock).st_mode & 0o777) == "0o770"
    proto = "".join(f"*3\r\n$3\r\nSET\r\n$5\r\nkey{i:02d}\r\n$1\r\nv\r\n" for i in range(100))
    assert "errors: 0, replies: 100" in cli("-s", tserver.sock, "--pipe", input=proto)


def test_redis_cli_over_tls(tserver):
    assert cli(*tls_args(tserver), "SET", "t", "tls") == "OK\n"
    assert cli(*tls_args(tserver), "GET", "t") == "tls\n"
    assert f"laddr=127.0.0.1:{tserver.tls_port} " in cli(*tls_args(tserver), "CLIENT", "INFO")
    # Without a client certificate the handshake is refused.
    d = tserver.certs
    refused = subprocess.run(["redis-cli", "-p", str(tserver.tls_port), "--tls", "--cacert", str(d / "ca.crt"), "PING"],
                             capture_output=True, text=True, timeout=30)
    assert "PONG" not in refused.stdout


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_over_the_unix_socket(tserver, protocol):
    r = redis.Redis(unix_socket_path=tserver.sock, protocol=protocol, decode_responses=True)
    assert r.set("py", "unix")
    p = r.pipeline(transaction=True)
    for i in range(1000):
        p.incr(f"n{protocol}")
    assert p.execute() == list(range(1, 1001))
    assert r.get("py") == "unix"
    r.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_with_ssl(tserver, protocol):
    d = tserver.certs
    r = redis.Redis(host="127.0.0.1", port=tserver.tls_port, ssl=True, ssl_ca_certs=str(d / "ca.crt"),
                    ssl_certfile=str(d / "client.crt"), ssl_keyfile=str(d / "client.key"),
                    protocol=protocol, decode_responses=True)
    assert r.set("py", "tls")
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set(f"k{i}", "x" * 100)
        p.get(f"k{i}")
    replies = p.execute()
    assert replies[-1] == "x" * 100 and len(replies) == 4000
    ps = r.pubsub()
    ps.subscribe("ch")
    assert ps.get_message(timeout=5)["type"] == "subscribe"
    assert r.publish("ch", "hello") == 1
    assert ps.get_message(timeout=5)["data"] == "hello"
    ps.close()
    r.close()
