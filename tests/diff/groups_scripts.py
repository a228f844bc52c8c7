"""Differential builders for Lua scripting: EVAL/EVALSHA/EVAL_RO/EVALSHA_RO
with scripts that call commands on random keys, convert every kind of value
both ways, raise errors (compile, runtime, redis.call, sandbox), and the
SCRIPT LOAD/EXISTS/FLUSH cache commands. No cjson/cmsgpack/bit/struct, no
math.random (its stream is per server), no hash-ordered replies."""
import hashlib

from generator import command

SCRIPTS = [
    b"return redis.call('set', KEYS[1], ARGV[1])",
    b"return redis.call('get', KEYS[1])",
    b"return redis.call('incr', KEYS[1])",
    b"return redis.pcall('incr', KEYS[1])",
    b"return redis.call('append', KEYS[1], ARGV[1])",
    b"return redis.call('rpush', KEYS[1], ARGV[1])",
    b"return redis.call('lrange', KEYS[1], 0, -1)",
    b"return redis.call('zadd', KEYS[1], 1.5, ARGV[1])",
    b"return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
    b"return redis.call('hset', KEYS[1], 'f', ARGV[1])",
    b"return redis.call('hget', KEYS[1], 'f')",
    b"return redis.call('type', KEYS[1])",
    b"return redis.call('exists', KEYS[1])",
    b"return redis.call('del', unpack(KEYS))",
    b"return redis.call('blmpop', 0, 1, KEYS[1], 'left')",
    b"return redis.call('mget', unpack(KEYS))",
    b"return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
    b"return tonumber(ARGV[1])",
    b"return {1, 2.5, -3.99, 'x', false, true, {ok='fine'}, {err='bad'}, {1, {2}}}",
    b"return {1, 2, nil, 4}",
    b"return redis.status_reply('DONE')",
    b"return redis.error_reply('MY failure')",
    b"return redis.status_reply()",
    b"local v = redis.call('get', KEYS[1]) if v then return string.len(v) end return false",
    b"local t = redis.call('type', KEYS[1]) return t.ok",
    b"local r = redis.pcall('lpush', KEYS[1], 'x') if type(r) == 'table' and r.err then return r.err end return r",
    b"redis.setresp(3) return redis.call('zscore', KEYS[1], ARGV[1])",
    b"redis.setresp(3) return {true, false, redis.call('get', KEYS[1])}",
    b"return {double = 3.25}",
    b"return {map = {a = 1}}",
    b"return {set = {x = true}}",
    b"return redis.sha1hex(ARGV[1])",
    b"return redis.call('set', KEYS[1])",
    b"return redis.call('nosuchcommand', KEYS[1])",
    b"return redis.call('eval', 'return 1', 0)",
    b"return redis.call(KEYS[1], {})",
    b"return redis.call()",
    b"error('script failure')",
    b"error({err = 'CUSTOM table error'})",
    b"return undefined_global",
    b"new_global = 1",
    b"redis.x = 1",
    b"return os.time()",
    b"return 1 +",
    b"local x = 1\nlocal y = nil\nreturn y.field",
    b"#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
    b"#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')",
    b"#!lua flags=nope\nreturn 1",
]


def sha(body):
    return hashlib.sha1(body).hexdigest().encode()


def script_args(g):
    keys = g.keys_n(1, 3)
    args = [g.value() for _ in range(g.rng.randint(1, 2))]
    return [str(len(keys)).encode()] + keys + args


@command("scripts", 4)
def eval_cmd(g):
    name = b"EVAL_RO" if g.chance(0.15) else b"EVAL"
    return [name, g.pick(SCRIPTS)] + script_args(g)


@command("scripts", 2)
def load_then_evalsha(g):
    body = g.pick(SCRIPTS)
    name = b"EVALSHA_RO" if g.chance(0.15) else b"EVALSHA"
    digest = sha(body)
    if g.chance(0.3):
        digest = digest.upper()
    return [[b"SCRIPT", b"LOAD", body], [name, digest] + script_args(g)]


@command("scripts", 1)
def evalsha_maybe_cached(g):
    # Cached only if an earlier EVAL/LOAD of the same body ran (and no FLUSH since).
    return [b"EVALSHA", sha(g.pick(SCRIPTS))] + script_args(g)


@command("scripts", 1)
def script_admin(g):
    r = g.rng.random()
    if r < 0.5:
        return [b"SCRIPT", b"EXISTS"] + [sha(g.pick(SCRIPTS)) for _ in range(g.rng.randint(1, 3))]
    if r < 0.6:
        return [b"SCRIPT", b"FLUSH"] + ([g.pick([b"SYNC", b"ASYNC", b"bogus"])] if g.chance(0.5) else [])
    if r < 0.7:
        return [b"SCRIPT", b"KILL"]
    return [b"SCRIPT", g.pick([b"LOAD", b"EXISTS", b"FLUSH"])] if g.chance(0.5) else [b"SCRIPT", b"NOPE"]


@command("scripts", 1)
def bad_numkeys(g):
    numkeys = g.pick([b"-1", b"5", b"abc", b"1.5", b""])
    return [b"EVAL", b"return 1", numkeys] + g.keys_n(0, 2)
