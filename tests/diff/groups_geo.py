"""Command builders for the GEO commands (group "geo").

Points cluster around a few centres (so searches find several members and
cross cell borders), some share a position exactly (ties in distance, which
COUNT orders the way Redis's partial quicksort does), and a few sit on the
limits of the indexable area. Coordinates are printed from the generator's
RNG with varying precision. Searches mix every option, unit and error, and
STORE forms are followed by a ZRANGE of the destination so stored scores and
distances are compared too. Geo keys also receive plain ZADD scores that
GEOADD never writes, whose decoding must match as well.
"""
from generator import command

GEO_KEYS = [b"geo0", b"geo1", b"geo2"]
DEST_KEYS = [b"gdst0", b"gdst1", b"geo2"]
MEMBERS = [b"m%d" % i for i in range(24)] + [b"", b"x y", b"\x00\xff"]
CENTRES = [(13.361389, 38.115556), (-73.9798091, 40.7598464), (179.95, -12.5), (-179.99, 60.0),
           (0.0, 0.0), (151.2, -33.86), (-0.1, 84.9), (100.0, -84.95)]
EDGE_COORDS = [(b"180", b"85.05112878"), (b"-180", b"-85.05112878"), (b"0", b"0"), (b"-0", b"-0.0"),
               (b"179.99999999", b"0.00000001"), (b"1e-7", b"-1e-7")]
BAD_COORDS = [(b"181", b"0"), (b"0", b"85.06"), (b"abc", b"1"), (b"1", b""), (b"inf", b"0"),
              (b"-180.0000001", b"10"), (b"1e400", b"1"), (b"0x10", b"1")]
UNITS = [b"m", b"km", b"ft", b"mi", b"KM", b"Mi"]
BAD_UNITS = [b"yd", b"", b"kms"]
RADII = [b"0", b"1", b"50", b"200", b"1000", b"5000", b"20000", b"0.5", b"150.25"]
BAD_RADII = [b"-1", b"abc", b"inf", b"1e400", b""]
ODD_SCORES = [b"-1", b"1.5", b"inf", b"-inf", b"4503599627370496", b"1e19", b"3377699720527872"]


def gkey(g):
    return g.pick(GEO_KEYS) if g.chance(0.93) else g.key()


def coord_text(g, v):
    return (b"%.*f" % (g.rng.randint(0, 15), v)) if g.chance(0.8) else repr(v).encode()


def point(g):
    """(lon, lat) arguments: clustered, exact repeats, edges or invalid."""
    r = g.rng.random()
    if r < 0.03:
        return g.pick(BAD_COORDS)
    if r < 0.1:
        return g.pick(EDGE_COORDS)
    lon, lat = g.pick(CENTRES)
    if r < 0.3:       # shared positions: ties in distance
        return coord_text(g, lon), coord_text(g, lat)
    spread = g.pick([0.01, 0.3, 2.0, 20.0])
    lon = lon + (g.rng.random() - 0.5) * spread
    lat = min(85.05, max(-85.05, lat + (g.rng.random() - 0.5) * spread))
    lon = lon - 360 if lon > 180 else lon + 360 if lon < -180 else lon
    return coord_text(g, lon), coord_text(g, lat)


def member(g):
    return g.pick(MEMBERS)


def unit(g):
    return g.pick(BAD_UNITS) if g.chance(0.03) else g.pick(UNITS)


def radius(g):
    return g.pick(BAD_RADII) if g.chance(0.04) else g.pick(RADII)


@command("geo", 8)
def geoadd(g):
    opts = [o for o in ["NX", "XX", "CH"] if g.chance(0.15)]
    if g.chance(0.02):
        opts.append(g.pick(["GT", "INCR", "nx"]))
    args = []
    for _ in range(g.rng.randint(1, 6)):
        args += [*point(g), member(g)]
    if g.chance(0.03):
        args = args[:-1]
    return ["GEOADD", gkey(g)] + g.shuffled(opts) + args


@command("geo", 1)
def odd_scores(g):
    return ["ZADD", g.pick(GEO_KEYS), g.pick(ODD_SCORES), member(g)]


