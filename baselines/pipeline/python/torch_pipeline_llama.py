#!/usr/bin/env python3
"""One rank of PyTorch's own pipelining composed with data and tensor parallelism on the Llama decoder.

The peer of the harness's pipeline compositions (`kind: pipeline` with `zero_stage` or `tensor`):
torchtitan's layout, a device mesh of (pipeline, data, tensor) dimensions, pipeline outermost and
tensor innermost, as the harness places stages (stage s on ranks s·R·t..), over the decoder of
baselines/sharded/python/torch_sharded.py (the harness's runtime/models/llama.cpp) cut into the
harness's chain (the embeddings, each block, the last norm, the head) and into the same stages
(--stages "0-2,3-6": chain layers, inclusive). Each stage runs torch.distributed.pipelining's
PipelineStage on its pipeline group under the schedule of the same name (gpipe: ScheduleGPipe,
dapple: Schedule1F1B), and its replicas are, by --data:
  ddp    DistributedDataParallel over the data group (PipelineStage skips its all-reduce until
         the last micro-batch's backward): the harness's plain pipeline;
  zero1  the same with ZeroRedundancyOptimizer around AdamW (DeepSpeed's pipeline engine's
         ZeRO-1): the harness's `zero_stage: 1`;
  fsdp2  fully_shard (FSDP2) of every block of the stage and of the stage, over the data group,
         with reshard_after_forward=False, as torchtitan sets it under pipelining: the whole
         parameters stay gathered for all the micro-batches: the harness's `zero_stage: 3`.
With --tensor t each stage's blocks are split by torchtitan's plan over the tensor group
(torch_sharded.py's tensor_parallel; --sequence-parallel for its norms on token shards), the
harness's `tensor` inside stages; the replicas are then one (the tensor modes of DTensor do not
go under DDP). A replica runs its share of the global batch (batch_size x world / replicas
rows) in --micro-batches micro-batches, cross-entropy, AdamW. Reads the torchrun variables,
prints the harness's timing line protocol (baselines/ddp/python/harness_timings.py: the schedule's
step as backward, zeroing and the optimizer as step) and, with --memory-out, writes the rank's
memory_rank<r>.json: its stage's parameter bytes (its shards under FSDP2), gradients and
optimizer state, and the process's peak resident memory.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "ddp", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sharded", "python"))
from torchrun_rank import (add_run_arguments, adamw_settings, finish_rank,  # noqa: E402
                           start_rank, write_memory)
from torch_sharded import (add_decoder_arguments, build_decoder,  # noqa: E402
                           optimizer_state_bytes, tensor_bytes, tensor_parallel)
from torch_pipeline import stage_ranges, train  # noqa: E402

SCHEDULES = {"gpipe": "ScheduleGPipe", "dapple": "Schedule1F1B"}


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedule", choices=sorted(SCHEDULES), required=True)
    p.add_argument("--stages", required=True, help="chain layer ranges in order: 0-2,3-6")
    p.add_argument("--micro-batches", type=int, required=True)
    p.add_argument("--data", choices=["ddp", "zero1", "fsdp2"], default="ddp")
    p.add_argument("--tensor", type=int, default=1, help="ranks that split each block")
    p.add_argument("--sequence-parallel", action="store_true")
    add_decoder_arguments(p)
    p.add_argument("--bucket-mb", type=float, default=25)
    add_run_arguments(p)
    args = p.parse_args()
    if args.tensor > 1 and args.data != "ddp":
        p.error("--tensor goes with --data ddp (one replica per stage)")
    if args.sequence_parallel and args.tensor < 2:
        p.error("--sequence-parallel needs --tensor 2 or more")
    return args


def mesh_of(args, world, stages, device):
    """The (pipeline, data, tensor) mesh, pipeline outermost, as the harness places its ranks."""
    from torch.distributed.device_mesh import init_device_mesh
    replicas = world // (stages * args.tensor)
    if replicas < 1 or replicas * stages * args.tensor != world:
        raise SystemExit(f"{world} ranks are not {stages} stages x replicas x {args.tensor}")
    if args.tensor > 1 and replicas != 1:
        raise SystemExit("--tensor: one replica per stage (world = stages x tensor)")
    return init_device_mesh(device.type, (stages, replicas, args.tensor),
                            mesh_dim_names=("pipeline", "data", "tensor"))


def stage_module(model, first, last):
    """Chain layers first..last of the decoder as one module."""
    chain = [model.embed_tokens, *model.layers, model.norm, model.lm_head]
    return nn.Sequential(*chain[first:last + 1])


def replicate(module, args, mesh, device):
    """The stage's replicas over the data group: DDP, or FSDP2 without resharding."""
    if mesh["data"].size() == 1:
        return module
    if args.data == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for layer in module:
            if sum(p.numel() for p in layer.parameters()) > 0:
                fully_shard(layer, mesh=mesh["data"], reshard_after_forward=False)
        fully_shard(module, mesh=mesh["data"], reshard_after_forward=False)
        return module
    from torch.nn.parallel import DistributedDataParallel
    device_ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(module, device_ids=device_ids, bucket_cap_mb=args.bucket_mb,
                                   process_group=mesh["data"].get_group())


def optimizer_of(net, args, mesh):
    adamw = adamw_settings(args)
    if args.data == "zero1" and mesh["data"].size() > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return ZeroRedundancyOptimizer(net.parameters(), optimizer_class=torch.optim.AdamW,
                                       process_group=mesh["data"].get_group(), **adamw)
    return torch.optim.AdamW(net.parameters(), **adamw)


def main():
    args = arguments()
    rank, world, device = start_rank(args.threads, args.device, args.backend)
    from torch.distributed import pipelining
    model = build_decoder(args, device)  # resolves the depth the chain's length needs
    ranges = stage_ranges(args.stages, args.depth + 3)
    mesh = mesh_of(args, world, len(ranges), device)
    stage = mesh.get_local_rank("pipeline")
    if args.tensor > 1:
        tensor_parallel(model, args.sequence_parallel, mesh["tensor"])
    net = replicate(stage_module(model, *ranges[stage]), args, mesh, device)
    pipeline_stage = pipelining.PipelineStage(net, stage, len(ranges), device,
                                              group=mesh["pipeline"].get_group())
    loss = lambda logits, targets: F.cross_entropy(logits.reshape(-1, args.vocab),
                                                   targets.reshape(-1))
    schedule = getattr(pipelining.schedules, SCHEDULES[args.schedule])(
        pipeline_stage, n_microbatches=args.micro_batches, loss_fn=loss)
    optimizer = optimizer_of(net, args, mesh)
    # A replica's rows, the same on its stages and tensor slices: its share of the global batch.
    replica = mesh.get_local_rank("data")
    torch.manual_seed(args.seed * 1000003 + replica + 1)
    rows = args.batch_size * world // mesh["data"].size()
    tokens = torch.randint(0, args.vocab, (rows, args.tokens + 1), device=device)
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    train(schedule, optimizer, args, inputs, targets, stage == 0, stage == len(ranges) - 1)
    if args.memory_out:
        write_memory(args.memory_out, tensor_bytes(net.parameters()),
                     tensor_bytes(p.grad for p in net.parameters()),
                     optimizer_state_bytes(optimizer))
    finish_rank()


if __name__ == "__main__":
    sys.exit(main())
