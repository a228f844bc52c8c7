"""Process accounting and CPU pinning for the benchmarks.

* `cpu_times(pid)` / `cpu_seconds(pid)`: user and system CPU a live process
  has used, apart / summed, from /proc/PID/stat fields 14 and 15 (clock
  ticks, all threads included). Read before and after a load run, the
  difference is what the server spent on it.
* `rss_bytes(pid)`: VmRSS from /proc/PID/status.
* `Pinning`: server on CPU 0, load generator on CPU 1 via taskset, so the two
  do not steal each other's core and the server's CPU time is not inflated by
  migrations. Falls back to no pinning (and says why) without taskset or with
  fewer than two usable CPUs.
* `run_measured(argv)`: run a child to completion and return its output, wall
  time and its own CPU seconds (from wait4's rusage), so the harness can tell
  when the load generator, not the server, was the bottleneck.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_times(pid):
    """(utime, stime) of `pid` in seconds (resolution 1/CLK_TCK, usually 10 ms)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # Field 2 (comm) may contain spaces; everything after the last ')' starts at field 3.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK  # fields 14 and 15


def cpu_seconds(pid):
    """utime+stime of `pid` in seconds."""
    return sum(cpu_times(pid))


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


class Pinning:
    """Server on `server_cpu`, load generators on `load_cpu`, if possible."""

    def __init__(self, enabled=True, server_cpu=0, load_cpu=1):
        self.server_cpu, self.load_cpu = server_cpu, load_cpu
        self.taskset = shutil.which("taskset")
        cpus = os.sched_getaffinity(0)
        if not enabled:
            self.reason = "disabled by --no-pin"
        elif not self.taskset:
            self.reason = "taskset (util-linux) not found"
        elif not {server_cpu, load_cpu} <= cpus:
            self.reason = f"CPUs {server_cpu} and {load_cpu} not both available (have {sorted(cpus)})"
        else:
            self.reason = None
        self.active = self.reason is None

    def describe(self):
        if self.active:
            return f"server pinned to CPU {self.server_cpu}, load generator to CPU {self.load_cpu} (taskset)"
        return f"NOT pinned: {self.reason}"

    def pin_server(self, pid):
        """Pin every thread of a running server (threads created later inherit it)."""
        if self.active:
            subprocess.run([self.taskset, "-a", "-p", "-c", str(self.server_cpu), str(pid)],
                           check=True, stdout=subprocess.DEVNULL)

    def load_prefix(self):
        return [self.taskset, "-c", str(self.load_cpu)] if self.active else []


def run_measured(argv, stdin=None, timeout=900, abort_if=None):
    """Run argv to completion; return (exit code, stdout, stderr, wall s, child CPU s).

    taskset execs its target, so the child's rusage is the load generator's.
    The child is killed if it outlives `timeout`, if `abort_if()` turns true
    (polled every 0.2 s; e.g. "the server died", which can leave
    redis-benchmark waiting forever) or if we are interrupted.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                stdout=out, stderr=err)
        done = threading.Event()

        def watchdog():
            deadline = started + timeout
            while not done.wait(0.2):
                if time.monotonic() > deadline or (abort_if and abort_if()):
                    _kill(proc.pid)
                    return

        threading.Thread(target=watchdog, daemon=True).start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            _kill(proc.pid)
            proc.wait()
            raise
        finally:
            done.set()
        wall = time.monotonic() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (code, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                wall, usage.ru_utime + usage.ru_stime)


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
