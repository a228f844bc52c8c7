"""Command builders for hashes and sets (groups "hashes" and "sets").

Keys come from the shared pool, so WRONGTYPE interplay with strings and
between the two types is exercised. Replies whose order depends on hash
table layout (HGETALL, SMEMBERS, SINTER, ...) are compared sorted by
test_differential.UNORDERED; random picks (HRANDFIELD, SRANDMEMBER) are
compared by shape only (RANDOM_SHAPE), and SPOP is only generated in its
deterministic forms (pop everything, count 0, errors) so the two servers'
states never diverge. CONFIG SET of the encoding thresholds moves the
listpack/intset → hashtable conversions into reach of small collections.
"""
from generator import command

FIELDS = [b"f0", b"f1", b"f2", b"f3", b"f4", b"f5", b"", b"n", b"x y", b"\x00bin"]
MEMBERS_INT = [b"0", b"1", b"-1", b"2", b"3", b"10", b"-7", b"100", b"70000", b"-70000",
               b"2147483648", b"9223372036854775807", b"-9223372036854775808"]
MEMBERS_STR = [b"a", b"b", b"c", b"", b"-0", b"007", b"+1", b"1.5", b"x y", b"\x00\xff"]


def field(g):
    return g.pick(FIELDS) if g.chance(0.9) else g.value()


def hvalue(g):
    return g.value() if g.chance(0.6) else g.num(-50, 50)


def member(g):
    return g.pick(MEMBERS_INT) if g.chance(0.6) else g.pick(MEMBERS_STR)


def count_arg(g, withvalues=False):
    """A count for HRANDFIELD/SRANDMEMBER. Huge negative counts would make
    the servers build gigantic replies, so only ones rejected as out of
    range (i64::MIN, or beyond LONG_MAX/2 with WITHVALUES) are generated."""
    r = g.rng.random()
    if r < 0.7:
        return g.num(-3, 12)
    extra = [b"-4611686018427387904", b"4611686018427387904"] if withvalues else []
    return g.pick([b"0", b"x", b"-9223372036854775808", b"9223372036854775807"] + extra)


# ---------------------------------------------------------------- hashes
@command("hashes", 6)
def hset(g):
    name = g.pick(["HSET", "HSET", "HMSET"])
    pairs = [a for _ in range(g.rng.randint(1, 4)) for a in (field(g), hvalue(g))]
    if g.chance(0.03):
        pairs.pop()                       # odd count -> arity error
    return [name, g.key()] + pairs


@command("hashes")
def hsetnx(g):
    return ["HSETNX", g.key(), field(g), hvalue(g)]


@command("hashes", 3)
def hget(g):
    if g.chance(0.5):
        return ["HGET", g.key(), field(g)]
    return ["HMGET", g.key()] + [field(g) for _ in range(g.rng.randint(1, 4))]


@command("hashes", 2)
def hdel(g):
    return ["HDEL", g.key()] + [field(g) for _ in range(g.rng.randint(1, 3))]


@command("hashes", 2)
def hinfo(g):
    name = g.pick(["HLEN", "HEXISTS", "HSTRLEN"])
    return [name, g.key()] + ([] if name == "HLEN" else [field(g)])


@command("hashes", 2)
def hgetall(g):
    return [g.pick(["HGETALL", "HKEYS", "HVALS"]), g.key()]


@command("hashes", 3)
def hincr(g):
    if g.chance(0.5):
        return ["HINCRBY", g.key(), field(g), g.int_arg()]
    return ["HINCRBYFLOAT", g.key(), field(g), g.float_arg()]


@command("hashes")
def hrandfield(g):
    cmd = ["HRANDFIELD", g.key()]
    if g.chance(0.8):
        withvalues = g.chance(0.5)
        cmd.append(count_arg(g, withvalues))
        if withvalues:
            cmd.append("WITHVALUES" if g.chance(0.9) else "BAD")
    return cmd


@command("hashes")
def hscan(g):
    cmd = ["HSCAN", g.key(), "0" if g.chance(0.9) else "x"]     # other cursors depend on table layout
    if g.chance(0.4):
        cmd += ["MATCH", g.pick(["f*", "*", "?", "n", "[a-f]*"])]
    cmd += ["COUNT", "1000"] if g.chance(0.9) else [g.pick(["COUNT", "FOO"]), g.pick(["0", "x"])]
    return cmd


@command("hashes")
def hencoding(g):
    return ["OBJECT", "ENCODING", g.key()]


@command("hashes", 0.3)
def hconfig(g):
    name = g.pick(["hash-max-listpack-entries", "hash-max-listpack-value"])
    return ["CONFIG", "SET", name, g.pick(["0", "1", "2", "4", "8", "512", "64"])]


# ---------------------------------------------------------------- sets
@command("sets", 6)
def sadd(g):
    return ["SADD", g.key()] + [member(g) for _ in range(g.rng.randint(1, 5))]


@command("sets", 2)
def srem(g):
    return ["SREM", g.key()] + [member(g) for _ in range(g.rng.randint(1, 3))]


@command("sets", 2)
def smembers(g):
    return ["SMEMBERS", g.key()] if g.chance(0.5) else ["SCARD", g.key()]


@command("sets", 2)
def sismember(g):
    if g.chance(0.5):
        return ["SISMEMBER", g.key(), member(g)]
    return ["SMISMEMBER", g.key()] + [member(g) for _ in range(g.rng.randint(1, 4))]


@command("sets")
def spop(g):
    r = g.rng.random()
    if r < 0.6:
        return ["SPOP", g.key(), g.pick(["1000", "0", "100"])]
    if r < 0.8:
        return ["SPOP", g.key(), g.pick(["-1", "x", "-9223372036854775808"])]
    return ["SPOP", g.key(), "1", "2"]


@command("sets")
def srandmember(g):
    cmd = ["SRANDMEMBER", g.key()]
    if g.chance(0.8):
        cmd.append(count_arg(g))
    if g.chance(0.05):
        cmd.append("x")
    return cmd


@command("sets", 2)
def smove(g):
    return ["SMOVE", g.key(), g.key(), member(g)]


@command("sets", 3)
def salgebra(g):
    name = g.pick(["SINTER", "SUNION", "SDIFF", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])
    return [name] + g.keys_n(1, 4)


@command("sets")
def sintercard(g):
    keys = g.keys_n(1, 3)
    n = str(len(keys)).encode() if g.chance(0.85) else g.pick([b"0", b"-1", b"x", b"9"])
    cmd = ["SINTERCARD", n] + keys
    if g.chance(0.4):
        cmd += ["LIMIT", g.pick(["0", "1", "2", "-1", "x"])]
    return cmd


@command("sets")
def sscan(g):
    cmd = ["SSCAN", g.key(), "0" if g.chance(0.9) else "x"]
    if g.chance(0.4):
        cmd += ["MATCH", g.pick(["1*", "*", "?", "a"])]
    cmd += ["COUNT", "1000"] if g.chance(0.9) else ["COUNT", g.pick(["0", "x"])]
    return cmd


@command("sets")
def sencoding(g):
    return ["OBJECT", "ENCODING", g.key()]


@command("sets", 0.3)
def sconfig(g):
    return ["CONFIG", "SET", "set-max-intset-entries", g.pick(["0", "1", "2", "4", "512"])]
