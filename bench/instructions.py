#!/usr/bin/env python3
"""User-space instructions per command of two volley-server builds (callgrind).

On this VM a run's CPU time moves by ±10% and the PMU is not exposed, so a
change of a few percent on the hot path cannot be seen in bench/compare.py
or bench/before_after.py. Instruction counts can: each build runs under
`valgrind --tool=callgrind` with instrumentation off until the load starts, a
`redis-benchmark -c 50 -P <depth> -r 100000 -t <test>` load runs against it,
and the instructions counted during the load are divided by the commands
sent. Counts are deterministic up to the random keys and how the pipeline
splits into reads, so differences under ~1% are noise.

    python3 bench/instructions.py --before /tmp/before-target/release/volley-server
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import servers  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, help="volley-server binary built from the old commit")
    p.add_argument("--after", default=servers.volley_bin(), help="volley-server binary under test")
    p.add_argument("-n", type=int, default=200_000, help="commands per load")
    p.add_argument("--depths", default="1,16", help="pipeline depths (-P), comma-separated")
    p.add_argument("--tests", default="set,get,incr")
    a = p.parse_args(argv)
    a.depths = [int(d) for d in a.depths.split(",")]
    a.tests = a.tests.split(",")
    return a


def wait_port(port, proc, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit("server under valgrind exited early")
        r = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True)
        if r.stdout.strip() == "PONG":
            return
        time.sleep(0.2)
    sys.exit("server under valgrind did not answer")


def count(binary, test, depth, n):
    """Instructions the server executed while serving one load."""
    port = servers.free_port()
    with tempfile.TemporaryDirectory(prefix="volley-callgrind-") as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                                 binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", tmp],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port, proc)
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
            subprocess.run(["redis-benchmark", "-p", str(port), "-c", "50", "-n", str(n), "-P", str(depth),
                            "-r", "100000", "-t", test, "-q"], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
        finally:
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
            proc.wait(timeout=60)
        with open(out) as f:
            m = re.search(r"^totals:\s+(\d+)", f.read(), re.M)
        return int(m.group(1)) / n


def main(argv=None):
    args = parse_args(argv)
    print("| test | before instr/cmd | after instr/cmd | after/before |")
    print("|---|---:|---:|---:|")
    for depth in args.depths:
        for test in args.tests:
            before = count(args.before, test, depth, args.n)
            after = count(args.after, test, depth, args.n)
            print(f"| {test.upper()} -P {depth} | {before:,.0f} | {after:,.0f} | {after / before:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
