"""The go-redis v8 pipelining program from the Chinese seed, built once per
session into .build/go and run against the server."""
import re

import pytest

from .conftest import client_env, go_build, run


@pytest.fixture(scope="session")
def go_binary():
    return go_build("goseed", ".")


def test_go_redis_pipelining(go_binary, server):
    err = run([str(go_binary)], env=client_env(server), timeout=120).stderr
    # log.Printf writes "YYYY/MM/DD HH:MM:SS <msg>" lines to stderr.
    assert re.search(r"withPipelining took \d\S*s$", err, re.M), err
    assert re.search(r"withoutPipelining took \d\S*s$", err, re.M), err
    assert err.index("withPipelining took") < err.index("withoutPipelining took")
