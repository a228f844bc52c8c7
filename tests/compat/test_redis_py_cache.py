"""redis-py's RESP3 client-side cache against the server: a read is served
from the client's cache (the server sees no second GET), and another client's
write, a DEL, an expiry and FLUSHALL each reach the cache as an invalidation.

Every redis-py release with the `cache_config`/`CacheConfig` API (5.1.0 up to
8.x) refuses any server older than 7.4, real Redis 7.0.15 included, before it
sends a command. The last redis-py with a cache and no such gate is the
5.1.0b7 pre-release (`cache_enabled=True`, `CLIENT TRACKING ON` on the same
RESP3 connection), so that release is pinned here, installed by install.sh
into its own directory beside the suite's redis-py, and driven in a child
Python that imports it from there.
"""
import sys
import textwrap

from .conftest import BUILD, client_env, run

CACHE_REDIS_PY = BUILD / "redis-py-5.1.0b7"

SCRIPT = textwrap.dedent(r'''
    import os, sys, time
    # The beta's cache hooks into redis-py's own RESP3 parser only; with
    # hiredis importable it picks hiredis's parser and fails to connect.
    sys.modules["hiredis"] = None
    import redis

    assert redis.__version__ == "5.1.0b7", redis.__version__
    host, port = os.environ["REDIS_HOST"], int(os.environ["REDIS_PORT"])
    cached = redis.Redis(host=host, port=port, protocol=3, cache_enabled=True)
    other = redis.Redis(host=host, port=port)

    def gets():
        # How many GETs the server has run: a cache hit adds none.
        return other.info("commandstats").get("cmdstat_get", {}).get("calls", 0)

    def read_until(key, want):
        # An invalidation is a push the client reads before its next lookup;
        # give it a moment to cross the socket.
        deadline = time.monotonic() + 5
        while True:
            got = cached.get(key)
            if got == want or time.monotonic() > deadline:
                return got
            time.sleep(0.01)

    other.set("k", "v1")
    print("first", cached.get("k"), gets())
    print("cached", cached.get("k"), gets())
    other.set("k", "v2")
    print("after write", read_until("k", b"v2"), gets())
    print("cached again", cached.get("k"), gets())
    other.delete("k")
    print("after del", read_until("k", None))
    other.set("e", "soon", px=100)
    print("expiring", cached.get("e"))
    print("after expiry", read_until("e", None))
    other.set("f", "x")
    print("flush key", cached.get("f"))
    other.flushall()
    print("after flushall", read_until("f", None))
''')


def test_cache_serves_reads_and_sees_other_clients_writes(server):
    env = client_env(server, PYTHONPATH=str(CACHE_REDIS_PY))
    out = run([sys.executable, "-c", SCRIPT], env=env, timeout=60).stdout.splitlines()
    # The first GET reaches the server (1 call); the cached one does not.
    # The write invalidates, so the next GET is the server's 2nd, then it is
    # cached again.
    assert out == [
        "first b'v1' 1",
        "cached b'v1' 1",
        "after write b'v2' 2",
        "cached again b'v2' 2",
        "after del None",
        "expiring b'soon'",
        "after expiry None",
        "flush key b'x'",
        "after flushall None",
    ], out
