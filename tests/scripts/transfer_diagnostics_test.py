#!/usr/bin/env python3
"""bench/emulated/transfer_delays.py and sched_waits.py on inputs written here, their figures
checked against values computed by hand: a traced iteration of two ranks (one transfer whose
receiver posted first, one whose sender did) and a scheduler trace of two cores (one thread
that waits 3.5 ms for a core while the other core idles 2.5 ms of it, one that waits 0.5 ms)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "emulated")


def run(script, *args, stdin=""):
    return subprocess.run([sys.executable, os.path.join(BENCH, script), *args], input=stdin,
                          capture_output=True, text=True)


def event(name, ts_us, dur_us, **args):
    return {"name": name, "ph": "X", "ts": ts_us, "dur": dur_us, "pid": 0, "tid": 0, "args": args}


def switch(cpu, time, prev, prev_tid, state, nxt, next_tid):
    return (f" {prev_tid:5d} [{cpu:03d}] {time:.6f}: sched:sched_switch: prev_comm={prev} "
            f"prev_pid={prev_tid} prev_prio=120 prev_state={state} ==> next_comm={nxt} "
            f"next_pid={next_tid} next_prio=120\n")


class TransferDelays(unittest.TestCase):
    def test_delivery_from_the_later_side_and_the_ranks_computing(self):
        # t = 0 at the first event (rank 0's forward at 10,000 us).
        rank0 = [event("forward mb0", 10_000, 1_000),
                 event("send activations mb0", 11_000, 10, micro_batch=0, bytes=65536, peer=[1]),
                 event("recv gradients mb0", 13_200, 800, micro_batch=0, bytes=65536, peer=[1])]
        rank1 = [event("recv activations mb0", 10_500, 1_000, micro_batch=0, bytes=65536, peer=[0]),
                 event("backward mb0", 13_200, 400, micro_batch=0),
                 event("send gradients mb0", 13_000, 20, micro_batch=0, bytes=65536, peer=[0])]
        with tempfile.TemporaryDirectory() as folder:
            for rank, events in enumerate([rank0, rank1]):
                with open(os.path.join(folder, f"trace_rank{rank}.json"), "w") as f:
                    json.dump({"traceEvents": events}, f)
            result = run("transfer_delays.py", folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = {line.split()[0] + " " + line.split()[1]: line.split()
                for line in result.stdout.splitlines()[1:3]}
        # Activations: sent at 1.00 ms, the receive posted at 0.50 and done at 1.50: the
        # receiver was first, delivery 1.50 - 1.00; nobody computes in [1.00, 1.50].
        self.assertEqual(rows["activations mb0"][2:8], ["r0->r1", "1.00", "0.50", "1.50", "0.50", "0.00"])
        # Gradients: sent at 3.00, posted at 3.20, done at 4.00: delivery 0.80, during which
        # rank 1's backward (3.20-3.60) computes half the time.
        self.assertEqual(rows["gradients mb0"][2:8], ["r1->r0", "3.00", "3.20", "4.00", "0.80", "0.50"])
        self.assertIn("receiver first: 1 transfers, delivery median 0.50 ms", result.stdout)
        self.assertIn("sender first: 1 transfers, delivery median 0.80 ms", result.stdout)

    def test_a_folder_without_traces_is_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run("transfer_delays.py", folder)
        self.assertEqual(result.returncode, 2)
        self.assertIn("no trace_rank<r>.json with events", result.stderr)


class SchedWaits(unittest.TestCase):
    def test_a_wait_while_the_other_core_idles(self):
        lines = [
            switch(0, 0.9000, "swapper/0", 0, "R", "harness-rank", 201),
            # cpu 1: thread 100 preempted at 1.0000, back at 1.0035 (3.5 ms) ...
            switch(1, 1.0000, "harness-rank", 100, "R", "harness-rank", 101),
            # ... while cpu 0 idles from 1.0005 to 1.0030 (2.5 of the 3.5 ms: 71%).
            switch(0, 1.0005, "harness-rank", 201, "S", "swapper/0", 0),
            switch(0, 1.0030, "swapper/0", 0, "R", "harness-rank", 201),
            switch(1, 1.0035, "harness-rank", 101, "S", "harness-rank", 100),
            # cpu 0: thread 201 preempted for 0.5 ms, under the 1 ms counted.
            switch(0, 2.0000, "harness-rank", 201, "R", "kworker/0:1", 7),
            switch(0, 2.0005, "kworker/0:1", 7, "S", "harness-rank", 201),
            # A thread of another program is not a rank's.
            switch(1, 3.0000, "python3", 300, "R", "harness-rank", 100),
            switch(1, 3.0100, "harness-rank", 100, "S", "python3", 300),
        ]
        result = run("sched_waits.py", stdin="".join(lines))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("2 cores; 2 waits of a preempted rank thread", result.stdout)
        self.assertIn("longer than 1 ms: 1, median 3.50 ms, longest 3.50 ms, total 3.5 ms",
                      result.stdout)
        self.assertIn("idle for half the wait or more: 1, total 3.5 ms", result.stdout)
        self.assertIn("thread 100 on cpu 1: 1.000000 - 1.003500 s, 3.50 ms, another core idle 71%",
                      result.stdout)
        later = run("sched_waits.py", "--from", "1.5", stdin="".join(lines))
        self.assertIn("2 cores; 1 waits", later.stdout)
        self.assertNotIn("longer than", later.stdout)

    def test_input_without_switches_is_refused(self):
        result = run("sched_waits.py", stdin="not perf output\n")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no sched:sched_switch events", result.stderr)


if __name__ == "__main__":
    unittest.main()
