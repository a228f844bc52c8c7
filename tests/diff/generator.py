"""Seeded random command sequences for differential testing.

This module owns *what* is sent: `Gen(seed).sequence(n)` returns a list of
commands (lists of bytes) that must produce identical replies on any two
correct Redis 7.0 implementations. Everything is a pure function of the seed.

Commands come from pluggable groups: `GROUPS[name]` is a list of
`(weight, fn)` where `fn(g: Gen)` builds one command (a list of args) or a
short list of commands that must run back to back (e.g. MULTI ... EXEC).
To add a data type, write `groups_lists.py` with builders decorated
`@command("lists")` and import it at the bottom of this file. By default a
sequence draws from every registered group; `groups=[...]` restricts it.

Determinism rules the generators follow (see also the TTL normalizer in
test_differential.py):
  * relative TTLs are >= 10 minutes and pairwise >= 59 s apart, so no key
    expires during a run and (for runs under ~a minute) GT/LT comparisons
    never depend on timing;
  * absolute expiry times are either far in the past or far in the future;
  * SET with a past EXAT/PXAT leaves a logically expired key that redis only
    reaps lazily or by its timed active-expire cycle (DBSIZE would see it
    for a random while), so such a SET is followed by EXISTS on that key;
  * no RANDOMKEY/TIME/INFO/CLIENT ID/SCAN; KEYS only with sorted comparison;
  * offsets for SETBIT/SETRANGE/BITFIELD stay small, so nothing allocates
    hundreds of megabytes.
"""
import random
from collections import defaultdict

GROUPS = defaultdict(list)


def command(group, weight=1.0):
    """Register a command builder in `group` with a relative weight."""
    def deco(fn):
        GROUPS[group].append((weight, fn))
        return fn
    return deco


