#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""perf_stages.py: where giong's HTTP/1.1 server spends its samples, by stage (issue 28).

usage: perf script -i perf.data -F sym,ip | bench/load/perf_stages.py
  perf.data from `perf record --call-graph dwarf,16384 -p SERVER_PID` (frame pointers are
  missing in the libraries, so only DWARF unwinding gives whole stacks).

Each sample goes to the first stage its stack matches, in this order:
  http-parser    giong__http_second_opinion on the stack (http_parser_execute, its
                 callbacks, the agreement checks), or http_method_str
  scanner        giong__http_parse_head* on the stack: our scanner, the split, the
                 semantic checks (framing, Host, target, authority), the plain check
  kernel         a system call or an interrupt on the stack
  request        conn_task or serve on the stack: the rest of request handling in user
                 space (router, handler, response, the connection's buffers)
  other          the rest: the worker's loop, the runtime
Prints each stage's share, then the leaf functions of the scanner stage.
"""
import collections
import sys


def stage(frames):
    stack = " ".join(frames)
    if "giong__http_second_opinion" in stack or frames[0] == "http_method_str":
        return "http-parser (second opinion)"
    if "giong__http_parse_head" in stack:
        return "scanner + semantic checks"
    if any(k in stack for k in ("do_syscall_64", "entry_SYSCALL", "asm_", "ret_from_fork")):
        return "kernel"
    if "serve" in frames or "conn_task" in stack:
        return "rest of request handling (user)"
    return "other user space (loop, runtime)"


def main():
    stages, leaves, n = collections.Counter(), collections.Counter(), 0
    for sample in sys.stdin.read().split("\n\n"):
        frames = [f.split(None, 1)[1] for f in sample.strip().split("\n") if len(f.split(None, 1)) > 1]
        if not frames:
            continue
        n += 1
        s = stage(frames)
        stages[s] += 1
        if s.startswith("scanner"):
            leaves[frames[0]] += 1
    if not n:
        sys.exit("perf_stages: no samples on stdin")
    for s, c in stages.most_common():
        print(f"{100 * c / n:5.1f} %  {s}")
    print(f"({n} samples; the scanner stage's leaves:)")
    for f, c in leaves.most_common(8):
        print(f"  {100 * c / n:5.1f} %  {f}")


if __name__ == "__main__":
    main()
