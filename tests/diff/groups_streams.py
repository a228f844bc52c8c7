"""Command builders for streams (group "streams"): XADD XRANGE XREVRANGE XLEN
XDEL XTRIM XSETID, XREAD/XREADGROUP (non-blocking, or a BLOCK of a few ms
that both servers let pass), XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
XINFO, and TYPE/OBJECT ENCODING/COPY/RENAME/DEL/wrong-type on stream keys.

Determinism: XADD never uses `*` (its ID is the wall clock). IDs come from
a per-sequence clock that only moves forward, so most XADDs succeed while
some reuse or undercut an old ID on purpose. Times that differ between the
servers (a pending entry's idle time and delivery time, a consumer's idle or
seen-time) are masked to 0 by a small Lua script that runs the command with
redis.pcall and returns the rest unchanged (errors included); replies without
times are sent as plain commands so their RESP3 shapes are compared too.
Min-idle arguments are 0 or an hour, and IDLE/TIME options set idle times
of under a second or over a day, so no comparison sits near a threshold.
"""
from generator import command

STREAM_KEYS = [b"st0", b"st1", b"st2"]
NOT_STREAM = b"snot"        # set to a string or list by `not_a_stream`
GROUPS = [b"g1", b"g2", b"grp x"]
CONSUMERS = [b"c1", b"c2", b"c3", b"Alice"]
FIELDS = [b"f", b"name", b"n", b"", b"x y", b"\x00\xff", b"1", b"field"]
VALUES = [b"v", b"1", b"-7", b"100000", b"3.5", b"", b"hello world", b"\xc3\xa9"]
BAD_IDS = [b"abc", b"-1", b"1-", b"-", b"+", b"1-2-3", b"1-x", b"x-1", b"18446744073709551616-0",
           b"1-18446744073709551616", b" 1", b"1.5", b"", b"*-1", b"0x10"]
MAX_ID = b"18446744073709551615-18446744073709551615"
HOUR = b"3600000"
BIG_IDLE = [b"100000000", b"86400001"]
PAST_MS = b"1000000000000"
FUTURE_MS = b"4102444800000"

# Lua wrappers that zero the columns holding times (see module doc).
MASK_XPENDING = b"""local r = redis.pcall('XPENDING', KEYS[1], unpack(ARGV))
if r.err then return r end
for _, e in ipairs(r) do if type(e) == 'table' then e[3] = 0 end end
return r"""
MASK_CONSUMERS = b"""local r = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], unpack(ARGV))
if r.err then return r end
for _, c in ipairs(r) do
  for i = 1, #c, 2 do if c[i] == 'idle' or c[i] == 'inactive' then c[i + 1] = 0 end end
end
return r"""
MASK_FULL = b"""local r = redis.pcall('XINFO', 'STREAM', KEYS[1], unpack(ARGV))
if r.err then return r end
local function pel(list, col) for _, p in ipairs(list) do p[col] = 0 end end
for i = 1, #r, 2 do
  if r[i] == 'groups' and type(r[i + 1]) == 'table' then
    for _, grp in ipairs(r[i + 1]) do
      for j = 1, #grp, 2 do
        if grp[j] == 'pending' then pel(grp[j + 1], 3) end
        if grp[j] == 'consumers' then
          for _, c in ipairs(grp[j + 1]) do
            for k = 1, #c, 2 do
              if c[k] == 'seen-time' or c[k] == 'active-time' then c[k + 1] = 0 end
              if c[k] == 'pending' then pel(c[k + 1], 2) end
            end
          end
        end
      end
    end
  end
end
return r"""


# ---------------------------------------------------------------- helpers
def clock(g):
    """The sequence's stream clock: the ms part of the newest ID handed out."""
    if not hasattr(g, "st_ms"):
        g.st_ms = g.rng.randint(1, 50)
        g.st_ids = []
        g.st_pairs = []
    return g.st_ms


def advance(g, hi=3):
    g.st_ms = clock(g) + g.rng.randint(0, hi)
    return g.st_ms


def remember(g, ident):
    clock(g)
    g.st_ids.append(ident)
    del g.st_ids[:-40]


def skey(g):
    r = g.rng.random()
    if r < 0.92:
        return g.pick(STREAM_KEYS)
    return NOT_STREAM if r < 0.96 else g.key()


def group(g):
    # Redis prints names in errors as C strings: cut at NUL, CR/LF as spaces.
    return g.pick(GROUPS) if g.chance(0.97) else g.pick([b"nogroup", b"g\x00h", b"n\r\nl"])


