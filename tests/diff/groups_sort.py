"""Command builders for SORT, SORT_RO and LCS (group "sort").

Sources live in their own keys: lists `sl*`, integer sets `si*`, string
sets `ss*` and sorted sets `sz*`. Weights are `w_<element>` strings and `h_<element>` hashes (field
`f`), with numbers, non-numbers and empty text.

Where the two servers may legitimately differ, nothing is generated:
  * a set or a sorted set is read in hash order (an integer set too: the
    hashset group may lower set-max-intset-entries), which only shows
    through ties: so ALPHA BY (missing or equal BY values tie) and BY with a
    constant are only used on lists, or on sets with STORE / inside a
    script, where Redis sorts such a set itself;
  * ALPHA BY with a LIMIT uses Redis's unstable partial sort: not generated;
  * the general keys (other groups' values, which may hold NUL bytes that
    tie under ALPHA, or out-of-range numbers) are only sorted ALPHA with
    STORE;
  * no weight is out of double range ("1e400", subnormals): Redis's SORT
    reads weights with strtod and then tests `errno` without clearing it
    first, so one ERANGE -- from SORT or from any other command that
    parses a float, like ZRANGEBYSCORE k 1e400 1 in another group -- makes
    numeric SORTs of non-integer text fail until something else in the
    process resets `errno`: process state no implementation can mirror.
    A numeric SORT therefore follows a ZADD of a valid score (which sets
    `errno` to 0 in Redis) in the same builder.
"""
from generator import command

ELEMS = [b"1", b"2", b"10", b"-3", b"0.5", b"1e2", b"7", b"a", b"b", b"abc", b"B", b"", b"x y"]
INTS = [b"1", b"2", b"3", b"10", b"-4", b"42", b"100", b"7"]
WEIGHTS = [b"1", b"2", b"3", b"-1", b"0.5", b"10", b"1e3", b"inf", b"-inf", b"0x10", b" 4", b"7"]
BAD_WEIGHTS = [b"abc", b"", b"5 ", b"nan", b"1e"]
WORDS = [b"x", b"y", b"B", b"a", b"zz", b"", b"\xc3\xa9", b"10", b"2"]
LISTS = [b"sl0", b"sl1"]
INTSETS = [b"si0"]
STRSETS = [b"ss0"]
ZSETS = [b"sz0"]
DESTS = [b"sdst0", b"sdst1", b"sl1"]
LCS_KEYS = [b"lcs0", b"lcs1", b"lcs2"]


ERRNO_RESET = ["ZADD", "sort:errno", "1", "m"]


def numeric_guarded(cmds):
    """`cmds` (one command or several), after ERRNO_RESET if a SORT in
    them may read numbers (see the module header)."""
    cmds = cmds if isinstance(cmds[0], list) else [cmds]
    numeric = any(c[0] in ("SORT", "SORT_RO") and "ALPHA" not in c for c in cmds)
    return [ERRNO_RESET] + cmds if numeric else cmds


def weight(g):
    return g.pick(BAD_WEIGHTS) if g.chance(0.05) else g.pick(WEIGHTS)


@command("sort", 3)
def fill(g):
    r = g.rng.random()
    if r < 0.4:
        return [g.pick(["RPUSH", "LPUSH"]), g.pick(LISTS)] + [g.pick(ELEMS) for _ in range(g.rng.randint(1, 5))]
    if r < 0.6:
        return ["SADD", g.pick(INTSETS)] + [g.pick(INTS) for _ in range(g.rng.randint(1, 4))]
    if r < 0.8:
        return ["SADD", g.pick(STRSETS)] + [g.pick(ELEMS) for _ in range(g.rng.randint(1, 4))]
    args = []
    for _ in range(g.rng.randint(1, 4)):
        args += [g.pick([b"1", b"2", b"0", b"-1", b"2.5"]), g.pick(ELEMS)]
    return ["ZADD", g.pick(ZSETS)] + args


@command("sort", 3)
def weights(g):
    e = g.pick(ELEMS + INTS)
    r = g.rng.random()
    if r < 0.45:
        return ["SET", b"w_" + e, weight(g)]
    if r < 0.85:
        return ["HSET", b"h_" + e, "f", weight(g) if g.chance(0.7) else g.pick(WORDS)]
    if r < 0.93:
        return ["SET", b"t_" + e, g.pick(WORDS)]
    return ["DEL", g.pick([b"w_", b"h_", b"t_"]) + e]


def limit(g):
    if not g.chance(0.3):
        return []
    vals = [b"0", b"1", b"2", b"-1", b"5", b"-5", b"100", b"9223372036854775807"]
    bad = [b"x", b"1.5", b""]
    pick = (lambda: g.pick(bad)) if g.chance(0.05) else (lambda: g.pick(vals))
    return [["LIMIT", pick(), pick()]]


