#!/usr/bin/env python3
"""Where a tensor-parallel simulation parts from its run: the traced iteration of each rank,
measured and simulated, split into compute and the tensor group's collectives by kind (the replicas' gradient sum, on
a thread of its own, is left out), and, for
the run, how far apart the two ranks of a pair enter and leave the same collective.

A run's forward and backward events hold the collectives they block in, so its compute is the
phases less its collectives; a simulation's phases are compute alone. The skews pair the n-th
collective of rank 0 with the n-th of rank 1 (the ranks' shared monotonic clock): `enter` is the
mean of |start 1 - start 0|, `leave` of |end 1 - end 0|, in ms. A pair that enters together and leaves
apart waited inside the collective for its own bytes, which a simulation that completes a
collective on both ranks at once does not price.

Usage: tensor_breakdown.py REAL_RESULTS SIMULATED_RESULTS SYSTEM... (results folders of one
point; prints markdown rows: system, side, rank, compute, all-reduce, all-gather, reduce-scatter,
enter and leave skews).
"""
import glob
import json
import os
import statistics
import sys

COLLECTIVES = ("allreduce", "allgather", "reducescatter")
PHASES = ("forward", "backward", "step")


def events(results, system, rank):
    pattern = os.path.join(results, "raw", "p000", system, "rep0", f"trace_rank{rank}.json")
    found = glob.glob(pattern)
    if not found:
        return None
    trace = json.load(open(found[0]))
    return sorted((e for e in trace["traceEvents"] if e.get("ph") == "X"), key=lambda e: e["ts"])


def tensor_collective(event):
    """A collective of the tensor group: the run names them `tensor ...`; the simulation puts
    them in bucket or unit -1, the replicas' gradient sum in buckets from 0."""
    if event.get("cat") not in COLLECTIVES:
        return False
    return event["name"].startswith("tensor ") or event.get("args", {}).get("bucket") == -1


def totals(trace, measured):
    ms = {cat: sum(e["dur"] for e in trace
                   if e.get("cat") == cat and (cat in PHASES or tensor_collective(e))) / 1000
          for cat in PHASES + COLLECTIVES}
    compute = sum(ms[p] for p in PHASES)
    if measured:  # the run's phases hold the collectives they block in
        compute -= sum(ms[c] for c in COLLECTIVES)
    return compute, [ms[c] for c in COLLECTIVES]


def skews(first, second):
    pairs = list(zip([e for e in first if tensor_collective(e)],
                     [e for e in second if tensor_collective(e)]))
    if not pairs:
        return "-", "-"
    enter = statistics.mean(abs(b["ts"] - a["ts"]) for a, b in pairs) / 1000
    leave = statistics.mean(abs(b["ts"] + b["dur"] - a["ts"] - a["dur"]) for a, b in pairs) / 1000
    return f"{enter:.2f}", f"{leave:.2f}"


def main():
    real, simulated, systems = sys.argv[1], sys.argv[2], sys.argv[3:]
    for system in systems:
        runs = [events(real, system, r) for r in (0, 1)]
        if None in runs:
            continue
        enter, leave = skews(*runs)
        for side, folder, measured in (("run", real, True), ("simulated", simulated, False)):
            for rank in (0, 1):
                trace = runs[rank] if measured else events(folder, system, rank)
                if trace is None:
                    continue
                compute, collectives = totals(trace, measured)
                cells = [f"{compute:.1f}"] + [f"{c:.1f}" for c in collectives]
                skew = [enter, leave] if measured else ["-", "-"]
                print("| " + " | ".join([system, side, str(rank)] + cells + skew) + " |")


if __name__ == "__main__":
    sys.exit(main())
