"""Command builders for sorted sets and HyperLogLog (group "zsets").

Scores mix small integers, fractions, infinities and invalid text; members
come from a small pool so sets overlap. Lex-range commands only touch the
`lex*` keys, which only ever get score 0 (lex ranges are defined by Redis
only for equal scores). ZRANDMEMBER is not generated (random output); ZSCAN
only on the lex keys, which stay listpack-encoded (short members only), which reply whole with cursor 0 on both servers.
"""
from generator import command

MEMBERS = [b"a", b"b", b"c", b"d", b"e", b"f", b"m1", b"m2", b"", b"x y", b"\x00\xff", b"long" * 20]
SCORES = [b"0", b"1", b"2", b"-1", b"1.5", b"0.1", b"-2.25", b"3", b"10", b"inf", b"-inf", b"1e3", b"100"]
BAD_SCORES = [b"nan", b"abc", b"", b"1e400", b"1,5", b" 1"]
RANGE_ENDS = [b"-inf", b"+inf", b"0", b"1", b"(1", b"2", b"(2", b"1.5", b"(0.1", b"10", b"(-inf", b"abc", b"(", b"1e400"]
LEX_ENDS = [b"-", b"+", b"[a", b"(a", b"[c", b"(c", b"[m", b"[", b"(", b"a", b"[zz"]
LEX_KEYS = [b"lex0", b"lex1"]
HLL_KEYS = [b"hll0", b"hll1", b"hll2"]


def zkey(g):
    return g.key()


def score(g):
    return g.pick(BAD_SCORES) if g.chance(0.04) else g.pick(SCORES)


def member(g):
    return g.pick(MEMBERS)


def idx(g):
    return g.pick([b"0", b"1", b"-1", b"2", b"-2", b"5", b"-100", b"100", b"x"])


def numkeys_and_keys(g, lo=1, hi=3):
    keys = [zkey(g) for _ in range(g.rng.randint(lo, hi))]
    n = len(keys)
    if g.chance(0.04):
        n = g.pick([0, -1, n + 1, "x"])
    return [str(n).encode() if not isinstance(n, bytes) else n] + keys


@command("zsets", 8)
def zadd(g):
    opts = [o for o in ["NX", "XX", "GT", "LT", "CH", "INCR"] if g.chance(0.12)]
    pairs = []
    for _ in range(1 if "INCR" in opts and g.chance(0.9) else g.rng.randint(1, 4)):
        pairs += [score(g), member(g)]
    if g.chance(0.03):
        pairs = pairs[:-1]
    return ["ZADD", zkey(g)] + g.shuffled(opts) + pairs


@command("zsets", 1)
def zadd_many(g):
    """Cross the 128-entry listpack limit (or not), then show the encoding."""
    key = zkey(g)
    n = g.pick([120, 128, 129, 140])
    args = []
    for i in range(n):
        args += [str(i % 7).encode(), b"bulk%d" % i]
    return [["ZADD", key] + args, ["OBJECT", "ENCODING", key], ["ZCARD", key]]


@command("zsets", 2)
def zincrby(g):
    return ["ZINCRBY", zkey(g), score(g), member(g)]


@command("zsets", 2)
def zrem(g):
    return ["ZREM", zkey(g)] + [member(g) for _ in range(g.rng.randint(1, 3))]


@command("zsets", 2)
def zcard_score(g):
    k = zkey(g)
    return g.pick([["ZCARD", k], ["ZSCORE", k, member(g)], ["ZMSCORE", k, member(g), member(g)],
                   ["ZRANK", k, member(g)], ["ZREVRANK", k, member(g)], ["OBJECT", "ENCODING", k], ["TYPE", k]])


@command("zsets", 2)
def zcount(g):
    return ["ZCOUNT", zkey(g), g.pick(RANGE_ENDS), g.pick(RANGE_ENDS)]


def limit(g):
    if g.chance(0.3):
        return ["LIMIT", g.pick([b"0", b"1", b"2", b"-1", b"5"]), g.pick([b"0", b"1", b"3", b"-1", b"x"])]
    return []


@command("zsets", 5)
def zrange(g):
    k = zkey(g)
    kind = g.rng.random()
    opts = []
    if g.chance(0.3):
        opts.append("REV")
    if kind < 0.5:
        a, b = idx(g), idx(g)
    elif kind < 0.85:
        opts.append("BYSCORE")
        a, b = g.pick(RANGE_ENDS), g.pick(RANGE_ENDS)
        opts += limit(g)
    else:
        k = g.pick(LEX_KEYS)
        opts.append("BYLEX")
        a, b = g.pick(LEX_ENDS), g.pick(LEX_ENDS)
        opts += limit(g)
    if g.chance(0.4):
        opts.append("WITHSCORES")
    if g.chance(0.03):
        opts += limit(g) or ["LIMIT", "0", "1"]
    return ["ZRANGE", k, a, b] + opts


