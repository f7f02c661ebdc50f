#!/usr/bin/env python3
"""How long the ranks' threads waited for a core (issue 39).

Reads the scheduler's context switches as `perf script` prints them and reports, for the
threads of the rank program (comm harness-rank), every wait of a thread that was preempted
(switched out runnable) until it ran again: how many waits, how many longer than --over ms,
their median and total, and how many of those passed while another core was idle for at least
half of the wait -- a thread that waits for a time slice while a core idles.

    perf record -e sched:sched_switch -k CLOCK_MONOTONIC -a -o sched.data -- \\
        build/harness run experiments/emulated_simulator_levels_4.yaml --set run.trace=true ...
    perf script -i sched.data -F tid,cpu,time,event,trace | \\
        python3 bench/emulated/sched_waits.py [--over 1.0] [--from S --to S]

With -k CLOCK_MONOTONIC the times are those of the runs' traces (the steady clock, seconds),
so --from/--to can pick one traced iteration (trace_rank<r>.json "ts" / 1e6).
"""
import argparse
import re
import statistics
import sys

SWITCH = re.compile(r"\s*\d+\s+\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch: prev_comm=(.*?) "
                    r"prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) "
                    r"next_pid=(\d+)")
RANK = "harness-rank"


def read_switches(lines):
    """Yields (cpu, time s, prev comm, prev tid, prev state, next comm, next tid)."""
    for line in lines:
        if match := SWITCH.match(line):
            cpu, time, prev, prev_tid, state, nxt, next_tid = match.groups()
            yield int(cpu), float(time), prev, int(prev_tid), state, nxt, int(next_tid)


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--over", type=float, default=1.0, help="ms; the waits to count (1.0)")
    parser.add_argument("--from", dest="start", type=float, help="s; waits that end after this")
    parser.add_argument("--to", dest="end", type=float, help="s; waits that start before this")
    args = parser.parse_args()

    idle_since, idle = {}, {}  # per cpu: when it went idle; its idle intervals
    preempted, waits = {}, []  # tid -> (time, cpu); (start, end, tid, cpu)
    for cpu, time, prev, prev_tid, state, nxt, next_tid in read_switches(sys.stdin):
        idle.setdefault(cpu, [])
        if prev_tid == 0 and cpu in idle_since:
            idle[cpu].append((idle_since.pop(cpu), time))
        if next_tid == 0:
            idle_since[cpu] = time
        if prev.startswith(RANK) and state.startswith("R"):
            preempted[prev_tid] = (time, cpu)
        if nxt.startswith(RANK) and next_tid in preempted:
            start, on = preempted.pop(next_tid)
            waits.append((start, time, next_tid, on))
    if not idle:
        print("error: no sched:sched_switch events on standard input (see the usage above)",
              file=sys.stderr)
        sys.exit(2)
    if args.start is not None:
        waits = [w for w in waits if w[1] > args.start]
    if args.end is not None:
        waits = [w for w in waits if w[0] < args.end]

    def idle_elsewhere(start, end, cpu):
        """The largest share of [start, end] that another core spent idle."""
        return max((sum(max(0.0, min(end, b) - max(start, a)) for a, b in intervals) / (end - start)
                    for other, intervals in idle.items() if other != cpu), default=0.0)

    long = [w for w in waits if (w[1] - w[0]) * 1000 > args.over]
    with_idle = [w for w in long if idle_elsewhere(*w[0:2], w[3]) >= 0.5]
    print(f"{len(idle)} cores; {len(waits)} waits of a preempted rank thread for a core")
    if long:
        ms = [(w[1] - w[0]) * 1000 for w in long]
        print(f"longer than {args.over:g} ms: {len(long)}, median {statistics.median(ms):.2f} ms, "
              f"longest {max(ms):.2f} ms, total {sum(ms):.1f} ms")
        idle_ms = sum((w[1] - w[0]) * 1000 for w in with_idle)
        print(f"  of them while another core was idle for half the wait or more: {len(with_idle)}, "
              f"total {idle_ms:.1f} ms")
        for start, end, tid, cpu in sorted(with_idle, key=lambda w: w[0] - w[1])[:10]:
            print(f"  thread {tid} on cpu {cpu}: {start:.6f} - {end:.6f} s, {1000 * (end - start):.2f} ms,"
                  f" another core idle {100 * idle_elsewhere(start, end, cpu):.0f}%")


if __name__ == "__main__":
    main()
