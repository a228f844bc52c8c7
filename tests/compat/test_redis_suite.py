"""Redis 7.0.15's own Tcl test suite (../shared/redis-tests, README there)
against the release build: every unit in PASSING runs in external mode on
a fresh volley-server and must pass completely (whatever VOLLEY_TEST_TARGET
says: this measures Volley). A unit joins the list once
Volley passes all of it; it never leaves (that would be a regression).
Units that still fail somewhere are run by hand with
`../shared/redis-tests/run-suite.sh UNIT`, not here.
"""
import subprocess
from pathlib import Path

from servers import volley_bin

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO.parent / "shared" / "redis-tests" / "run-suite.sh"

PASSING = [
    "unit/protocol", "unit/type/incr", "unit/type/list-2", "unit/type/list-3", "unit/info-command",
    "unit/bitfield", "unit/scan", "unit/hyperloglog", "unit/quit", "unit/functions", "unit/geo", "unit/sort",
    "unit/dump", "unit/bitops", "unit/type/set", "unit/type/zset", "unit/slowlog",
]


def test_units_that_pass_keep_passing():
    assert SUITE.exists(), f"{SUITE} is missing: the suite lives in ../shared beside the repository"
    run = subprocess.run([str(SUITE), "--server", volley_bin(), *PASSING], cwd=REPO, capture_output=True,
                         text=True, timeout=1500)
    table = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode == 0, table
    for unit in PASSING:
        assert any(line.startswith(unit) and " OK " in line for line in run.stdout.splitlines()), table