def pair(g):
    """(key, group) for a group command: mostly a pair XGROUP CREATE named
    lately (it may have failed or gone since), otherwise any."""
    clock(g)
    if g.st_pairs and g.chance(0.85):
        return g.pick(g.st_pairs)
    return skey(g), group(g)


def consumer(g):
    return g.pick(CONSUMERS)


def known_id(g):
    """An ID that is (probably) in some stream, or near one."""
    clock(g)
    if g.st_ids and g.chance(0.7):
        return g.pick(g.st_ids)
    ms = g.rng.randint(max(0, g.st_ms - 30), g.st_ms + 1)
    return b"%d-%d" % (ms, g.rng.randint(0, 2)) if g.chance(0.8) else b"%d" % ms


def any_id(g):
    """An ID argument for XDEL/XACK/XCLAIM/XSETID...: known, edge or invalid."""
    r = g.rng.random()
    if r < 0.85:
        return known_id(g)
    if r < 0.93:
        return g.pick([b"0", b"0-0", b"0-1", b"0", b"0-0", b"0-1", MAX_ID, b"18446744073709551615"])
    return g.pick(BAD_IDS)


def bound(g, low):
    """A range bound for XRANGE/XREVRANGE/XPENDING: -, +, IDs, exclusive IDs."""
    r = g.rng.random()
    if r < 0.35:
        return b"-" if low else b"+"
    if r < 0.75:
        return known_id(g)
    if r < 0.9:
        return b"(" + known_id(g)
    return g.pick([b"+", b"-", b"(-", b"(+", b"(" + MAX_ID, b"(0-0", b"(0", b"(abc", b"0", MAX_ID, b"1-x"])


def count_opt(g, p=0.5):
    if not g.chance(p):
        return []
    return [b"COUNT", g.pick([b"1", b"2", b"3", b"5", b"10"]) if g.chance(0.85)
            else g.pick([b"0", b"-1", b"x", b"9223372036854775807", b""])]


def field_values(g):
    n = g.rng.randint(1, 3)
    out = []
    for _ in range(n):
        out.append(g.pick(FIELDS) if g.chance(0.85) else g.value())
        out.append(g.pick(VALUES) if g.chance(0.8) else g.value())
    if g.chance(0.02):
        out = out[:-1]                    # odd field/value count
    return out


def trim_spec(g):
    """MAXLEN|MINID [=|~] threshold [LIMIT n], valid most of the time."""
    strategy = g.pick([b"MAXLEN", b"MINID", b"maxlen"])
    spec = [strategy]
    how = g.rng.random()
    approx = how < 0.4
    if approx:
        spec.append(b"~")
    elif how < 0.6:
        spec.append(b"=")
    if strategy == b"MINID":
        spec.append(known_id(g) if g.chance(0.9) else g.pick(BAD_IDS + [b"0", MAX_ID]))
    else:
        spec.append(g.num(0, 40) if g.chance(0.9) else g.pick([b"-1", b"x", b"1.5", b"9223372036854775807"]))
    if g.chance(0.3 if approx else 0.04):
        spec += [b"LIMIT", g.pick([b"0", b"1", b"5", b"100", b"1000"]) if g.chance(0.9)
                 else g.pick([b"-1", b"x", b"1000001"])]
    if g.chance(0.02):
        spec = g.pick([[b"MAXLEN"], [b"MINID", b"~"], [b"LIMIT", b"5"], [b"MAXLEN", b"~", b"10", b"LIMIT"]])
    return spec


def new_id(g):
    """The ID argument of an XADD: mostly increasing, sometimes stale or bad."""
    r = g.rng.random()
    if r < 0.80:
        ms = advance(g)
        if g.chance(0.35):
            remember(g, b"%d-0" % ms)
            return b"%d-*" % ms
        if g.chance(0.1):
            remember(g, b"%d-0" % ms)
            return b"%d" % ms
        seq = g.rng.randint(0, 3)
        remember(g, b"%d-%d" % (ms, seq))
        return b"%d-%d" % (ms, seq)
    if r < 0.92:                           # equal to or below the top: an error, mostly
        return known_id(g) if g.chance(0.7) else b"%d-*" % max(0, clock(g) - g.rng.randint(0, 5))
    if g.chance(0.1):          # leaves the key unable to take any more entries
        return g.pick([MAX_ID, b"18446744073709551615-*", b"18446744073709551615"])
    return g.pick(BAD_IDS + [b"0-0", b"0-*", b"0"])


