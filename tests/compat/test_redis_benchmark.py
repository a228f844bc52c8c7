"""redis-benchmark (redis-tools 7.0) against the server: every test line
must report a positive requests/sec and the run must exit 0."""
import re

import pytest

from .conftest import run

TESTS = {"SET", "GET", "INCR", "MSET (10 keys)"}


def bench(srv, *args):
    argv = ["redis-benchmark", "-h", srv.host, "-p", str(srv.port), "-q", *args]
    out = run(argv, timeout=180).stdout
    # -q rewrites a progress line with \r before printing each result.
    found = {}
    for line in re.split(r"[\r\n]", out):
        m = re.match(r"\s*(.+?): ([\d.]+) requests per second", line)
        if m:
            found[m.group(1)] = float(m.group(2))
    return found, out


@pytest.mark.parametrize("pipeline", ["16", "1"])
def test_benchmark(server, pipeline):
    found, out = bench(server, "-n", "20000", "-c", "20", "-P", pipeline,
                       "-t", "set,get,incr,mset")
    assert set(found) == TESTS, out
    assert all(rps > 0 for rps in found.values()), out


def test_benchmark_with_password(auth_server):
    found, out = bench(auth_server, "-a", auth_server.password, "-n", "5000",
                       "-c", "10", "-t", "set,get")
    assert set(found) == {"SET", "GET"}, out
    assert all(rps > 0 for rps in found.values()), out


def test_the_floor_server_answers_every_test_floor_py_runs():
    """bench/floor.py's do-nothing server must give redis-benchmark a reply
    of the right shape for each test it is measured on (a wrong shape
    would make redis-benchmark stall or error instead of timing it)."""
    from servers import REPO, Server

    floor = REPO / "target" / "release" / "volley-floor"
    assert floor.exists(), "cargo build --release builds volley-floor"
    tests = "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,mset"
    with Server(str(floor)) as srv:
        found, out = bench(srv, "-n", "5000", "-c", "10", "-P", "16", "-t", tests)
    names = {name.split(" (")[0] for name in found}
    assert names == set(tests.upper().split(",")), out
    assert all(rps > 0 for rps in found.values()), out
