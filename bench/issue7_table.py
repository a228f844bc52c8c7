#!/usr/bin/env python3
"""Side-by-side markdown table of `volley-bench seeds` outputs.

usage: bench/issue7_table.py OUTDIR  (reads seeds_{volley,redis}_rtt{0,3.3ms}.txt)
"""
import sys
from pathlib import Path

RUNS = [("volley", "0"), ("redis", "0"), ("volley", "3.3ms"), ("redis", "3.3ms")]


def parse(path):
    lines = path.read_text().splitlines()
    title, header, rows = lines[0], lines[1], {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.split(" | ")]
        if len(cells) >= 6:
            seed, exp, measured, published, speedup, check = cells[:6]
            rows[(seed, exp)] = (measured, published, speedup, check)
    return title, rows


def main():
    out = Path(sys.argv[1])
    parsed = {run: parse(out / f"seeds_{run[0]}_rtt{run[1]}.txt") for run in RUNS}
    order = list(parsed[RUNS[0]][1].keys())
    cols = ["Volley, RTT 0", "redis-server, RTT 0", "Volley, 3.3 ms", "redis-server, 3.3 ms"]
    print("| seed | experiment | published | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    bad = []
    for key in order:
        published = parsed[RUNS[0]][1][key][1]
        cells = []
        for run in RUNS:
            m, _, speed, check = parsed[run][1].get(key, ("-", "", "", "ok"))
            m = m.replace(" (extrapolated from 10k)", "\\*")
            cells.append(f"{m} ({speed})")
            if not check.startswith("ok"):
                bad.append((run, key, check))
        print(f"| {key[0]} | {key[1]} | {published} | " + " | ".join(cells) + " |")
    print("\n\\* one-by-one rows run 10k commands and are extrapolated linearly to 1M.")
    print("Speedups in parentheses are against the seed's first row in the same run.\n")
    for run in RUNS:
        print(f"- `{parsed[run][0]}`")
    print(f"\nData checks: {'all ok' if not bad else bad}")


if __name__ == "__main__":
    main()
