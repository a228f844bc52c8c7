"""redis-py's stream API against the server, RESP2 and RESP3: a consumer-group
job queue as applications write it. A producer thread XADDs jobs; two worker
threads loop on XREADGROUP with BLOCK, process and XACK; one worker crashes
with messages delivered but never acknowledged, and a recovery loop takes
them over with XAUTOCLAIM and finishes them. Every job must end processed
and acknowledged exactly once, with nothing left pending. A second test
covers XCLAIM and XAUTOCLAIM's report of entries deleted while pending.

Every wait is bounded: BLOCK is short, loops have deadlines, threads are
joined with timeouts."""
import threading
import time
from collections import Counter

import pytest
import redis

JOBS = 300
CRASH_AFTER = 20         # messages the second worker handles before it crashes
STREAM, GROUP = "jobs", "workers"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def proto(request):
    return request.param


def client(server, protocol):
    return redis.Redis(host=server.host, port=server.port, protocol=protocol, decode_responses=True,
                       socket_timeout=10)


def entries_of(reply, stream=STREAM):
    """XREADGROUP's entries for one stream in the shape redis-py gives for
    the protocol: RESP2 [[stream, entries]], RESP3 {stream: [entries]}."""
    if not reply:
        return []
    if isinstance(reply, dict):
        [(name, [items])] = reply.items()
    else:
        [(name, items)] = reply
    assert name == stream
    return items