@command("geo", 4)
def lookups(g):
    k = gkey(g)
    c = g.rng.random()
    if c < 0.35:
        return ["GEOPOS", k] + [member(g) for _ in range(g.rng.randint(1, 4))]
    if c < 0.65:
        return ["GEOHASH", k] + [member(g) for _ in range(g.rng.randint(1, 4))]
    tail = [unit(g)] if g.chance(0.6) else []
    if g.chance(0.03):
        tail += [b"km"]
    return ["GEODIST", k, member(g), member(g)] + tail


def count_opts(g):
    if not g.chance(0.4):
        return [["ANY"]] if g.chance(0.03) else []
    n = g.pick([b"1", b"2", b"3", b"5", b"10", b"0", b"-1", b"x"]) if g.chance(0.1) else g.pick([b"1", b"2", b"3", b"5", b"10"])
    return [["COUNT", n] + (["ANY"] if g.chance(0.3) else [])]


def reply_opts(g):
    """Option groups shared by every search (each group stays contiguous)."""
    opts = [[o] for o in ["WITHDIST", "WITHHASH", "WITHCOORD"] if g.chance(0.3)]
    if g.chance(0.5):
        opts.append([g.pick(["ASC", "DESC"])])
    return opts + count_opts(g)


@command("geo", 6)
def georadius(g):
    by_member = g.chance(0.4)
    ro = g.chance(0.25)
    name = ("GEORADIUSBYMEMBER" if by_member else "GEORADIUS") + ("_RO" if ro else "")
    k = gkey(g)
    centre = [member(g)] if by_member else list(point(g))
    opts = reply_opts(g)
    store = None
    if g.chance(0.3):
        store = g.pick(DEST_KEYS)
        if ro and not g.chance(0.1):
            store = None
        else:
            opts = [o for o in opts if not o[0].startswith("WITH") or g.chance(0.05)]
            opts.append([g.pick(["STORE", "STOREDIST", "storedist"]), store])
    cmd = [name, k] + centre + [radius(g), unit(g)] + g.shuffled(opts)
    if store is not None:
        return [cmd, ["ZRANGE", store, "0", "-1", "WITHSCORES"]]
    return cmd


def search_opts(g, store):
    opts = reply_opts(g)
    if store:
        opts = [o for o in opts if not o[0].startswith("WITH") or g.chance(0.05)]
        if g.chance(0.4):
            opts.append(["STOREDIST"])
    r = g.rng.random()
    if r < 0.95:
        opts.append(["FROMMEMBER", member(g)] if g.chance(0.4) else ["FROMLONLAT", *point(g)])
    if r > 0.9:
        opts.append(["FROMMEMBER", member(g)] if g.chance(0.5) else ["FROMLONLAT", *point(g)])
    s = g.rng.random()
    if s < 0.95:
        opts.append(["BYRADIUS", radius(g), unit(g)] if g.chance(0.5) else ["BYBOX", radius(g), radius(g), unit(g)])
    if s > 0.92:
        opts.append(["BYBOX", radius(g), radius(g), unit(g)])
    if g.chance(0.02):
        opts.append([g.pick(["STORE", "FROMMEMBER", "BYBOX", "COUNT"])])
    return g.shuffled(opts)


@command("geo", 6)
def geosearch(g):
    k = gkey(g)
    if g.chance(0.3):
        dst = g.pick(DEST_KEYS)
        return [["GEOSEARCHSTORE", dst, k] + search_opts(g, True), ["ZRANGE", dst, "0", "-1", "WITHSCORES"]]
    return ["GEOSEARCH", k] + search_opts(g, False)


@command("geo", 1)
def geo_inspect(g):
    k = g.pick(GEO_KEYS + DEST_KEYS)
    return g.pick([["ZRANGE", k, "0", "-1", "WITHSCORES"], ["OBJECT", "ENCODING", k], ["ZCARD", k], ["TYPE", k]])


@command("geo", 1)
def geo_remove(g):
    k = g.pick(GEO_KEYS)
    if g.chance(0.2):
        return ["DEL", k]
    return ["ZREM", k] + [member(g) for _ in range(g.rng.randint(1, 3))]
