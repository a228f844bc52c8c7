#!/usr/bin/env bash
# Install what the test suite needs: the reference redis-server and its
# tools, the third-party clients the compat tests drive, and the Python venv.
# Idempotent and non-interactive: apt-get runs (after one `apt-get update`)
# only when something is missing; re-running on a ready machine is quick and
# needs no network.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
COMPAT="$REPO/tests/compat"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for pkg in redis-server redis-tools redis-sentinel ruby-redis netcat-openbsd strace fonts-dejavu-core tcl tcl-tls; do
    installed "$pkg" || missing+=("$pkg")
done
command -v mvn >/dev/null || missing+=(maven)
command -v javac >/dev/null || missing+=(default-jdk-headless)
command -v go >/dev/null || missing+=(golang-go)
command -v python3 >/dev/null || missing+=(python3)
if [ ! -x "$REPO/.venv/bin/python" ] && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    missing+=(python3-venv)
fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh: installing ${missing[*]}"
    SUDO=()
    [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
    "${SUDO[@]}" apt-get update -q
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
    # Debian's redis-server and redis-sentinel packages enable and (where
    # services may start) start system daemons on 6379 and 26379; the tests
    # start their own servers on free ports, so no stray daemon is left to
    # confuse anyone.
    for svc in redis-server redis-sentinel; do
        [[ " ${missing[*]} " == *" $svc "* ]] || continue
        if [ -d /run/systemd/system ]; then
            "${SUDO[@]}" systemctl disable --now "$svc" >/dev/null 2>&1 || true
        else
            "${SUDO[@]}" service "$svc" stop >/dev/null 2>&1 || true
        fi
        pidfile="/run/redis/$svc.pid"
        [ "$svc" = redis-sentinel ] && pidfile=/run/sentinel/redis-sentinel.pid
        if [ -s "$pidfile" ]; then
            "${SUDO[@]}" kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
else
    echo "install.sh: system packages present"
fi

# Python venv for pytest and the redis-py / hiredis compat tests.
[ -x "$REPO/.venv/bin/python" ] || python3 -m venv "$REPO/.venv"
"$REPO/.venv/bin/pip" install -q --disable-pip-version-check \
    'pytest>=8' 'redis>=5,<9' 'hiredis>=3'
# The client-side cache test's redis-py (see test_redis_py_cache.py), kept
# apart from the suite's redis-py.
CACHE_PY="$COMPAT/.build/redis-py-5.1.0b7"
[ -f "$CACHE_PY/redis/__init__.py" ] ||
    "$REPO/.venv/bin/pip" install -q --disable-pip-version-check --no-deps \
        --target "$CACHE_PY" 'redis==5.1.0b7'

# Prefetch the Jedis seed's Maven dependencies and the go-redis seed's Go
# modules so the test session itself can build offline.
mvn_deps=(mvn -q -B -f "$COMPAT/java/pom.xml" dependency:copy-dependencies
          "-DoutputDirectory=$COMPAT/.build/java/lib")
"${mvn_deps[@]}" -o >/dev/null 2>&1 || "${mvn_deps[@]}"
(cd "$COMPAT/go" && go mod download)

echo "install.sh: done"