def gets(g):
    pats = [b"#", b"w_*", b"h_*->f", b"nostar", b"w_*->f", b"h_*->", b"t_*"]
    return [["GET", g.pick(pats)] for _ in range(g.rng.choice([0, 0, 1, 2]))]


def sort_cmd(g, source, by, alpha, may_limit=True, store=None):
    """SORT/SORT_RO over `source` with shuffled options."""
    opts = limit(g) if may_limit else []
    opts += gets(g)
    if by is not None:
        opts.append(["BY", by])
    if alpha:
        opts.append("ALPHA")
    if g.chance(0.4):
        opts.append(g.pick(["ASC", "DESC"]))
    if g.chance(0.03):
        opts.append(g.pick(["NOPE", ["LIMIT", "1"], "STORE"]))
    name = "SORT" if store or g.chance(0.6) else "SORT_RO"
    if store:
        opts.append(["STORE", store])
    return [name, source] + g.shuffled(opts)


@command("sort", 6)
def sort_ordered_sources(g):
    """Lists: every option is deterministic."""
    src = g.pick(LISTS)
    by = g.pick([None, None, b"w_*", b"h_*->f", b"nosort", b"t_*", b"h_*->nofield"])
    alpha = g.chance(0.4)
    # ALPHA BY sorts ties with an unstable partial sort under LIMIT.
    return numeric_guarded(sort_cmd(g, src, by, alpha, may_limit=not (alpha and by and b"*" in by)))


@command("sort", 4)
def sort_hashed_sources(g):
    """Sets and sorted sets: orders that do not show hash order."""
    src = g.pick(INTSETS + STRSETS + ZSETS)
    if src in ZSETS and g.chance(0.3):
        return numeric_guarded(sort_cmd(g, src, b"nosort", g.chance(0.3)))
    by = g.pick([None, b"w_*", b"h_*->f"])
    return numeric_guarded(sort_cmd(g, src, by, by is None and g.chance(0.5)))


@command("sort", 3)
def sort_store(g):
    src = g.pick(LISTS + INTSETS + STRSETS + ZSETS)
    dst = g.pick(DESTS)
    by = g.pick([None, b"w_*", b"nosort", b"h_*->f"])
    alpha = g.chance(0.5)
    ordered = src in LISTS
    if alpha and by not in (None, b"nosort") and not ordered:
        by = None
    may_limit = not (alpha and by and b"*" in by)
    return numeric_guarded([sort_cmd(g, src, by, alpha, may_limit, store=dst), ["LRANGE", dst, "0", "-1"],
                            ["EXISTS", dst]])


@command("sort", 1)
def sort_in_script(g):
    """A set read without sorting is sorted ALPHA inside scripts."""
    src = g.pick(STRSETS + INTSETS + LISTS)
    body = "return redis.call('sort', KEYS[1], 'by', 'nosort', ARGV[1])"
    return ["EVAL", body, "1", src, g.pick(["ASC", "DESC"])]


@command("sort", 2)
def sort_general_keys(g):
    """Other groups' keys (any type, any bytes)."""
    dst = g.pick(DESTS)
    opts = limit(g) + ([g.pick(["ASC", "DESC"])] if g.chance(0.5) else [])
    return [["SORT", g.key(), "ALPHA", "STORE", dst] + g.shuffled(opts), ["LRANGE", dst, "0", "-1"]]


@command("sort", 1)
def sort_getkeys(g):
    args = [g.pick([b"STORE", b"LIMIT", b"GET", b"BY", b"x", b"store"]) for _ in range(g.rng.randint(0, 5))]
    return ["COMMAND", "GETKEYS", g.pick(["SORT", "SORT_RO"]), "src"] + args


def lcs_text(g):
    n = g.rng.randint(0, 24)
    return bytes(g.rng.choice(b"ACGT" if g.chance(0.8) else b"AC\x00\xff") for _ in range(n))


@command("sort", 2)
def lcs_set(g):
    return ["SET", g.pick(LCS_KEYS), lcs_text(g)]


@command("sort", 3)
def lcs(g):
    keys = [g.pick(LCS_KEYS) if g.chance(0.9) else g.key() for _ in range(2)]
    opts = []
    for o in ["IDX", "WITHMATCHLEN", "LEN"]:
        if g.chance(0.35):
            opts.append(o)
    if g.chance(0.3):
        opts.append(["MINMATCHLEN", g.pick([b"0", b"1", b"2", b"3", b"-1", b"x"])])
    if g.chance(0.03):
        opts.append(g.pick(["NOPE", "MINMATCHLEN"]))
    return ["LCS"] + keys + g.shuffled(opts)
