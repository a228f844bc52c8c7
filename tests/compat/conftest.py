"""Shared fixtures and helpers for the client-compatibility tests.

Every test here drives a server with a real, third-party client (netcat,
redis-rb, Jedis, go-redis, redis-cli, redis-benchmark, redis-py) and asserts
on what that program prints. The server is volley-server by default; set
VOLLEY_TEST_TARGET=redis to run the same tests against the real redis-server
(how the tests themselves were developed and are checked).
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = HERE / ".build"          # per-session build outputs (gitignored)
JAVA = HERE / "java"             # Maven pom + Java client programs
PASSWORD = "compat-s3cret"

sys.path.insert(0, str(REPO / "tests" / "support"))
from certs import make_certs, server_args as tls_server_args  # noqa: E402,F401
from servers import start_redis, start_volley  # noqa: E402

TARGET = os.environ.get("VOLLEY_TEST_TARGET", "volley")
if TARGET not in ("volley", "redis"):
    raise pytest.UsageError(f"VOLLEY_TEST_TARGET must be 'volley' or 'redis', not {TARGET!r}")
START = start_redis if TARGET == "redis" else start_volley


def run(cmd, env=None, timeout=60, input=None, check=True, cwd=None, text=True):
    """Run a program (argv list, or a string for bash -c) and return the
    CompletedProcess with stdout/stderr as text (bytes if not text). With check, a non-zero exit
    fails the test showing both streams. The timeout kills the program."""
    if isinstance(cmd, str):
        cmd = ["bash", "-c", cmd]
    proc = subprocess.run(cmd, env=env, input=input, cwd=cwd, timeout=timeout,
                          capture_output=True, text=text)
    if check:
        assert proc.returncode == 0, (
            f"{cmd} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
            f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc


def client_env(srv, **extra):
    """os.environ plus REDIS_HOST/PORT/ADDR (and REDIS_PASSWORD when the
    server has one): how the seed programs are told where the server is."""
    env = dict(os.environ, REDIS_HOST=srv.host, REDIS_PORT=str(srv.port),
               REDIS_ADDR=f"{srv.host}:{srv.port}", **extra)
    if getattr(srv, "password", None):
        env["REDIS_PASSWORD"] = srv.password
    return env


def cli(srv, *args, password=None, timeout=30, **kw):
    """Run redis-cli against srv with the given arguments."""
    argv = ["redis-cli", "-h", srv.host, "-p", str(srv.port)]
    if password:
        argv += ["-a", password, "--no-auth-warning"]
    return run(argv + list(args), timeout=timeout, **kw)


@pytest.fixture(scope="session")
def classpath():
    """A java -cp value for the programs under java/: Maven copies Jedis and
    its dependencies into .build/java/lib (offline when install.sh has
    prefetched them) and javac builds every .java file there, once per
    session."""
    out = BUILD / "java"
    shutil.rmtree(out, ignore_errors=True)
    lib, classes = out / "lib", out / "classes"
    mvn = ["mvn", "-q", "-B", "-f", str(JAVA / "pom.xml"),
           "dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
    if run(mvn + ["-o"], check=False, timeout=300).returncode != 0:
        run(mvn, timeout=600)  # not prefetched by install.sh: go online
    run(["javac", "-d", str(classes), "-cp", f"{lib}/*",
         *map(str, sorted(JAVA.rglob("*.java")))], timeout=300)
    return f"{classes}:{lib}/*"


def go_build(name, package):
    """Build the go-redis program `package` (a path under go/, e.g. "./tls")
    into .build/go/name; its path. Callers build once per session."""
    exe = BUILD / "go" / name
    run(["go", "build", "-buildvcs=false", "-o", str(exe), package], cwd=HERE / "go", timeout=600)
    return exe


def java(classpath, srv, main, *args, timeout=120):
    """Run the Java class main (fully qualified) against srv; its stdout lines."""
    return run(["java", "-cp", classpath, main, *args],
               env=client_env(srv), timeout=timeout).stdout.splitlines()


@pytest.fixture
def server():
    """A fresh server without a password."""
    with START() as srv:
        srv.password = None
        yield srv


@pytest.fixture
def auth_server():
    """A fresh server started with --requirepass PASSWORD (srv.password)."""
    with START("--requirepass", PASSWORD) as srv:
        srv.password = PASSWORD
        yield srv


@pytest.fixture
def shared_dir():
    """A directory two servers take turns on (one writes a file, the other
    loads it); removed afterwards."""
    d = tempfile.mkdtemp(prefix="volley-compat-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def value_of(r, key, t):
    """A key's value in a form two servers' dumps can be compared in, given
    its TYPE (as text)."""
    if t == "string":
        return r.get(key)
    if t == "list":
        return r.lrange(key, 0, -1)
    if t == "set":
        return sorted(r.smembers(key))
    if t == "hash":
        return sorted(r.hgetall(key).items())
    if t == "zset":
        return r.zrange(key, 0, -1, withscores=True)
    raise AssertionError(f"unexpected type {t}")