@command("zsets", 3)
def zrange_old(g):
    k = zkey(g)
    ws = ["WITHSCORES"] if g.chance(0.4) else []
    c = g.pick(["ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX"])
    if c == "ZREVRANGE":
        return [c, k, idx(g), idx(g)] + ws
    if c.endswith("LEX"):
        return [c, g.pick(LEX_KEYS), g.pick(LEX_ENDS), g.pick(LEX_ENDS)] + limit(g)
    return [c, k, g.pick(RANGE_ENDS), g.pick(RANGE_ENDS)] + g.shuffled([ws, limit(g)])


@command("zsets", 2)
def zrangestore(g):
    kind = g.pick([[], ["BYSCORE"], ["BYSCORE", "REV"]])
    if kind:
        a, b = g.pick(RANGE_ENDS), g.pick(RANGE_ENDS)
    else:
        a, b = idx(g), idx(g)
    dst = zkey(g)
    return [["ZRANGESTORE", dst, zkey(g), a, b] + kind + (limit(g) if kind else []), ["OBJECT", "ENCODING", dst]]


@command("zsets", 2)
def lex_ops(g):
    k = g.pick(LEX_KEYS)
    c = g.rng.random()
    if c < 0.5:
        return ["ZADD", k] + [x for m in g.rng.sample(MEMBERS[:-1], 3) for x in (b"0", m)]
    if c < 0.75:
        return ["ZLEXCOUNT", k, g.pick(LEX_ENDS), g.pick(LEX_ENDS)]
    return ["ZREMRANGEBYLEX", k, g.pick(LEX_ENDS), g.pick(LEX_ENDS)]


@command("zsets", 2)
def zremrange(g):
    k = zkey(g)
    if g.chance(0.5):
        return ["ZREMRANGEBYRANK", k, idx(g), idx(g)]
    return ["ZREMRANGEBYSCORE", k, g.pick(RANGE_ENDS), g.pick(RANGE_ENDS)]


@command("zsets", 3)
def setops(g):
    op = g.pick(["UNION", "INTER", "DIFF"])
    store = g.chance(0.5)
    nk = numkeys_and_keys(g)
    opts = []
    if op != "DIFF" and g.chance(0.3):
        n = len(nk) - 1
        opts += ["WEIGHTS"] + [g.pick([b"1", b"2", b"0", b"-1", b"0.5", b"inf", b"x"]) for _ in range(n)]
    if op != "DIFF" and g.chance(0.3):
        opts += ["AGGREGATE", g.pick(["SUM", "MIN", "MAX", "AVG"])]
    if not store and g.chance(0.4):
        opts.append("WITHSCORES")
    if store:
        dst = zkey(g)
        return [["Z" + op + "STORE", dst] + nk + g.shuffled(opts), ["ZRANGE", dst, "0", "-1", "WITHSCORES"]]
    return ["Z" + op] + nk + g.shuffled(opts)


@command("zsets", 1)
def zintercard(g):
    nk = numkeys_and_keys(g)
    if g.chance(0.3):
        nk += ["LIMIT", g.pick([b"0", b"1", b"2", b"-1"])]
    return ["ZINTERCARD"] + nk


@command("zsets", 2)
def pops(g):
    c = g.rng.random()
    if c < 0.5:
        cnt = [g.pick([b"0", b"1", b"2", b"5", b"-1"])] if g.chance(0.5) else []
        return [g.pick(["ZPOPMIN", "ZPOPMAX"]), zkey(g)] + cnt
    if c < 0.8:
        cnt = ["COUNT", g.pick([b"1", b"2", b"10", b"0"])] if g.chance(0.5) else []
        return ["ZMPOP"] + numkeys_and_keys(g) + [g.pick(["MIN", "MAX", "MID"])] + cnt
    # Blocking forms with data present (or a short timeout on empty keys).
    if g.chance(0.5):
        return [g.pick(["BZPOPMIN", "BZPOPMAX"]), zkey(g), zkey(g), "0.01"]
    return ["BZMPOP", "0.01"] + numkeys_and_keys(g) + [g.pick(["MIN", "MAX"])]


@command("zsets", 1)
def zscan(g):
    k = g.pick(LEX_KEYS) if g.chance(0.9) else b"hll0"
    opts = ["MATCH", g.pick([b"*", b"m*", b"?"])] if g.chance(0.4) else []
    return ["ZSCAN", k, g.pick([b"0", b"0", b"x"])] + opts


@command("zsets", 2)
def hll(g):
    c = g.rng.random()
    k = g.pick(HLL_KEYS)
    if c < 0.5:
        hi = g.pick([300, 300, 5000])
        return ["PFADD", k] + [b"e%d" % g.rng.randint(0, hi) for _ in range(g.rng.randint(0, 40))]
    if c < 0.8:
        return ["PFCOUNT"] + [g.pick(HLL_KEYS) for _ in range(g.rng.randint(1, 2))]
    if c < 0.85:
        return ["PFCOUNT", zkey(g)]
    if c < 0.9:      # sparse and dense bytes match Redis exactly
        return [g.pick(["GET", "STRLEN"]), k]
    return ["PFMERGE", k] + [g.pick(HLL_KEYS) for _ in range(g.rng.randint(0, 2))]
