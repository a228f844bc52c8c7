"""Command builders for lists: every list command with valid and invalid
arguments. Elements come mostly from a small pool so LREM/LPOS/LINSERT
find matches; blocking commands use a short timeout (both servers reply
nil once it passes) and never 0, so nothing blocks for good.
"""
from generator import command

POOL = [b"a", b"b", b"c", b"1", b"2", b"-3", b"100000", b"007", b"", b"x y", b"\x00\xff"]
ENDS = [b"LEFT", b"RIGHT", b"left", b"Right"]
TIMEOUTS = [b"0.01", b"0.02", b".01"]
BAD_TIMEOUTS = [b"-1", b"abc", b"", b"inf", b"-0.5", b"1e400", b" 1", b"0x0.02p0"]


def elem(g):
    return g.pick(POOL) if g.chance(0.75) else g.value()


def elems(g, lo=1, hi=5):
    return [elem(g) for _ in range(g.rng.randint(lo, hi))]


def end(g):
    return g.pick(ENDS) if g.chance(0.97) else g.pick([b"UP", b"", b"lef"])


def timeout(g):
    return g.pick(TIMEOUTS) if g.chance(0.93) else g.pick(BAD_TIMEOUTS)


def index(g):
    return g.num(-12, 12) if g.chance(0.9) else g.int_arg()


def count_opt(g):
    if g.chance(0.5):
        return []
    return [b"COUNT", g.num(1, 6) if g.chance(0.85) else g.pick([b"0", b"-1", b"x", b"99"])]


@command("lists", 6)
def push(g):
    return [g.pick(["LPUSH", "RPUSH"]), g.key()] + elems(g)


@command("lists", 1.5)
def pushx(g):
    return [g.pick(["LPUSHX", "RPUSHX"]), g.key()] + elems(g, 1, 3)


@command("lists", 3)
def pop(g):
    cmd = [g.pick(["LPOP", "RPOP"]), g.key()]
    r = g.rng.random()
    if r < 0.4:
        cmd.append(g.num(0, 4))
    elif r < 0.47:
        cmd.append(g.pick([b"-1", b"x", b"9223372036854775807"]))
    elif r < 0.5:
        cmd += [b"1", b"2"]
    return cmd


@command("lists", 2)
def llen(g):
    return ["LLEN", g.key()]


@command("lists", 3)
def lrange(g):
    return ["LRANGE", g.key(), index(g), index(g)]


@command("lists", 2)
def lindex(g):
    return ["LINDEX", g.key(), index(g)]


@command("lists", 1.5)
def lset(g):
    return ["LSET", g.key(), index(g), elem(g)]


@command("lists", 1.5)
def linsert(g):
    where = g.pick([b"BEFORE", b"AFTER", b"after"]) if g.chance(0.95) else b"MIDDLE"
    return ["LINSERT", g.key(), where, elem(g), elem(g)]


@command("lists", 1.5)
def lrem(g):
    return ["LREM", g.key(), g.num(-3, 3) if g.chance(0.9) else g.int_arg(), elem(g)]


@command("lists", 1)
def ltrim(g):
    return ["LTRIM", g.key(), index(g), index(g)]


@command("lists", 2)
def lpos(g):
    opts = []
    if g.chance(0.4):
        opts.append([b"RANK", g.pick([b"1", b"2", b"-1", b"-2", b"3", b"0", b"x",
                                      b"-9223372036854775808", b"9223372036854775807"])])
    if g.chance(0.4):
        opts.append([b"COUNT", g.pick([b"0", b"1", b"2", b"5", b"-1", b"x"])])
    if g.chance(0.3):
        opts.append([b"MAXLEN", g.pick([b"0", b"1", b"3", b"10", b"-1", b"x"])])
    if g.chance(0.05):
        opts.append(g.pick([[b"RANK"], [b"FOO", b"1"], [b"COUNT"]]))
    return ["LPOS", g.key(), elem(g)] + g.shuffled(opts)


@command("lists", 2)
def lmove(g):
    if g.chance(0.3):
        return ["RPOPLPUSH", g.key(), g.key()]
    return ["LMOVE", g.key(), g.key(), end(g), end(g)]


def mpop_args(g):
    keys = g.keys_n(1, 3)
    n = len(keys)
    if g.chance(0.08):
        n = g.pick([0, -1, n + 1, n + 3, "x"])
    return [n] + keys + [end(g)] + count_opt(g)


@command("lists", 2)
def lmpop(g):
    return ["LMPOP"] + mpop_args(g)


@command("lists", 0.7)
def bpop(g):
    return [g.pick(["BLPOP", "BRPOP"])] + g.keys_n(1, 3) + [timeout(g)]


@command("lists", 0.5)
def bmove(g):
    if g.chance(0.4):
        return ["BRPOPLPUSH", g.key(), g.key(), timeout(g)]
    return ["BLMOVE", g.key(), g.key(), end(g), end(g), timeout(g)]


@command("lists", 0.5)
def blmpop(g):
    return ["BLMPOP", timeout(g)] + mpop_args(g)


@command("lists", 0.3)
def type_and_encoding(g):
    key = g.key()
    return [["TYPE", key], ["OBJECT", "ENCODING", key]]
