"""Jedis Pub/Sub against the server over RESP2 and RESP3: a JedisPubSub
listener blocked in subscribe() on its own thread while a second connection
publishes; PSUBSCRIBE added mid-subscription, PING (RESP2), PUBLISH receiver
counts, UTF-8 and binary payloads, overlapping patterns, PUBSUB
NUMSUB/CHANNELS/NUMPAT/SHARDNUMSUB/SHARDCHANNELS, SSUBSCRIBE/SPUBLISH, and
unsubscribing everything to return from subscribe(). The Java program
(java/src/main/java/pubsub) checks each step itself and the test pins its
whole output."""
import pytest

from .conftest import java

MAIN = "pubsub.JedisPubSubCheck"


def expected(proto):
    # Jedis can only ping a subscription safely over RESP2 (see the program).
    pongs = ['pong ""', 'pong "hi"'] if proto == "resp2" else []
    counts = ("message=4, pmessage=4, " + ("pong=2, " if pongs else "") +
              "psubscribe=3, punsubscribe=3, smessage=1, ssubscribe=1, subscribe=3, "
              "sunsubscribe=1, unsubscribe=3")
    return [
        f"protocol {proto.upper()}",
        "subscribe c1 1",
        "subscribe c2 2",
        "psubscribe p:* 3",
        *pongs,
        "publish c1 1",
        "publish nobody 0",
        "publish p:x 1",
        "publish c2 1",
        "publish c1 1",
        'message c1 "hello"',
        'pmessage p:* p:x "pm"',
        r'message c2 "h\u00e9llo \u2713 \u65e5\u672c"',
        'message c1 ""',
        "numsub {c1=1, c2=1, none=0}",
        "channels [c1, c2]",
        "channels c1* [c1]",
        "numpat 1",
        "unsubscribe c1 2",
        "publish c1 0",
        "punsubscribe p:* 1",
        "numpat 0",
        "subscribed true 1",
        "unsubscribe c2 0",
        "subscribe() returned",
        "subscribed false",
        "after ping PONG",
        "after set OK v",
        "psubscribe ev.* 1",
        "psubscribe ev.a 2",
        "publish ev.a 2",
        "publish ev.b 1",
        'pmessage ev.* ev.a "both"',
        'pmessage ev.a ev.a "both"',
        'pmessage ev.* ev.b "one"',
        "numpat 2",
        "punsubscribe ev.a 1",
        "punsubscribe ev.* 0",
        "psubscribe() returned",
        "binary subscribe true 1",
        "publish binary 1",
        "binary message true 258 bytes intact",
        "binary unsubscribe true 0",
        "binary subscribe() returned",
        "ssubscribe s1 1",
        "spublish s1 1",
        "publish s1 0",
        'smessage s1 "shard"',
        "shardnumsub {s1=1, s2=0}",
        "shardchannels [s1]",
        "sunsubscribe s1 0",
        "ssubscribe() returned",
        "counts {" + counts + "}",
        "done",
    ]


@pytest.mark.parametrize("proto", ["resp2", "resp3"])
def test_jedis_pubsub(classpath, server, proto):
    # The program exits non-zero at the first mismatch (java() then fails the
    # test with its stderr); comparing every line also catches a skipped step.
    assert java(classpath, server, MAIN, proto, timeout=60) == expected(proto)
