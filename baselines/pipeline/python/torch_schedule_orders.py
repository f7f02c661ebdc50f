#!/usr/bin/env python3
"""Writes the compute orders of torch.distributed.pipelining's multi-stage schedules, one line
per (schedule, ranks, stages per rank, micro-batches, rank), for the harness's schedule test to
hold its own orders against (tests/data/pipeline/torch_schedule_orders.txt).

Each order comes from the schedule's own per-rank generator, run without a process group (the
generators read only the counts set here); idle steps are dropped.

Usage: python torch_schedule_orders.py > torch_schedule_orders.txt  (torch 2.11 from PyPI)
"""
import torch
from torch.distributed.pipelining import schedules

CASES = [
    ("interleaved_1f1b", schedules.ScheduleInterleaved1F1B, 2),
    ("interleaved_1f1b", schedules.ScheduleInterleaved1F1B, 3),
    ("zb_h1", schedules.ScheduleInterleavedZeroBubble, 1),
    ("zbv", schedules.ScheduleZBVZeroBubble, 2),
]
SHAPES = [(2, 3), (2, 4), (2, 8), (3, 5), (3, 6), (4, 4), (4, 8), (4, 16)]


def rank_orders(cls, ranks, per_rank, micro_batches):
    schedule = object.__new__(cls)  # the counts alone: no stages, no process group
    schedule.pp_group_size = ranks
    schedule.n_local_stages = per_rank
    schedule._n_microbatches = micro_batches
    schedule.num_stages = schedule._num_stages = ranks * per_rank
    schedule.number_of_rounds = max(1, micro_batches // ranks)
    schedule.microbatches_per_round = micro_batches // schedule.number_of_rounds
    for rank in range(ranks):
        schedule.rank = rank
        actions = schedule._calculate_single_rank_operations(rank)
        yield rank, [str(a) for a in actions if a is not None]


def main():
    print(f"# torch {torch.__version__}: schedule ranks stages_per_rank micro_batches rank actions")
    for name, cls, per_rank in CASES:
        for ranks, micro_batches in SHAPES:
            if micro_batches % max(1, micro_batches // ranks) != 0:
                continue  # the interleaved schedules refuse these counts
            for rank, actions in rank_orders(cls, ranks, per_rank, micro_batches):
                print(name, ranks, per_rank, micro_batches, rank, " ".join(actions))


if __name__ == "__main__":
    main()
