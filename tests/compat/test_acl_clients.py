"""ACL users with real clients: redis-cli --user/--pass and redis-py's
username/password, against a user limited to `+@read +@write ~app:*`
(and a default user with a password, so nobody gets in without one)."""
import pytest
import redis

from .conftest import cli


@pytest.fixture
def acl_server(server):
    r = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    assert r.execute_command("ACL", "SETUSER", "app", "on", ">app-pw", "+@read", "+@write", "~app:*") == "OK"
    assert r.execute_command("ACL", "SETUSER", "default", "resetpass", ">admin-pw") == "OK"
    r.close()
    return server


def test_redis_cli_user_and_pass(acl_server):
    user = ["--user", "app", "--pass", "app-pw", "--no-auth-warning"]
    assert cli(acl_server, *user, "SET", "app:1", "hello").stdout.strip() == "OK"
    assert cli(acl_server, *user, "GET", "app:1").stdout.strip() == "hello"
    out = cli(acl_server, *user, "SET", "other", "x").stdout.strip()
    assert out == "NOPERM this user has no permissions to access one of the keys used as arguments"
    out = cli(acl_server, *user, "CONFIG", "GET", "maxmemory").stdout.strip()
    assert out == "NOPERM this user has no permissions to run the 'config|get' command"
    out = cli(acl_server, "--user", "app", "--pass", "wrong", "--no-auth-warning", "GET", "app:1")
    assert "WRONGPASS invalid username-password pair or user is disabled." in out.stdout + out.stderr
    assert cli(acl_server, "GET", "app:1").stdout.strip().startswith("NOAUTH")


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_acl_user(acl_server, protocol):
    r = redis.Redis(host=acl_server.host, port=acl_server.port, username="app", password="app-pw",
                    protocol=protocol, decode_responses=True, socket_timeout=10)
    try:
        assert r.set("app:n", 1) is True
        assert r.incr("app:n") == 2
        p = r.pipeline()
        p.set("app:a", "x").get("app:a").set("nope", "y")
        with pytest.raises(redis.exceptions.NoPermissionError):
            p.execute()
        with pytest.raises(redis.exceptions.NoPermissionError):
            r.get("secret")
    finally:
        r.close()
    admin = redis.Redis(host=acl_server.host, port=acl_server.port, username="default", password="admin-pw",
                        protocol=protocol, decode_responses=True)
    try:
        assert admin.acl_whoami() == "default"
        entry = admin.acl_log(count=1)[0]
        assert entry["username"] == "app" and entry["reason"] == "key"
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(host=acl_server.host, port=acl_server.port, username="app", password="bad",
                        protocol=protocol).ping()
    finally:
        admin.close()
