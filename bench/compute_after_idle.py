#!/usr/bin/env python3
"""Compute after an idle moment: one layer's forward and backward timed back to back, and
timed again after the process slept for a gap, as a pipeline stage sleeps in a receive.

A layer profile times layers back to back; a stage of a pipeline on a slow link computes after
waiting tens of milliseconds for its input, and on this project's VMs that compute runs slower
(experiments/README.md, "How far a simulated figure can be trusted"). This measures by how much,
for the MLP layer of the emulated validations (Linear 1024 -> 1024 + ReLU, 16 samples, one
thread), with the torch of the Python that runs it:

    /usr/bin/python3 bench/compute_after_idle.py            # Debian's torch 1.13
    "$HARNESS_TORCH_PYTHON" bench/compute_after_idle.py     # any other

Gaps are taken round-robin (every repetition times every gap once), so that a drift of the
machine's speed falls on all of them alike; each timed pass follows an untimed pass by its
gap. Prints the median of each and its ratio to no gap.
"""
import argparse
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--gaps-ms", default="0,1,5,20,50")
    parser.add_argument("--repetitions", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    gaps = [float(g) for g in args.gaps_ms.split(",")]
    torch.set_num_threads(args.threads)
    layer = torch.nn.Linear(args.width, args.width)
    x = torch.randn(args.batch, args.width, requires_grad=True)

    def timed_pass():
        start = time.perf_counter()
        y = torch.relu(layer(x))
        middle = time.perf_counter()
        y.sum().backward()
        return (middle - start) * 1e3, (time.perf_counter() - middle) * 1e3

    for _ in range(20):  # warm-up
        timed_pass()
    times = {gap: ([], []) for gap in gaps}
    for _ in range(args.repetitions):
        for gap in gaps:
            # Each timed pass follows an untimed one by `gap`: with no gap the two run back to
            # back, as a profile times them, rather than right after the previous gap's sleep.
            timed_pass()
            if gap > 0:
                time.sleep(gap / 1e3)
            forward, backward = timed_pass()
            times[gap][0].append(forward)
            times[gap][1].append(backward)
    base = [statistics.median(times[gaps[0]][k]) for k in (0, 1)]
    print(f"torch {torch.__version__}, Linear {args.width} x {args.width} + ReLU, batch "
          f"{args.batch}, {args.threads} thread(s), {args.repetitions} repetitions per gap")
    print("| idle gap before the pass | forward (median) | backward (median) | vs no gap |")
    print("|---:|---:|---:|---|")
    for gap in gaps:
        forward, backward = (statistics.median(times[gap][k]) for k in (0, 1))
        print(f"| {gap:g} ms | {forward:.3f} ms | {backward:.3f} ms | "
              f"{forward / base[0]:.2f}x / {backward / base[1]:.2f}x |")


if __name__ == "__main__":
    main()
