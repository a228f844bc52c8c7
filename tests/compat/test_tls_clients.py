"""Jedis and go-redis over TLS, each with a real workload: the client trusts
the test CA, presents a client certificate (the server requires one, as
tls-auth-clients defaults to yes) and logs in as an ACL user limited to app:*
keys and channels. The programs (java/src/main/java/tls, go/tls) pipeline
2000 writes and reads, run a MULTI, block in BLPOP until a push, receive a
PUBLISH, and check the NOPERM/WRONGPASS refusals and a handshake without a
client certificate; each checks every step itself and the test pins its
whole output."""
import pytest

from certs import P12_PASS
from servers import free_port

from .conftest import START, cli, client_env, go_build, make_certs, run, tls_server_args

USER, PASS = "app", "app-pass"


@pytest.fixture
def tls_server(tmp_path):
    certs = make_certs(tmp_path)
    tls_port = free_port()
    with START(*tls_server_args(certs, tls_port)) as srv:
        # CLIENT LIST (how the programs see BLPOP blocked) stays allowed.
        cli(srv, "ACL", "SETUSER", USER, "on", f">{PASS}", "~app:*", "&app:*", "+@all", "-flushall")
        srv.password = None
        srv.env = client_env(srv, TLS_PORT=str(tls_port), TLS_CA=str(certs / "ca.crt"),
                             TLS_CERT=str(certs / "client.crt"), TLS_KEY=str(certs / "client.key"),
                             TLS_P12=str(certs / "client.p12"), TLS_P12_PASS=P12_PASS,
                             ACL_USER=USER, ACL_PASS=PASS)
        yield srv


REFUSALS = [
    "flushall NOPERM this user has no permissions to run the 'flushall' command",
    "get other:key NOPERM this user has no permissions to access one of the keys used as arguments",
    "wrong password WRONGPASS invalid username-password pair or user is disabled.",
    "no client certificate refused true",
    "done",
]


@pytest.mark.parametrize("proto", ["resp2", "resp3"])
def test_jedis_over_tls(classpath, tls_server, proto):
    p = f"app:{proto}:"
    out = run(["java", "-cp", classpath, "tls.JedisTlsCheck", proto], env=tls_server.env, timeout=120)
    assert out.stdout.splitlines() == [
        f"whoami {USER}",
        "pipelined reads intact 2000",
        "exec [1, 42, OK, in-multi]",
        "blpop blocked true",
        "rpush 1",
        f"blpop [{p}q, job1]",
        f"event subscribe {p}ch 1",
        "publish 1",
        f"event message {p}ch over tls",
        "event subscribe() returned",
        "publish other NOPERM this user has no permissions to access one of the channels used as arguments",
        *REFUSALS,
    ]


@pytest.fixture(scope="session")
def go_tls_binary():
    return go_build("gotls", "./tls")


def test_go_redis_over_tls(go_tls_binary, tls_server):
    out = run([str(go_tls_binary)], env=tls_server.env, timeout=120)
    assert out.stdout.splitlines() == [
        f"whoami {USER}",
        "pipelined writes no error",
        "pipelined reads intact 2000",
        "exec no error",
        "exec replies 1 42 in-multi",
        "blpop blocked true",
        "rpush 1",
        "blpop [app:go:q job1] <nil>",
        "subscribe subscribe: app:go:ch <nil>",
        "publish 1",
        "message Message<app:go:ch: over tls> <nil>",
        "publish other NOPERM this user has no permissions to access one of the channels used as arguments",
        *REFUSALS,
    ]