KEYS = [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5", b"key with space", b"bin\x00\xff"]
SMALL_INTS = [b"0", b"1", b"-1", b"2", b"10", b"42", b"-7", b"100", b"9999", b"10000"]
EDGE_INTS = [b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
             b"-9223372036854775809", b"9223372036854775806", b"-9223372036854775807",
             b"007", b"+1", b"-0", b" 1", b"1 ", b"12345678901234567890"]
FLOATS = [b"0.1", b"1e3", b".5", b"inf", b"-inf", b"nan", b"0x10", b"1e400", b"1.5",
          b"-2.25", b"3.0e-5", b"1e-400", b"10.", b"5e17", b"-0.0", b"1,5"]
WORDS = [b"", b"a", b"hello", b"foo bar", b"\x00\x01\xff\r\n", b"\r\n", b"\xc3\xa9t\xc3\xa9",
         b"0", b"abc\x00def", b"*1\r\n$1\r\nx\r\n"]
BAD_NUMS = [b"abc", b"", b"1.5", b"9223372036854775808", b"007", b"+1", b" 1", b"0x10"]
PAST_SECS = [1, 1000000000, 1600000000, 0, -5]
FUTURE_SECS = 4102444800   # 2100-01-01, plus a small random offset


class Gen:
    """Random source plus argument helpers shared by all command builders."""

    def __init__(self, seed, keys=KEYS):
        self.rng = random.Random(seed)
        self.keys = list(keys)
        self._used_ttl = set()

    # ---- generic helpers -------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    def key(self):
        return self.pick(self.keys)

    def keys_n(self, lo=1, hi=4):
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def num(self, lo, hi):
        return str(self.rng.randint(lo, hi)).encode()

    def value(self):
        """A string value: ints, edge ints, floats, words, binary or long."""
        r = self.rng.random()
        if r < 0.30:
            return self.pick(SMALL_INTS) if self.chance(0.5) else self.num(-1000, 1000)
        if r < 0.42:
            return self.pick(EDGE_INTS)
        if r < 0.55:
            return self.pick(FLOATS)
        if r < 0.80:
            return self.pick(WORDS)
        if r < 0.90:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 20)))
        n = self.rng.randint(30, 300)      # crosses the 44-byte embstr limit
        return bytes(self.rng.choice(b"abcdefghij") for _ in range(n))

    def int_arg(self):
        r = self.rng.random()
        if r < 0.6:
            return self.num(-100, 100)
        if r < 0.8:
            return self.pick(EDGE_INTS)
        return self.pick(BAD_NUMS)

    def float_arg(self):
        return self.pick(FLOATS) if self.chance(0.6) else self.int_arg()

    def offset(self, hi=200):
        """A byte/bit offset or index, occasionally negative."""
        return self.num(-hi // 4, hi)

    # ---- expiry helpers (see determinism rules above) -----------------------
    def rel_secs(self):
        while True:
            s = self.rng.randrange(10, 20000) * 60
            if s not in self._used_ttl:
                self._used_ttl.add(s)
                return s

    def ttl(self, unit):
        """Argument for EX/PX/EXAT/PXAT and the EXPIRE family.
        unit: 's' or 'ms' relative, 'at' or 'pat' absolute."""
        r = self.rng.random()
        if r < 0.08:
            return self.pick(BAD_NUMS + [b"0", b"-1", b"9223372036854775807",
                                         b"-9223372036854775808", b"9223372036854775"])
        if unit == "s":
            return str(self.rel_secs() if r < 0.9 else -self.rng.randint(1, 100)).encode()
        if unit == "ms":
            s = self.rel_secs() * 1000 + self.rng.randrange(1000)
            return str(s if r < 0.9 else -self.rng.randint(1, 100000)).encode()
        past = r < 0.35
        secs = self.pick(PAST_SECS) if past else FUTURE_SECS + self.rng.randrange(0, 10 ** 6)
        if unit == "pat":
            return str(secs * 1000 + (0 if past else self.rng.randrange(1000))).encode()
        return str(secs).encode()

    def expiry_opt(self):
        """One SET/GETEX-style expiry option with its argument."""
        kind = self.pick([b"EX", b"PX", b"EXAT", b"PXAT"])
        unit = {b"EX": "s", b"PX": "ms", b"EXAT": "at", b"PXAT": "pat"}[kind]
        return [kind, self.ttl(unit)]

    def shuffled(self, opts):
        self.rng.shuffle(opts)
        return [a for o in opts for a in (o if isinstance(o, list) else [o])]

    # ---- sequences ---------------------------------------------------------
    def commands(self, groups=None):
        """Pick one builder and return the command(s) it builds. A builder
        returns one command (a list of args) or a list of such commands."""
        groups = groups or list(GROUPS)
        unknown = [g for g in groups if g not in GROUPS]
        if unknown:
            raise ValueError(f"unknown command group(s) {unknown}; known: {list(GROUPS)}")
        pool = [wf for g in groups for wf in GROUPS[g]]
        fn = self.rng.choices([f for _, f in pool], weights=[w for w, _ in pool])[0]
        out = fn(self)
        return [self._encode(c) for c in (out if isinstance(out[0], list) else [out])]

    def _encode(self, cmd):
        cmd = [a if isinstance(a, bytes) else str(a).encode() for a in cmd]
        if self.chance(0.05):              # command names are case-insensitive
            cmd[0] = bytes(c ^ 0x20 if self.chance(0.5) and chr(c).isalpha() else c for c in cmd[0])
        return cmd

    def sequence(self, count, groups=None):
        seq = []
        while len(seq) < count:
            seq += self.commands(groups)
        return seq[:count]


import groups_core  # noqa: E402,F401  (registers the core command groups)
import groups_hashset  # noqa: E402,F401  (hashes and sets)
import groups_zsets  # noqa: E402,F401  (sorted sets and HyperLogLog)
import groups_tx  # noqa: E402,F401  (MULTI/EXEC/WATCH)
import groups_lists  # noqa: E402,F401  (registers the list command group)
import groups_scripts  # noqa: E402,F401  (EVAL/EVALSHA/SCRIPT)
import groups_sort  # noqa: E402,F401  (SORT, SORT_RO and LCS)
import groups_geo  # noqa: E402,F401  (GEOADD/GEOSEARCH and friends)
import groups_streams  # noqa: E402,F401  (streams: XADD ... XAUTOCLAIM, XINFO)
