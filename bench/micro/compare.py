#!/usr/bin/env python3
"""compare.py [ROUNDS] [FILTER] [BENCHES] - two builds' micro-benchmarks, run alternately.

Runs bench_<name> (BENCHES, comma-separated: switch,runtime,timer) of the build before
($BEFORE, default /tmp/wt-before/build/bin) and of the build after ($AFTER, default
build-bench/bin) ROUNDS times (default 5), alternating which goes first, and prints a
Markdown table of the medians and their ratio, each row followed by an HTML comment with
every value. On a shared, noisy machine only such side-by-side figures mean much.
"""
import collections
import json
import os
import statistics
import subprocess
import sys

before = os.environ.get("BEFORE", "/tmp/wt-before/build/bin")
after = os.environ.get("AFTER", "build-bench/bin")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
pattern = sys.argv[2] if len(sys.argv) > 2 else "."
benches = sys.argv[3].split(",") if len(sys.argv) > 3 else ["switch", "runtime", "timer"]

times = collections.defaultdict(list)
units = {}
for r in range(rounds):
    order = [("before", before), ("after", after)]
    if r % 2:
        order.reverse()
    for side, bindir in order:
        for b in benches:
            out = subprocess.run(
                [f"{bindir}/bench_{b}", "--benchmark_format=json", f"--benchmark_filter={pattern}"],
                capture_output=True, text=True, check=True).stdout
            for x in json.loads(out)["benchmarks"]:
                # Benchmarks marked UseRealTime() carry /real_time in their name.
                t = x["real_time"] if "real_time" in x["name"] else x["cpu_time"]
                times[(x["name"], side)].append(t)
                units[x["name"]] = x["time_unit"]

print("| benchmark | before | after | after / before |")
print("|---|---:|---:|---:|")
for name in sorted({n for n, _ in times}):
    b, a = times[(name, "before")], times[(name, "after")]
    if not a or not b:
        continue
    mb, ma = statistics.median(b), statistics.median(a)
    u = units[name]
    print(f"| {name} | {mb:.1f} {u} | {ma:.1f} {u} | {ma / mb:.2f} |")
    print(f"<!-- {name} before {sorted(round(x, 1) for x in b)} after {sorted(round(x, 1) for x in a)} -->")
