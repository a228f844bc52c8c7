"""go-redis v8 Pub/Sub against the server: SUBSCRIBE/PSUBSCRIBE
confirmations through Receive, PING inside a subscription, PUBLISH receiver
counts, ordered and binary-safe delivery through ReceiveMessage and the
Channel() API, pattern messages, UNSUBSCRIBE/PUNSUBSCRIBE (including the
null-channel reply) and PUBSUB NUMSUB/CHANNELS/NUMPAT. The Go program
(go/pubsub) checks each step itself and the test pins its whole output."""
import pytest

from .conftest import client_env, go_build, run


@pytest.fixture(scope="session")
def go_pubsub_binary():
    return go_build("gopubsub", "./pubsub")


EXPECTED = """\
subscribe c1 1
subscribe c2 2
subscribe p:both 3
psubscribe p:* 4
subscribe c1 4
pong "hi"
pong ""
numsub c1=1 c2=1 p:both=1 none=0
channels * [c1 c2 p:both]
channels c* [c1 c2]
numpat 1
publish c1 1
publish nobody 0
publish p:x 1
publish p:both 2
publish c2 1
publish c1 1
message c1 "hello"
pmessage p:* p:x "pm"
message p:both "twice"
pmessage p:* p:both "twice"
message c2 binary 259 bytes intact
message c1 ""
unsubscribe c1 3
publish c1 0
unsubscribe never 3
punsubscribe p:* 2
numpat 0
publish p:x 0
unsubscribe c2 1
unsubscribe p:both 0
unsubscribe <nil> 0
channels * []
subscribe stream 1
psubscribe ev.* 2
pipelined publish 101 x 1
channel stream 100 messages in order
pmessage ev.* ev.done "end"
publish stream 1
message stream "after-ping"
channel closed
numsub stream=0
done
""".splitlines()


def test_go_redis_pubsub(go_pubsub_binary, server):
    # The program exits non-zero at the first mismatch (run() then fails the
    # test with its stderr); comparing every line also catches a skipped step.
    out = run([str(go_pubsub_binary)], env=client_env(server), timeout=60).stdout
    assert out.splitlines() == EXPECTED
