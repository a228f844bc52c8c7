"""Command builders for the server core: strings, bitmaps, keys, connection,
plus deliberate errors (wrong arity, unknown commands, bad options).

Each builder takes a `generator.Gen` and returns one command as a list of
bytes/str/int. Register new builders with `@command(group, weight)`.
"""
from generator import FUTURE_SECS, command

# ---------------------------------------------------------------- strings
@command("strings", 3)
def get(g):
    return ["GET", g.key()]


@command("strings", 4)
def set_(g):
    opts = []
    if g.chance(0.3):
        opts.append(g.pick(["NX", "XX"]))
    if g.chance(0.25):
        opts.append("GET")
    r = g.rng.random()
    if r < 0.5:
        opts.append(g.expiry_opt())
    elif r < 0.6:
        opts.append("KEEPTTL")
    if g.chance(0.04):      # conflicting or unknown options -> syntax error
        opts.append(g.pick(["NX", "XX", "KEEPTTL", "FOO", g.expiry_opt()]))
    key = g.key()
    cmd = ["SET", key, g.value()] + g.shuffled(opts)
    if any(past_absolute(opt) for opt in opts):
        return [cmd, ["EXISTS", key]]     # reap the expired key (see generator.py)
    return cmd


def past_absolute(opt):
    """True for an [EXAT|PXAT, t] option whose time is not in the future."""
    if not isinstance(opt, list) or opt[0] not in (b"EXAT", b"PXAT"):
        return False
    try:
        return int(opt[1]) < FUTURE_SECS * (1000 if opt[0] == b"PXAT" else 1)
    except ValueError:
        return False


@command("strings")
def setnx(g):
    return ["SETNX", g.key(), g.value()]


@command("strings")
def setex(g):
    name = g.pick(["SETEX", "PSETEX"])
    return [name, g.key(), g.ttl("s" if name == "SETEX" else "ms"), g.value()]


@command("strings")
def getset(g):
    return ["GETSET", g.key(), g.value()]


@command("strings")
def getdel(g):
    return ["GETDEL", g.key()]


@command("strings", 2)
def getex(g):
    opts = []
    if g.chance(0.7):
        opts.append(g.expiry_opt() if g.chance(0.8) else "PERSIST")
    if g.chance(0.05):
        opts.append(g.pick(["PERSIST", "KEEPTTL", "NX", g.expiry_opt()]))
    return ["GETEX", g.key()] + g.shuffled(opts)


@command("strings", 2)
def mget(g):
    return ["MGET"] + g.keys_n(1, 5)


@command("strings", 2)
def mset(g):
    args = [a for k in g.keys_n(1, 4) for a in (k, g.value())]
    return [g.pick(["MSET", "MSET", "MSETNX"])] + args


@command("strings", 4)
def incr(g):
    k = g.key()
    r = g.rng.random()
    if r < 0.3:
        return [g.pick(["INCR", "DECR"]), k]
    if r < 0.7:
        return [g.pick(["INCRBY", "DECRBY"]), k, g.int_arg()]
    return ["INCRBYFLOAT", k, g.float_arg()]


@command("strings", 2)
def append(g):
    return ["APPEND", g.key(), g.value()]


@command("strings")
def strlen(g):
    return ["STRLEN", g.key()]


@command("strings", 2)
def getrange(g):
    return ["GETRANGE", g.key(), g.offset(), g.offset()]


@command("strings", 2)
def setrange(g):
    off = g.offset(100) if g.chance(0.9) else g.pick([b"-1", b"536870912", b"abc", b"536870911"])
    val = g.value() if off != b"536870911" else b""
    return ["SETRANGE", g.key(), off, val]


# ---------------------------------------------------------------- bitmaps
def bit_offset(g):
    if g.chance(0.95):
        return g.num(0, 400)
    return g.pick([b"-1", b"4294967296", b"abc", b""])


