"""Start and stop Redis-protocol servers (volley-server or redis-server) for tests.

Both binaries take the same Redis-style command line, so one launcher serves
compat tests, differential tests and benchmarks. Servers bind 127.0.0.1 on a
free port, run in a private temp dir, and are always killed on exit.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def volley_bin():
    """Path of the volley-server binary under test (release build by default)."""
    env = os.environ.get("VOLLEY_SERVER_BIN")
    if env:
        return env
    return str(REPO / "target" / "release" / "volley-server")


def redis_bin():
    return os.environ.get("REDIS_SERVER_BIN") or shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running server process; use as a context manager."""

    def __init__(self, binary, args=(), timeout=10.0):
        self.binary = binary
        self.port = free_port()
        self.host = "127.0.0.1"
        self.dir = tempfile.mkdtemp(prefix="volley-test-")
        self.logfile = os.path.join(self.dir, "server.log")
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.dir, "--save", "", "--appendonly", "no",
                "--logfile", self.logfile, *args]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        self._wait_ready(timeout)

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited with {self.proc.returncode}: {self.log()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{self.binary} did not listen on {self.port} within {timeout}s")

    def log(self):
        try:
            return Path(self.logfile).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def start_volley(*args):
    return Server(volley_bin(), args)


def start_redis(*args):
    return Server(redis_bin(), args)