# ---------------------------------------------------------------- writes
@command("streams", 10)
def xadd(g):
    opts = []
    if g.chance(0.1):
        opts.append([b"NOMKSTREAM"])
    if g.chance(0.25):
        opts.append(trim_spec(g))
    # Redis reads NOMKSTREAM and the trim spec in any order before the ID.
    return [b"XADD", skey(g)] + g.shuffled(opts) + [new_id(g)] + field_values(g)


@command("streams", 2)
def xadd_burst(g):
    """Several entries at once (large values sometimes), so streams grow past
    a listpack node and approximate trims have node boundaries to stop at."""
    k = g.pick(STREAM_KEYS)
    big = g.chance(0.3)
    cmds = []
    for _ in range(g.rng.randint(5, 30)):
        ms = advance(g, 2) + 1
        g.st_ms = ms
        ident = b"%d-%d" % (ms, g.rng.randint(0, 1)) if g.chance(0.6) else b"%d-*" % ms
        remember(g, ident.replace(b"*", b"0"))
        val = bytes(g.rng.choice(b"abcdef") for _ in range(g.rng.randint(100, 700))) if big else g.pick(VALUES)
        cmds.append([b"XADD", k, ident, b"f", val] + ([b"g", g.num(0, 999)] if g.chance(0.3) else []))
    return cmds


@command("streams", 2)
def xtrim(g):
    return [b"XTRIM", skey(g)] + trim_spec(g)


@command("streams", 2)
def xdel(g):
    return [b"XDEL", skey(g)] + [any_id(g) for _ in range(g.rng.randint(1, 4))]


@command("streams", 1)
def xsetid(g):
    k = skey(g)
    r = g.rng.random()
    if r < 0.6:
        ms = advance(g, 4)
        ident = b"%d-%d" % (ms, g.rng.randint(0, 5))
    else:
        ident = any_id(g)
    cmd = [b"XSETID", k, ident]
    opts = []
    if g.chance(0.3):
        opts.append([b"ENTRIESADDED", g.pick([b"0", b"1", b"5", b"50", b"1000"]) if g.chance(0.9)
                     else g.pick([b"-1", b"x"])])
    if g.chance(0.3):
        opts.append([b"MAXDELETEDID", known_id(g) if g.chance(0.85) else g.pick([b"0-0", MAX_ID, b"abc"])])
    if g.chance(0.03):
        opts.append(g.pick([[b"ENTRIESADDED"], [b"FOO", b"1"]]))
    return cmd + g.shuffled(opts)


# ---------------------------------------------------------------- reads
@command("streams", 3)
def xrange(g):
    k = skey(g)
    if g.chance(0.5):
        cmd = [b"XRANGE", k, bound(g, True), bound(g, False)]
    else:
        cmd = [b"XREVRANGE", k, bound(g, False), bound(g, True)]
    cmd += count_opt(g)
    if g.chance(0.02):
        cmd += g.pick([[b"COUNT"], [b"LIMIT", b"1"], [b"COUNT", b"1", b"x"]])
    return cmd


@command("streams", 1.5)
def xlen(g):
    return [b"XLEN", skey(g)]


def read_ids(g, keys, group_read):
    out = []
    for _ in keys:
        r = g.rng.random()
        if group_read and r < 0.6:
            out.append(b">")
        elif r < 0.7:
            out.append(g.pick([b"0", b"0-0", b"$"]))
        else:
            out.append(any_id(g))
    return out


def block_opt(g):
    return [[b"BLOCK", g.pick([b"1", b"5", b"10"])]] if g.chance(0.08) else []


@command("streams", 2.5)
def xread(g):
    keys = [skey(g) for _ in range(g.rng.randint(1, 3))]
    ids = read_ids(g, keys, False)
    if g.chance(0.03):
        ids = ids[:-1] or [b">"]
    opts = [count_opt(g, 0.5)] + block_opt(g)
    return [b"XREAD"] + g.shuffled([o for o in opts if o]) + [b"STREAMS"] + keys + ids


@command("streams", 6)
def xreadgroup(g):
    k, grp = pair(g)
    keys = [k] if g.chance(0.8) else [k, pair(g)[0]]
    ids = read_ids(g, keys, True)
    opts = [count_opt(g, 0.5)] + block_opt(g)
    if g.chance(0.15):
        opts.append([b"NOACK"])
    if g.chance(0.02):
        opts.append(g.pick([[b"FOO"], [b"COUNT"]]))
    head = [b"GROUP", grp, consumer(g)]
    if g.chance(0.02):
        head = g.pick([[b"GROUP", b"g1"], []])
    return [b"XREADGROUP"] + head + g.shuffled([o for o in opts if o]) + [b"STREAMS"] + keys + ids