@command("bitmaps", 3)
def setbit(g):
    return ["SETBIT", g.key(), bit_offset(g), g.pick([b"0", b"1"] * 8 + [b"2", b"-1", b"x"])]


@command("bitmaps", 2)
def getbit(g):
    return ["GETBIT", g.key(), bit_offset(g)]


def range_unit(g, p=0.3):
    if g.chance(p):
        return [g.pick(["BYTE", "BIT", "bit", "BOTH"])]
    return []


@command("bitmaps", 2)
def bitcount(g):
    cmd = ["BITCOUNT", g.key()]
    r = g.rng.random()
    if r < 0.7:
        cmd += [g.offset(), g.offset()] + range_unit(g)
    elif r < 0.75:
        cmd += [g.offset()]                     # start without end: syntax error
    return cmd


@command("bitmaps", 2)
def bitpos(g):
    cmd = ["BITPOS", g.key(), g.pick([b"0", b"1"] * 5 + [b"2"])]
    n = g.rng.randint(0, 2)
    cmd += [g.offset() for _ in range(n)]
    if n == 2 or g.chance(0.05):
        cmd += range_unit(g)
    return cmd


@command("bitmaps", 2)
def bitop(g):
    op = g.pick(["AND", "OR", "XOR", "NOT", "and", "NAND"])
    srcs = g.keys_n(1, 1 if op == "NOT" and g.chance(0.9) else 3)
    return ["BITOP", op, g.key()] + srcs


def bf_type(g):
    if g.chance(0.02):
        return g.pick(["u64", "i65", "i0", "x8", "u", ""])
    if g.chance(0.5):
        return "i%d" % g.rng.randint(1, 64)
    return "u%d" % g.rng.randint(1, 63)


def bf_offset(g):
    if g.chance(0.02):
        return g.pick(["-1", "abc", "#-1", "#"])
    return ("#%d" % g.rng.randint(0, 30)) if g.chance(0.3) else str(g.rng.randint(0, 256))


def bf_value(g):
    return g.num(-300, 300) if g.chance(0.85) else g.int_arg()


@command("bitmaps", 3)
def bitfield(g):
    cmd = ["BITFIELD", g.key()]
    for _ in range(g.rng.randint(1, 4)):
        r = g.rng.random()
        if r < 0.3:
            cmd += ["GET", bf_type(g), bf_offset(g)]
        elif r < 0.6:
            cmd += ["SET", bf_type(g), bf_offset(g), bf_value(g)]
        elif r < 0.9:
            cmd += ["INCRBY", bf_type(g), bf_offset(g), bf_value(g)]
        elif r < 0.98:
            cmd += ["OVERFLOW", g.pick(["WRAP", "SAT", "FAIL", "sat"])]
        else:
            cmd += [g.pick(["OVERFLOW", "FOO", "GET"])]
    return cmd


# ---------------------------------------------------------------- keys
def db_arg(g):
    return g.num(0, 3) if g.chance(0.95) else g.pick([b"16", b"-1", b"abc"])


@command("keys", 2)
def delete(g):
    return [g.pick(["DEL", "UNLINK"])] + g.keys_n(1, 3)


@command("keys", 2)
def exists(g):
    return [g.pick(["EXISTS", "TOUCH"])] + g.keys_n(1, 4)


@command("keys")
def type_(g):
    return ["TYPE", g.key()]


@command("keys", 4)
def expire(g):
    name, unit = g.pick([("EXPIRE", "s"), ("PEXPIRE", "ms"), ("EXPIREAT", "at"), ("PEXPIREAT", "pat")])
    opts = [g.pick(["NX", "XX", "GT", "LT"]) for _ in range(g.pick([0, 0, 1, 1, 1, 2]))]
    if g.chance(0.03):
        opts.append("FOO")
    return [name, g.key(), g.ttl(unit)] + opts


@command("keys", 4)
def ttl(g):
    return [g.pick(["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"]), g.key()]


@command("keys")
def persist(g):
    return ["PERSIST", g.key()]