class Ledger:
    """What the workers did, shared by the threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.processed = Counter()      # job number -> times processed
        self.acked = Counter()          # entry ID -> times XACK said 1
        self.by = Counter()             # consumer -> jobs processed
        self.errors = []

    def done(self):
        with self.lock:
            return sum(self.acked.values()) >= JOBS


def process(r, ledger, consumer, msg_id, fields):
    job = int(fields["job"])
    time.sleep(0.0005)                  # the work itself
    assert fields["payload"] == f"work-{job}", fields
    with ledger.lock:
        ledger.processed[job] += 1
        ledger.by[consumer] += 1
    n = r.xack(STREAM, GROUP, msg_id)
    with ledger.lock:
        ledger.acked[msg_id] += n


def producer(server, proto, ledger, ids):
    r = client(server, proto)
    try:
        for start in range(0, JOBS, 25):
            with r.pipeline(transaction=False) as p:
                for job in range(start, min(start + 25, JOBS)):
                    p.xadd(STREAM, {"job": job, "payload": f"work-{job}"})
                ids.extend(p.execute())
            time.sleep(0.005)
    except Exception as e:  # noqa: BLE001 - reported by the test
        ledger.errors.append(f"producer: {e!r}")
    finally:
        r.close()


def worker(server, proto, ledger, consumer, stop, crash_after=None, crashed=None):
    """XREADGROUP > in a loop; with crash_after, handle that many messages,
    then take one more batch and die without acknowledging it."""
    r = client(server, proto)
    handled = 0
    try:
        while not stop.is_set():
            reply = r.xreadgroup(GROUP, consumer, {STREAM: ">"}, count=10, block=50)
            batch = entries_of(reply)
            if crash_after is not None and handled >= crash_after and batch:
                crashed.extend(msg_id for msg_id, _ in batch)
                return                      # crash: delivered, never acknowledged
            for msg_id, fields in batch:
                process(r, ledger, consumer, msg_id, fields)
                handled += 1
    except Exception as e:  # noqa: BLE001
        ledger.errors.append(f"{consumer}: {e!r}")
    finally:
        r.close()


def recovery(server, proto, ledger, stop, claimed):
    """XAUTOCLAIM entries idle for over 100 ms, as a janitor process would."""
    r = client(server, proto)
    try:
        while not stop.is_set():
            cursor = "0-0"
            while True:
                reply = r.xautoclaim(STREAM, GROUP, "janitor", min_idle_time=100, start_id=cursor, count=5)
                cursor, msgs = reply[0], reply[1]
                for msg_id, fields in msgs:
                    claimed.append(msg_id)
                    process(r, ledger, "janitor", msg_id, fields)
                if cursor == "0-0":
                    break
            time.sleep(0.05)
    except Exception as e:  # noqa: BLE001
        ledger.errors.append(f"janitor: {e!r}")
    finally:
        r.close()


def test_consumer_group_job_queue(server, proto):
    r = client(server, proto)
    assert r.xgroup_create(STREAM, GROUP, id="0", mkstream=True) is True
    ledger, ids, crashed, claimed = Ledger(), [], [], []
    stop = threading.Event()
    threads = [
        threading.Thread(target=worker, args=(server, proto, ledger, "w1", stop)),
        threading.Thread(target=worker, args=(server, proto, ledger, "w2", stop, CRASH_AFTER, crashed)),
        threading.Thread(target=producer, args=(server, proto, ledger, ids)),
    ]
    for t in threads:
        t.start()
    threads[2].join(30)
    assert not threads[2].is_alive(), "producer still running after 30 s"
    threads[1].join(30)
    assert not threads[1].is_alive(), "the crashing worker never crashed"
    assert crashed, "the crashing worker crashed with nothing delivered"

    # The crashed worker's messages are pending on it, delivered once.
    pending = r.xpending_range(STREAM, GROUP, min="-", max="+", count=1000, consumername="w2")
    assert [p["message_id"] for p in pending] == crashed
    assert all(p["consumer"] == "w2" and p["times_delivered"] == 1 for p in pending)

    janitor = threading.Thread(target=recovery, args=(server, proto, ledger, stop, claimed))
    janitor.start()
    deadline = time.time() + 30
    while not ledger.done() and time.time() < deadline and not ledger.errors:
        time.sleep(0.02)
    stop.set()
    for t in (threads[0], janitor):
        t.join(10)
        assert not t.is_alive(), f"{t.name} did not stop"
    assert not ledger.errors, ledger.errors

    # Every job processed once and acknowledged once; the janitor finished
    # exactly what the crashed worker left behind.
    assert len(ids) == JOBS and len(set(ids)) == JOBS
    assert ledger.processed == Counter(range(JOBS))
    assert ledger.acked == Counter(ids)
    assert sorted(claimed) == sorted(crashed)
    assert ledger.by["w2"] >= CRASH_AFTER
    assert ledger.by["w1"] + ledger.by["w2"] + ledger.by["janitor"] == JOBS
    assert ledger.by["janitor"] == len(crashed)

    summary = r.xpending(STREAM, GROUP)
    assert summary["pending"] == 0 and summary["min"] is None and summary["max"] is None
    assert summary["consumers"] == []
    assert r.xpending_range(STREAM, GROUP, min="-", max="+", count=10) == []
    assert r.xlen(STREAM) == JOBS

    [group] = r.xinfo_groups(STREAM)
    assert group["name"] == GROUP
    assert group["consumers"] == 3
    assert group["pending"] == 0
    assert group["last-delivered-id"] == ids[-1]
    assert group["entries-read"] == JOBS
    assert group["lag"] == 0
    consumers = {c["name"]: c for c in r.xinfo_consumers(STREAM, GROUP)}
    assert set(consumers) == {"w1", "w2", "janitor"}
    assert all(c["pending"] == 0 and c["idle"] >= 0 for c in consumers.values())
    info = r.xinfo_stream(STREAM)
    assert info["length"] == JOBS and info["groups"] == 1
    assert info["last-generated-id"] == ids[-1] and info["entries-added"] == JOBS
    assert info["first-entry"][0] == ids[0] and info["last-entry"][0] == ids[-1]
    r.close()


def test_claims_and_deleted_entries(server, proto):
    r = client(server, proto)
    ids = [r.xadd("s", {"n": i}, id=f"{i + 1}-0") for i in range(5)]
    assert ids == ["1-0", "2-0", "3-0", "4-0", "5-0"]
    assert r.xgroup_create("s", "g", id="0") is True
    got = entries_of(r.xreadgroup("g", "alice", {"s": ">"}, count=4), "s")
    assert [m[0] for m in got] == ids[:4]
    assert r.xdel("s", "2-0") == 1

    # XCLAIM JUSTID moves ownership without bumping the delivery count.
    assert r.xclaim("s", "g", "bob", min_idle_time=0, message_ids=["1-0"], justid=True) == ["1-0"]
    p = r.xpending_range("s", "g", min="1-0", max="1-0", count=1)
    assert p[0]["consumer"] == "bob" and p[0]["times_delivered"] == 1
    # A plain XCLAIM returns the entry and counts a delivery; a deleted one is dropped.
    claimed = r.xclaim("s", "g", "bob", min_idle_time=0, message_ids=["3-0", "2-0"])
    assert claimed == [("3-0", {"n": "2"})]
    assert r.xpending_range("s", "g", min="3-0", max="3-0", count=1)[0]["times_delivered"] == 2
    # Nothing is idle for an hour: a long min-idle claims nothing.
    assert r.xclaim("s", "g", "carol", min_idle_time=3_600_000, message_ids=["4-0"]) == []

    # XAUTOCLAIM reports entries deleted while pending (Redis 7) and drops them.
    assert r.xdel("s", "4-0") == 1
    cursor, msgs, deleted = r.xautoclaim("s", "g", "carol", min_idle_time=0, start_id="0-0", count=10)[:3]
    assert cursor == "0-0"
    assert msgs == [("1-0", {"n": "0"}), ("3-0", {"n": "2"})]
    assert deleted == ["4-0"]
    justid = r.xautoclaim("s", "g", "dave", min_idle_time=0, start_id="0-0", count=1, justid=True)
    assert justid == ["1-0"]            # redis-py returns only the IDs for JUSTID
    assert r.xpending("s", "g")["pending"] == 2
    assert r.xack("s", "g", "1-0", "3-0", "4-0") == 2
    assert r.xpending("s", "g")["pending"] == 0
    r.close()

