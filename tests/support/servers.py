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


def _probe_info(host, port):
    """Raw `INFO server` reply bytes from whatever answers, or b"" on failure."""
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.settimeout(2)
            s.sendall(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")
            data = b""
            while not data.endswith(b"\r\n\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if not data.startswith(b"$"):
                    break
            return data
    except OSError:
        return b""


class Server:
    """A running server process; use as a context manager."""

    def __init__(self, binary, args=(), timeout=10.0):
        self.binary = binary
        self.host = "127.0.0.1"
        self.dir = tempfile.mkdtemp(prefix="volley-test-")
        self.logfile = os.path.join(self.dir, "server.log")
        # A free port can be taken by another process before the server binds
        # it; a server that exits for that reason is retried on a new port.
        for _ in range(5):
            self.port = free_port()
            argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--dir", self.dir, "--save", "", "--appendonly", "no",
                    "--logfile", self.logfile, *args]
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
            if self._wait_ready(timeout):
                return
        raise RuntimeError(f"{self.binary} could not bind a free port: {self.log()}")

    def _wait_ready(self, timeout):
        """True once the server on the port reports this process's pid
        (another server may answer there for a moment); False if it exited
        because the port was in use."""
        deadline = time.monotonic() + timeout
        want = f"process_id:{self.proc.pid}\r\n".encode()
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "in use" in self.log():
                    return False
                raise RuntimeError(f"{self.binary} exited with {self.proc.returncode}: {self.log()}")
            info = _probe_info(self.host, self.port)
            # A server behind requirepass, or the I/O floor server, reports no
            # pid: then only our process being alive is known.
            if want in info or (info and b"process_id:" not in info and self.proc.poll() is None):
                return True
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{self.binary} did not answer on {self.port} within {timeout}s")

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


def wait_for(cond, what, timeout=60, step=0.05, transient=()):
    """Poll `cond` until it is true; fail naming `what` after `timeout`
    seconds. Exceptions of the `transient` types count as not yet (a
    server that is restarting or loading)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except transient:
            pass
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
