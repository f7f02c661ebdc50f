#!/usr/bin/env python3
"""One rank of PyTorch's own pipelining (torch.distributed.pipelining) on the harness's MLP.

The peer of the harness's `kind: pipeline` systems: the same MLP as runtime/models/model_zoo.cpp
(flatten, then `depth` pairs of Linear and ReLU of `width`, then a Linear to `classes`), cut into
the same stages (--stages "0-3,4-7,...": layer ranges in model order) and placed the same way
(stage c on rank c mod p, or the V of ZB-V), run by the schedule of the same name:
  gpipe             ScheduleGPipe
  dapple            Schedule1F1B
  interleaved_1f1b  ScheduleInterleaved1F1B
  zb_h1             ScheduleInterleavedZeroBubble (one stage per rank: ZB-H1's order)
  zbv               ScheduleZBVZeroBubble
with the same micro-batches, mean-squared-error loss, SGD, backend and threads. Reads the
torchrun variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), prints the harness's timing
line protocol (baselines/ddp/python/harness_timings.py) -- the schedule's step and the optimizer
step, iteration by iteration -- and with --memory-out writes the rank's memory_rank<r>.json
(its stages' parameter and gradient bytes, the process's peak resident memory).
"""
import argparse
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ddp", "python"))
from harness_timings import IterationTimer  # noqa: E402
from torchrun_rank import add_run_arguments, finish_rank, start_rank, write_memory  # noqa: E402

SCHEDULES = {
    "gpipe": "ScheduleGPipe",
    "dapple": "Schedule1F1B",
    "interleaved_1f1b": "ScheduleInterleaved1F1B",
    "zb_h1": "ScheduleInterleavedZeroBubble",
    "zbv": "ScheduleZBVZeroBubble",
}


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedule", choices=sorted(SCHEDULES), required=True)
    p.add_argument("--stages", required=True, help="layer ranges in model order: 0-3,4-7")
    p.add_argument("--micro-batches", type=int, required=True)
    p.add_argument("--input", type=int, default=64, help="features per sample")
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batch-size", type=int, required=True, help="samples per rank")
    p.add_argument("--lr", type=float, default=0.01)
    add_run_arguments(p)
    return p.parse_args()


def mlp_layers(args):
    """The harness's MLP as a list of layers in its chain order."""
    layers = [nn.Flatten()]
    for i in range(args.depth):
        layers += [nn.Linear(args.input if i == 0 else args.width, args.width), nn.ReLU()]
    return layers + [nn.Linear(args.width, args.classes)]


def stage_ranges(text, layer_count):
    ranges = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        ranges.append((int(first), int(last or first)))
    if ranges[0][0] != 0 or ranges[-1][1] != layer_count - 1 or any(
            b[0] != a[1] + 1 for a, b in zip(ranges, ranges[1:])):
        raise SystemExit(f"--stages {text}: not contiguous ranges over the {layer_count} layers")
    return ranges


def train(schedule, optimizer, args, inputs, targets, first, last):
    """The timed iterations: zeroing and the optimizer as step, the schedule's forwards and
    backwards together as backward; the first stage feeds `inputs`, the last takes `targets`."""
    timer = IterationTimer(warmup=args.warmup)
    for _ in range(args.warmup + args.iterations):
        with timer.iteration():
            with timer.phase("step"):
                optimizer.zero_grad()
            with timer.phase("backward"):
                step_args = (inputs,) if first else ()
                step_kwargs = {"target": targets, "losses": []} if last else {}
                schedule.step(*step_args, **step_kwargs)
            with timer.phase("step"):
                optimizer.step()


def rank_of_stage(schedule, stages, world):
    if schedule == "zbv":
        return [c if c < world else 2 * world - 1 - c for c in range(stages)]
    return [c % world for c in range(stages)]


def main():
    args = arguments()
    rank, world, device = start_rank(args.threads, args.device, args.backend)
    from torch.distributed import pipelining
    torch.manual_seed(args.seed)
    layers = mlp_layers(args)
    ranges = stage_ranges(args.stages, len(layers))
    placement = rank_of_stage(args.schedule, len(ranges), world)
    mine = [c for c in range(len(ranges)) if placement[c] == rank]
    stages, parameters = [], []
    for c in mine:
        module = nn.Sequential(*layers[ranges[c][0]:ranges[c][1] + 1]).to(device)
        parameters += list(module.parameters())
        stages.append(pipelining.PipelineStage(module, c, len(ranges), device))
    schedule_class = getattr(pipelining.schedules, SCHEDULES[args.schedule])
    loss = nn.MSELoss()
    multi = schedule_class not in (pipelining.ScheduleGPipe, pipelining.Schedule1F1B)
    schedule = schedule_class(stages if multi else stages[0], n_microbatches=args.micro_batches,
                              loss_fn=loss)
    optimizer = torch.optim.SGD(parameters, lr=args.lr)
    torch.manual_seed(args.seed * 1000003 + 1)
    global_batch = args.batch_size * world
    inputs = torch.randn(global_batch, args.input, device=device)
    targets = torch.randn(global_batch, args.classes, device=device)
    train(schedule, optimizer, args, inputs, targets, 0 in mine, len(ranges) - 1 in mine)
    if args.memory_out:
        write_memory(args.memory_out, sum(p.numel() * p.element_size() for p in parameters),
                     sum(p.grad.numel() * p.grad.element_size()
                         for p in parameters if p.grad is not None), 0)
    finish_rank()

if __name__ == "__main__":
    sys.exit(main())