# ---------------------------------------------------------------- groups
@command("streams", 2.5)
def xgroup_create(g):
    r = g.rng.random()
    start = g.pick([b"0", b"0-0"]) if r < 0.5 else b"$" if r < 0.7 else any_id(g)
    opts = []
    if g.chance(0.5):
        opts.append([b"MKSTREAM"])
    if g.chance(0.25):
        opts.append([b"ENTRIESREAD", g.pick([b"0", b"1", b"3", b"-1", b"100"]) if g.chance(0.9)
                     else g.pick([b"-2", b"x"])])
    if g.chance(0.02):
        opts.append([b"FOO"])
    k, grp = skey(g), group(g)
    clock(g)
    if k in STREAM_KEYS and grp in GROUPS:
        g.st_pairs.append((k, grp))
    del g.st_pairs[:-6]
    return [b"XGROUP", b"CREATE", k, grp, start] + g.shuffled(opts)


@command("streams", 1.2)
def xgroup_other(g):
    k, grp = pair(g)
    r = g.rng.random()
    if r < 0.3:
        cmd = [b"XGROUP", b"SETID", k, grp, g.pick([b"$", b"0"]) if g.chance(0.4) else any_id(g)]
        if g.chance(0.3):
            cmd += [b"ENTRIESREAD", g.pick([b"0", b"2", b"-1", b"x"])]
        return cmd
    if r < 0.4:
        return [b"XGROUP", b"DESTROY", k, grp]
    if r < 0.7:
        return [b"XGROUP", b"CREATECONSUMER", k, grp, consumer(g)]
    if r < 0.92:
        return [b"XGROUP", b"DELCONSUMER", k, grp, consumer(g)]
    return g.pick([[b"XGROUP", b"HELP"], [b"XGROUP", b"NOSUCH", k], [b"XGROUP", b"CREATE", k],
                   [b"XGROUP", b"DESTROY", k, grp, b"extra"], [b"XGROUP"], [b"XGROUP", b"help", b"x"]])


@command("streams", 1.5)
def xack(g):
    return [b"XACK", *pair(g)] + [any_id(g) for _ in range(g.rng.randint(1, 4))]


@command("streams", 2.5)
def xpending(g):
    k, grp = pair(g)
    if g.chance(0.35):
        return [b"XPENDING", k, grp]                    # summary: no times in it
    args = [grp]
    if g.chance(0.25):
        args += [b"IDLE", g.pick([b"0", HOUR]) if g.chance(0.9) else g.pick([b"-1", b"x"])]
    full = g.chance(0.6)
    args += [b"-" if full else bound(g, True), b"+" if full else bound(g, False), g.pick([b"1", b"3", b"10", b"0"]) if g.chance(0.9)
             else g.pick([b"-1", b"x"])]
    if g.chance(0.4):
        args.append(consumer(g))
    if g.chance(0.03):
        args = args[:g.rng.randint(1, len(args))]
    return [b"EVAL", MASK_XPENDING, b"1", k] + args


def min_idle(g):
    return g.pick([b"0", b"0", b"0", HOUR]) if g.chance(0.95) else g.pick([b"-1", b"x"])


@command("streams", 2.5)
def xclaim(g):
    cmd = [b"XCLAIM", *pair(g), consumer(g), min_idle(g)]
    cmd += [any_id(g) for _ in range(g.rng.randint(1, 4))]
    opts = []
    if g.chance(0.2):
        opts.append([b"IDLE", g.pick([b"0", b"500"] + BIG_IDLE)])
    if g.chance(0.1):
        opts.append([b"TIME", g.pick([PAST_MS, FUTURE_MS])])
    if g.chance(0.2):
        opts.append([b"RETRYCOUNT", g.pick([b"0", b"3", b"10"]) if g.chance(0.9) else g.pick([b"-1", b"x"])])
    for o in (b"FORCE", b"JUSTID"):
        if g.chance(0.3):
            opts.append([o])
    if g.chance(0.15):
        opts.append([b"LASTID", any_id(g)])
    if g.chance(0.03):
        opts.append(g.pick([[b"IDLE"], [b"FOO"], [b"F\x00OO"], [b"IDLE", b"x"], [b"TIME", b"-5"]]))
    return cmd + g.shuffled(opts)


