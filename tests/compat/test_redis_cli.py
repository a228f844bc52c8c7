"""redis-cli (Debian's redis-tools 7.0) against the server. redis-cli prints
raw replies when stdout is not a terminal; --no-raw forces the interactive
'(integer) 1' / '(error) ...' form."""
from .conftest import cli


def out(srv, *args, **kw):
    return cli(srv, *args, **kw).stdout


def test_ping_set_get_incr(server):
    assert out(server, "PING") == "PONG\n"
    assert out(server, "SET", "greeting", "hello world") == "OK\n"
    assert out(server, "GET", "greeting") == "hello world\n"
    assert out(server, "--no-raw", "GET", "greeting") == '"hello world"\n'
    assert out(server, "--no-raw", "GET", "missing") == "(nil)\n"
    assert out(server, "--no-raw", "INCR", "counter") == "(integer) 1\n"
    assert out(server, "INCR", "counter") == "2\n"


def test_raw_output(server):
    cli(server, "SET", "multi", "line one\nline two")
    assert out(server, "--raw", "GET", "multi") == "line one\nline two\n"
    assert out(server, "--raw", "INCR", "n") == "1\n"
    assert out(server, "--raw", "MGET", "multi", "n", "missing") == "line one\nline two\n1\n\n"


def test_error_reply(server):
    cli(server, "SET", "word", "abc")
    assert out(server, "--no-raw", "INCR", "word", check=False) == \
        "(error) ERR value is not an integer or out of range\n"
    assert out(server, "--raw", "INCR", "word", check=False).startswith(
        "ERR value is not an integer or out of range\n")


def test_pipe_mass_insertion(server):
    proto = "".join(f"*3\r\n$3\r\nSET\r\n${len(k)}\r\n{k}\r\n${len(v)}\r\n{v}\r\n"
                    for k, v in ((f"key:{i}", f"value:{i}") for i in range(10000)))
    piped = cli(server, "--pipe", input=proto, timeout=60).stdout
    assert "errors: 0, replies: 10000" in piped, piped
    assert out(server, "DBSIZE") == "10000\n"
    assert out(server, "GET", "key:9999") == "value:9999\n"


def test_password(auth_server):
    pw = auth_server.password
    assert "NOAUTH" in out(auth_server, "--no-raw", "PING", check=False)
    warned = cli(auth_server, "-a", pw, "PING")
    assert warned.stdout == "PONG\n"
    assert "Warning: Using a password" in warned.stderr
    quiet = cli(auth_server, "PING", password=pw)  # adds --no-auth-warning
    assert (quiet.stdout, quiet.stderr) == ("PONG\n", "")
    assert out(auth_server, "SET", "k", "v", password=pw) == "OK\n"
    assert out(auth_server, "GET", "k", password=pw) == "v\n"
