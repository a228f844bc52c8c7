"""`redis.set_repl` against redis-server 7.0.15.

Redis 7.0 replicates scripts by effects; `redis.set_repl(flags)` decides
where the script's next commands go: the AOF (`REPL_AOF`), the replicas
(`REPL_REPLICA`), both (`REPL_ALL`) or neither (`REPL_NONE`). A script
that propagates more than one command is wrapped in MULTI/EXEC for both,
sent in the db of its first command and of its last, even where a
consumer takes none of the commands between; each consumer selects its
own databases. Keys found expired are deleted everywhere whatever the
setting. The same scripts run on a Volley and a redis-server primary
(AOF on, a raw SYNC attached) must give the same stream and AOF.
"""
import time

import redis

from replstream import SyncStream, aof_commands
from servers import start_redis, start_volley

# (db, script) run in order with EVAL ... 0 on the primary.
SCRIPTS = [
    (0, """redis.call('set','a','1')
           redis.set_repl(redis.REPL_NONE)
           redis.call('set','b','2')
           redis.set_repl(redis.REPL_AOF)
           redis.call('set','c','3')
           redis.set_repl(redis.REPL_ALL)
           redis.call('set','d','4')"""),
    # Alone: not wrapped; the other consumer gets nothing, not even SELECT.
    (3, "redis.set_repl(redis.REPL_AOF) redis.call('set','aof-only','1')"),
    (4, "redis.set_repl(redis.REPL_REPLICA) redis.call('set','replica-only','1')"),
    (0, "redis.set_repl(redis.REPL_NONE) redis.call('set','nowhere','1')"),
    # The first command and the last for one consumer, in other dbs: MULTI
    # and EXEC reach both, each consumer selecting their db first.
    (0, """redis.set_repl(redis.REPL_AOF)
           redis.call('select','5') redis.call('incr','x')
           redis.set_repl(redis.REPL_ALL)
           redis.call('select','6') redis.call('incr','y')
           redis.set_repl(redis.REPL_REPLICA)
           redis.call('select','7') redis.call('incr','z')"""),
    (0, """redis.set_repl(redis.REPL_REPLICA)
           redis.call('select','8') redis.call('incr','x')
           redis.set_repl(redis.REPL_AOF)
           redis.call('select','9') redis.call('incr','y')"""),
    # Two commands for neither, then one for both: wrapped? Redis counts
    # only what it propagates.
    (0, """redis.set_repl(redis.REPL_NONE)
           redis.call('set','n1','1') redis.call('set','n2','2')
           redis.set_repl(redis.REPL_ALL)
           redis.call('set','n3','3')"""),
    # A command replayed as another (INCRBYFLOAT as SET KEEPTTL) keeps the
    # setting.
    (0, "redis.set_repl(redis.REPL_AOF) redis.call('incrbyfloat','f','1.5') redis.call('incr','g')"),
    # PUBLISH goes to the replicas only, and only where set_repl lets it.
    (0, "redis.set_repl(redis.REPL_AOF) redis.call('publish','ch','to-nobody')"),
    (0, "redis.set_repl(redis.REPL_REPLICA) redis.call('publish','ch','to-replicas')"),
    # A key found expired is deleted everywhere, whatever the setting.
    (0, "redis.set_repl(redis.REPL_NONE) redis.call('get','gone') redis.call('set','kept-local','1')"),
    # The setting lasts for its run only.
    (2, "redis.call('set','last','1')"),
]


def timeless(cmds):
    """`cmds` with absolute expiry times (SET ... PXAT <ms>) blanked."""
    return [c[:-1] + ["<ms>"] if len(c) > 2 and c[-2].upper() == "PXAT" else c for c in cmds]


def stream_and_aof(start):
    args = ("--appendonly", "yes", "--appendfsync", "always", "--repl-ping-replica-period", "3600",
            "--enable-debug-command", "yes")
    with start(*args) as srv:
        stream = SyncStream(srv)
        r = redis.Redis(host=srv.host, port=srv.port, protocol=2)
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        r.set("gone", "v", px=1)
        # Expired by then, and left for the script's GET to find.
        time.sleep(0.05)
        for db, script in SCRIPTS:
            with redis.Redis(host=srv.host, port=srv.port, db=db, protocol=2) as c:
                c.eval(script, 0)
        return timeless(stream.commands(until=["set", "last", "1"])), timeless(aof_commands(srv))


def test_set_repl_sends_each_command_where_the_script_says():
    want_stream, want_aof = stream_and_aof(start_redis)
    got_stream, got_aof = stream_and_aof(start_volley)
    # The reference itself: what only one consumer must see.
    assert ["set", "b", "2"] not in want_stream + want_aof
    assert ["set", "c", "3"] in want_aof and ["set", "c", "3"] not in want_stream
    assert ["publish", "ch", "to-replicas"] in want_stream
    assert not any(c[0] == "publish" for c in want_aof)
    assert got_stream == want_stream
    assert got_aof == want_aof
