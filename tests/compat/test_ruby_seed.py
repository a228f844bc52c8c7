"""The Ruby (redis-rb) benchmark from the Redis pipelining docs, run as-is."""
import re

from .conftest import HERE, client_env, run


def test_ruby_pipelining_bench(server):
    proc = run(["ruby", str(HERE / "ruby" / "pipelining_bench.rb")],
               env=client_env(server), timeout=120)
    # Debian's ruby-redis 4.8 warns on stderr that `r.ping` inside
    # `r.pipelined do ... end` is deprecated; that is expected and harmless.
    assert re.search(r"^without pipelining \d+(\.\d+)?(e-?\d+)? seconds$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^with pipelining \d+(\.\d+)?(e-?\d+)? seconds$", proc.stdout, re.M), proc.stdout
