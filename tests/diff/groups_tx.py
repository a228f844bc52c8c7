"""Differential builders for transactions: MULTI ... EXEC/DISCARD blocks of
random commands from the other groups (queue-time errors included, so
EXECABORT is compared too), and WATCH/UNWATCH around them, touched or not
by the same client's own writes."""
from generator import GROUPS, command

INNER_GROUPS = ["strings", "bitmaps", "keys", "lists", "hashes", "sets", "zsets", "errors"]


def _order_free(cmd):
    """Replies the normalizer only compares loosely (unordered, random,
    tolerant) are compared byte for byte inside EXEC's array: leave them out."""
    from test_differential import RANDOM_SHAPE, SCANS, TOLERANCE, UNORDERED
    name = cmd[0].upper()
    return name not in UNORDERED and name not in SCANS and name not in RANDOM_SHAPE \
        and name not in TOLERANCE and name not in (b"KEYS", b"SPOP")


def inner(g, n):
    groups = [x for x in INNER_GROUPS if x in GROUPS]
    cmds = []
    while len(cmds) < n:
        cmds += [c for c in g.commands(groups) if _order_free(c)]
    return cmds[:n]


@command("transactions", 2)
def multi_block(g):
    body = inner(g, g.rng.randint(0, 6))
    end = [b"DISCARD"] if g.chance(0.15) else [b"EXEC"]
    if g.chance(0.1):
        body.insert(g.rng.randint(0, len(body)), [b"MULTI"])          # nested: an error, not an abort
    return [[b"MULTI"]] + body + [end]


@command("transactions", 1)
def watched_block(g):
    keys = g.keys_n(1, 2)
    cmds = [[b"WATCH"] + keys]
    if g.chance(0.5):
        cmds += inner(g, g.rng.randint(1, 3))     # may or may not touch a watched key
    if g.chance(0.15):
        cmds.append([b"UNWATCH"])
    return cmds + [[b"MULTI"]] + inner(g, g.rng.randint(1, 4)) + [[b"EXEC"]]


@command("transactions", 0.3)
def control_errors(g):
    return [g.pick([[b"EXEC"], [b"DISCARD"], [b"WATCH"], [b"UNWATCH", b"x"], [b"MULTI", b"x"]])]
