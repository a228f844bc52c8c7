"""FUNCTION libraries crossing between redis-server 7.0.15 and Volley: in
the RDB (a library loaded on one server survives SAVE and loads on the
other, redis-check-rdb accepting Volley's file) and as FUNCTION DUMP
payloads (each server restores the other's). These tests always involve
both servers, whatever VOLLEY_TEST_TARGET says.
"""
import subprocess

import redis

from servers import start_redis, start_volley

LIB = """#!lua name=compat
redis.register_function('incr_by', function(keys, args)
  return redis.call('incrby', keys[1], args[1])
end)
redis.register_function{function_name='peek', description='read one key',
  callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}
"""


def client(srv):
    return redis.Redis(host=srv.host, port=srv.port, socket_timeout=30, protocol=2)


def listing(r):
    """FUNCTION LIST WITHCODE with each library's functions sorted: Redis
    lists them in hash-table order (COMMAND DOCS: nondeterministic order)."""
    libs = r.execute_command("FUNCTION", "LIST", "WITHCODE")
    for lib in libs:
        at = lib.index(b"functions") + 1
        lib[at] = sorted(lib[at])
    return libs


def check_library(r, listing_before):
    assert listing(r) == listing_before
    assert r.fcall("incr_by", 1, "n", 5) == 5
    assert r.fcall_ro("peek", 1, "n") == b"5"


def test_redis_loads_a_library_saved_by_volley(shared_dir):
    with start_volley("--dir", shared_dir) as vol:
        r = client(vol)
        assert r.function_load(LIB) in (b"compat", "compat")
        want = listing(r)
        assert r.save() is True
    check = subprocess.run(["redis-check-rdb", f"{shared_dir}/dump.rdb"], capture_output=True, text=True)
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    with start_redis("--dir", shared_dir) as red:
        check_library(client(red), want)


def test_volley_loads_a_library_saved_by_redis(shared_dir):
    with start_redis("--dir", shared_dir) as red:
        r = client(red)
        r.function_load(LIB)
        want = listing(r)
        assert r.save() is True
    with start_volley("--dir", shared_dir) as vol:
        check_library(client(vol), want)


def test_function_dump_payloads_cross_both_ways():
    with start_redis() as red, start_volley() as vol:
        rr, vr = client(red), client(vol)
        rr.function_load(LIB)
        want = listing(rr)
        assert vr.function_restore(rr.function_dump()) is True
        check_library(vr, want)
        rr.function_flush()
        assert rr.function_restore(vr.function_dump()) is True
        rr.delete("n")
        check_library(rr, want)
