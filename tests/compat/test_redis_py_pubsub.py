"""redis-py's Pub/Sub against Volley, RESP2 and RESP3: get_message,
listen, pattern subscriptions, run_in_thread with 100 pipelined publishes.

(redis-py 8's client-side cache refuses servers older than Redis 7.4 in
its HELLO check, so it cannot be pointed at a 7.0-compatible server;
tracking itself is covered by crates/server/tests/tracking.rs and Redis's
unit/tracking.)"""
import threading
import time

import pytest
import redis


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def proto(request):
    return request.param


def client(server, protocol, **kw):
    return redis.Redis(host=server.host, port=server.port, protocol=protocol, decode_responses=True,
                       socket_timeout=10, **kw)


def next_message(ps, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        m = ps.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if m:
            return m
    raise AssertionError("no message")


def test_get_message_and_patterns(server, proto):
    sub, pub = client(server, proto), client(server, proto)
    ps = sub.pubsub()
    ps.subscribe("news")
    ps.psubscribe("user:*")
    assert next(m for m in iter(lambda: ps.get_message(timeout=1), None) if m["type"] == "subscribe")["channel"] == "news"
    assert pub.publish("news", "hello") >= 1
    assert pub.publish("user:42", "hi") == 1
    assert pub.publish("nobody", "x") == 0
    got = [next_message(ps), next_message(ps)]
    assert got[0]["type"] == "message" and got[0]["channel"] == "news" and got[0]["data"] == "hello"
    assert got[1] == {"type": "pmessage", "pattern": "user:*", "channel": "user:42", "data": "hi"}
    assert pub.pubsub_numsub("news") == [("news", 1)] and pub.pubsub_numpat() == 1
    ps.close()


def test_run_in_thread_gets_every_message_in_order(server, proto):
    sub, pub = client(server, proto), client(server, proto)
    seen, done = [], threading.Event()

    def handler(m):
        seen.append(m["data"])
        if len(seen) == 100:
            done.set()

    ps = sub.pubsub()
    ps.subscribe(**{"c": handler})
    worker = ps.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        deadline = time.time() + 5
        while pub.pubsub_numsub("c")[0][1] == 0 and time.time() < deadline:
            time.sleep(0.01)
        with pub.pipeline(transaction=False) as p:
            for i in range(100):
                p.publish("c", str(i))
            assert p.execute() == [1] * 100
        assert done.wait(10)
        assert seen == [str(i) for i in range(100)], "every message, in order"
    finally:
        worker.stop()
        worker.join(5)
        ps.close()


def test_listen(server, proto):
    sub, pub = client(server, proto), client(server, proto)
    ps = sub.pubsub(ignore_subscribe_messages=True)
    ps.subscribe("l")
    ps.get_message(timeout=1)
    for i in range(3):
        pub.publish("l", f"m{i}")
    got = []
    for m in ps.listen():
        got.append(m["data"])
        if len(got) == 3:
            break
    assert got == ["m0", "m1", "m2"]
    ps.close()
