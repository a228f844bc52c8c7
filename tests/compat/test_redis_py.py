"""redis-py with the hiredis parser, over RESP2, RESP3 and the library's
default (redis-py 8 opens every connection with HELLO 3)."""
import pytest
import redis


@pytest.fixture(params=[2, 3, None], ids=["resp2", "resp3", "default"])
def r(request, server):
    client = redis.Redis(host=server.host, port=server.port, protocol=request.param,
                         decode_responses=True, socket_timeout=10)
    client.expected_proto = request.param
    yield client
    client.close()


def test_uses_hiredis(r):
    assert redis.utils.HIREDIS_AVAILABLE
    conn = r.connection_pool.get_connection()
    try:
        assert type(conn._parser).__name__ == "_HiredisParser"
    finally:
        r.connection_pool.release(conn)


def test_strings_and_expiry(r):
    assert r.set("a", "1") is True
    assert r.get("a") == "1"
    assert r.incr("a") == 2
    assert r.incr("a", 10) == 12
    assert r.get("missing") is None
    assert r.mget("a", "missing", "b") == ["12", None, None]
    assert r.ttl("a") == -1 and r.ttl("missing") == -2
    assert r.expire("a", 100) is True
    assert 99 <= r.ttl("a") <= 100
    assert r.execute_command("PING") is True


def test_pipeline_10k_in_order(r):
    p = r.pipeline(transaction=False)
    for i in range(5000):
        p.set(f"k{i}", i)
        p.get(f"k{i}")
    expected = [x for i in range(5000) for x in (True, str(i))]
    assert p.execute() == expected


def test_error_types(r):
    r.set("word", "abc")
    with pytest.raises(redis.ResponseError, match="not an integer or out of range"):
        r.incr("word")
    p = r.pipeline(transaction=False)
    p.incr("word").incr("n").get("word")
    res = p.execute(raise_on_error=False)
    assert isinstance(res[0], redis.ResponseError) and res[1:] == [1, "abc"]
    assert r.ping() is True  # the connection is still usable


def test_client_name_and_select(r, server):
    assert r.client_setname("compat-client") is True
    assert r.client_getname() == "compat-client"
    assert r.select(3) is True
    r.set("where", "db3")
    assert r.get("where") == "db3"
    db0 = redis.Redis(host=server.host, port=server.port, decode_responses=True)
    assert db0.get("where") is None
    db0.close()


def test_hello(r):
    hello = r.execute_command("HELLO")
    if isinstance(hello, list):  # RESP2 has no maps: a flat key/value array
        hello = dict(zip(hello[::2], hello[1::2]))
    assert isinstance(hello, dict)
    assert {"proto", "server", "version"} <= set(hello)
    assert hello["proto"] == (r.expected_proto or hello["proto"])