@command("streams", 2)
def xautoclaim(g):
    cmd = [b"XAUTOCLAIM", *pair(g), consumer(g), min_idle(g),
           g.pick([b"0", b"0-0", b"-"]) if g.chance(0.4) else any_id(g)]
    opts = []
    if g.chance(0.5):
        opts.append([b"COUNT", g.pick([b"1", b"2", b"5", b"100"]) if g.chance(0.9)
                     else g.pick([b"0", b"-1", b"x", b"9223372036854775807"])])
    if g.chance(0.3):
        opts.append([b"JUSTID"])
    if g.chance(0.03):
        opts.append([b"FOO"])
    return cmd + g.shuffled(opts)


# ---------------------------------------------------------------- XINFO
@command("streams", 2)
def xinfo(g):
    k = skey(g)
    r = g.rng.random()
    if r < 0.3:
        return [b"XINFO", b"STREAM", k]
    if r < 0.5:
        return [b"XINFO", b"GROUPS", k]
    if r < 0.7:
        k, grp = pair(g)
        return [b"EVAL", MASK_CONSUMERS, b"1", k, grp]
    if r < 0.93:
        return [b"EVAL", MASK_FULL, b"1", k, b"FULL"] + (count_opt(g, 0.4))
    return g.pick([[b"XINFO", b"HELP"], [b"XINFO", b"STREAM", k, b"FOO"], [b"XINFO", b"NOSUCH", k],
                   [b"XINFO", b"GROUPS"], [b"XINFO", b"STREAM", k, b"FULL", b"COUNT"],
                   [b"XINFO", b"CONSUMERS", k], [b"XINFO"]])


# ---------------------------------------------------------------- keys
@command("streams", 0.8)
def stream_keys(g):
    k = g.pick(STREAM_KEYS)
    r = g.rng.random()
    if r < 0.2:
        return [[b"TYPE", k], [b"OBJECT", b"ENCODING", k]]
    if r < 0.45:
        dst = g.pick(STREAM_KEYS) if g.chance(0.85) else g.key()
        cmd = [b"COPY", k, dst] + ([b"REPLACE"] if g.chance(0.5) else [])
        return [cmd, [b"XINFO", b"STREAM", dst], [b"XINFO", b"GROUPS", dst]]
    if r < 0.65:
        dst = g.pick(STREAM_KEYS) if g.chance(0.85) else g.key()
        return [[g.pick([b"RENAME", b"RENAMENX"]), k, dst], [b"XRANGE", dst, b"-", b"+"]]
    if r < 0.75:
        return [b"DEL", k]
    if r < 0.9:
        return [b"EXISTS", k]
    return [b"XRANGE", k, b"-", b"+"]


@command("streams", 0.5)
def not_a_stream(g):
    if g.chance(0.5):
        return [b"SET", NOT_STREAM, b"v"]
    return [[b"DEL", NOT_STREAM], [b"RPUSH", NOT_STREAM, b"a"]]


@command("streams", 0.5)
def bad_arity(g):
    k = g.pick(STREAM_KEYS)
    return g.pick([[b"XADD", k], [b"XADD", k, b"1-1"], [b"XADD", k, b"1-1", b"f"], [b"XRANGE", k, b"-"],
                   [b"XREVRANGE", k], [b"XLEN"], [b"XDEL", k], [b"XTRIM", k], [b"XTRIM", k, b"MAXLEN"],
                   [b"XSETID", k], [b"XREAD"], [b"XREAD", b"STREAMS"], [b"XREAD", b"STREAMS", k],
                   [b"XREAD", b"COUNT", b"1"], [b"XREADGROUP", b"GROUP", b"g1", b"c1"],
                   [b"XREADGROUP", b"GROUP", b"g1", b"c1", b"STREAMS", k],
                   [b"XREADGROUP", b"STREAMS", k, b">"], [b"XACK", k, b"g1"], [b"XPENDING", k],
                   [b"XCLAIM", k, b"g1", b"c1", b"0"], [b"XAUTOCLAIM", k, b"g1", b"c1", b"0"],
                   [b"XREAD", b"STREAMS", k, k, b"0"], [b"XREAD", b"BLOCK", b"-1", b"STREAMS", k, b"0"],
                   [b"XREAD", b"STREAMS", k, b">"], [b"XADD", k, b"NOMKSTREAM"],
                   [b"XADD", k, b"MAXLEN", b"1", b"LIMIT", b"1", b"9-1", b"f", b"v"]])