@command("keys", 2)
def rename(g):
    return [g.pick(["RENAME", "RENAMENX"]), g.key(), g.key()]


@command("keys", 2)
def copy(g):
    cmd = ["COPY", g.key(), g.key()]
    opts = []
    if g.chance(0.4):
        opts.append(["DB", db_arg(g)])
    if g.chance(0.4):
        opts.append("REPLACE")
    if g.chance(0.03):
        opts.append(g.pick(["FOO", "DB"]))
    return cmd + g.shuffled(opts)


@command("keys")
def move(g):
    return ["MOVE", g.key(), db_arg(g)]


@command("keys", 0.5)
def dbsize(g):
    return ["DBSIZE"]


@command("keys", 1.5)
def select(g):
    return ["SELECT", db_arg(g)]


@command("keys", 1.5)
def object_encoding(g):
    return ["OBJECT", "ENCODING", g.key()]


@command("keys", 0.05)
def flushdb(g):
    return ["FLUSHDB"] + ([g.pick(["SYNC", "ASYNC"])] if g.chance(0.3) else [])


@command("keys", 0.3)
def keys(g):
    return ["KEYS", g.pick(["*", "k*", "k[1-3]", "*e*", "?0", "bin*"])]


# ---------------------------------------------------------------- connection
@command("connection", 0.5)
def ping(g):
    return ["PING"] + ([g.value()] if g.chance(0.5) else [])


@command("connection", 0.5)
def echo(g):
    return ["ECHO", g.value()]


# ---------------------------------------------------------------- errors
# Redis arity: n > 0 means exactly n words (incl. the name), -n means >= n.
ARITY = {
    "GET": 2, "SET": -3, "SETNX": 3, "SETEX": 4, "PSETEX": 4, "GETSET": 3, "GETDEL": 2,
    "GETEX": -2, "MGET": -2, "MSET": -3, "MSETNX": -3, "INCR": 2, "DECR": 2, "INCRBY": 3,
    "DECRBY": 3, "INCRBYFLOAT": 3, "APPEND": 3, "STRLEN": 2, "GETRANGE": 4, "SETRANGE": 4,
    "SETBIT": 4, "GETBIT": 3, "BITCOUNT": -2, "BITPOS": -3, "BITOP": -4, "BITFIELD": -2,
    "DEL": -2, "UNLINK": -2, "EXISTS": -2, "TYPE": 2, "EXPIRE": -3, "PEXPIRE": -3,
    "EXPIREAT": -3, "PEXPIREAT": -3, "TTL": 2, "PTTL": 2, "EXPIRETIME": 2, "PEXPIRETIME": 2,
    "PERSIST": 2, "RENAME": 3, "RENAMENX": 3, "COPY": -3, "MOVE": 3, "TOUCH": -2,
    "DBSIZE": 1, "SELECT": 2, "ECHO": 2, "KEYS": 2, "OBJECT": -2,
}
ODD_ARITY = [["PING", "a", "b"], ["MSET", "k0"], ["MSETNX", "k0", "v", "k1"],
             ["MSET", "k0", "v", "k1"], ["OBJECT", "ENCODING"], ["OBJECT", "ENCODING", "k0", "k1"],
             ["FLUSHDB", "FOO"], ["OBJECT", "NOSUCH", "k0"], ["OBJECT", "encoding", "k0"]]


@command("errors", 1.5)
def wrong_arity(g):
    if g.chance(0.2):
        return list(g.pick(ODD_ARITY))
    name = g.pick(sorted(ARITY))
    a = ARITY[name]
    if a > 0:
        n = g.pick([n for n in (a - 2, a, a + 1) if n >= 0])
    else:
        n = g.rng.randint(0, -a - 2)
    return [name] + [g.key() if g.chance(0.5) else g.value() for _ in range(n)]


@command("errors", 0.3)
def unknown_command(g):
    return [g.pick(["NOSUCHCMD", "gett", "SET_", "x"])] + [g.value() for _ in range(g.rng.randint(0, 2))]
