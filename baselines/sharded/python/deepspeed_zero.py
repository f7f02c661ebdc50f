#!/usr/bin/env python3
"""One rank of DeepSpeed's ZeRO on the harness's Llama-style decoder.

The DeepSpeed peer of the harness's `kind: sharded` systems: the decoder, the synthetic
next-token batch, the cross-entropy and AdamW of torch_sharded.py (the PyTorch peer beside it),
trained by `deepspeed.initialize` with ZeRO stage 1 (optimizer state partitioned), 2 (and the
gradients, reduce-scattered) or 3 (and the parameters, gathered before use), over Gloo on the
CPU or NCCL on GPUs. DeepSpeed's buckets are set to the harness's cap (`reduce_bucket_size`,
`allgather_bucket_size`, stage 3's prefetch), and stage 3 partitions every parameter
(`stage3_param_persistence_threshold: 0`: DeepSpeed's default keeps parameters under 100,000
elements whole on every rank, most of a small decoder), as the harness's stage 3 and FSDP do.

Reads the torchrun variables, prints the harness's timing line protocol and, with --memory-out,
writes memory_rank<r>.json: the rank's own parameter bytes (its partitions under stage 3), the
gradient bytes its optimizer holds after the last backward (the rank's partition under every
stage: DeepSpeed's stage 1 reduces gradients bucket by bucket into its partition, as stage 2
does), and its optimizer state: AdamW's moments and the fp32 copy of the rank's partition that
ZeRO steps, which DeepSpeed keeps even when the model trains in fp32.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ddp", "python"))
sys.path.insert(0, os.path.dirname(__file__))
from harness_timings import IterationTimer  # noqa: E402
from torch_sharded import add_decoder_arguments, build_decoder, tensor_bytes  # noqa: E402
from torchrun_rank import (add_run_arguments, adamw_settings, finish_rank,  # noqa: E402
                           rank_device, write_memory)

MIB = 1 << 20


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stage", type=int, choices=[1, 2, 3], required=True)
    add_decoder_arguments(p)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--bucket-mb", type=float, default=25)
    add_run_arguments(p)
    return p.parse_args()


def deepspeed_adamw(args):
    """PyTorch's AdamW (`torch_adam`) with the run's options, as a DeepSpeed optimizer entry."""
    settings = adamw_settings(args)
    return {"type": "AdamW", "params": dict(settings, betas=list(settings["betas"]),
                                            torch_adam=True)}


def zero_config(args):
    """The DeepSpeed configuration of the harness's run: its batch, AdamW, buckets and math."""
    bucket = int(args.bucket_mb * MIB / 4)  # DeepSpeed counts elements
    zero = {"stage": args.stage, "reduce_bucket_size": bucket, "allgather_bucket_size": bucket,
            "contiguous_gradients": True}
    if args.stage == 3:
        zero.update({"stage3_param_persistence_threshold": 0,
                     "stage3_prefetch_bucket_size": bucket})
    return {"train_micro_batch_size_per_gpu": args.batch_size,
            "gradient_accumulation_steps": 1,
            "optimizer": deepspeed_adamw(args),
            "zero_optimization": zero,
            "bf16": {"enabled": args.precision == "bf16"},
            "steps_per_print": 1 << 30}


def start_deepspeed(args):
    """DeepSpeed's process group over the torchrun variables: (deepspeed, rank, device)."""
    import deepspeed
    # The CPU backend compiles a shared-memory all-reduce for inference when it starts (half a
    # minute on 2 cores, once per machine); training's collectives go through torch.distributed.
    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    rank, _, device = rank_device(args.threads, args.device)
    deepspeed.init_distributed(dist_backend=args.backend)
    return deepspeed, rank, device


def state_bytes(optimizer, stage):
    """AdamW's moments and the fp32 copy of the rank's partition that ZeRO steps."""
    moments = tensor_bytes(v for state in optimizer.optimizer.state.values()
                           for v in state.values() if torch.is_tensor(v) and v.dim() > 0)
    master = (optimizer.fp32_partitioned_groups_flat if stage == 3
              else optimizer.single_partition_of_fp32_groups)
    return moments + tensor_bytes(master)


def gradient_bytes(optimizer, stage):
    """The gradients the rank holds after backward: under every stage only its partition's,
    reduced bucket by bucket (DeepSpeed's stage 1 keeps no whole gradients either)."""
    if stage == 3:
        return tensor_bytes([optimizer.grad_partitions_flat_buffer])
    return tensor_bytes(t for group in optimizer.averaged_gradients.values() for t in group)


def parameter_bytes(model, stage):
    if stage == 3:
        return tensor_bytes(p.ds_tensor for p in model.parameters())
    return tensor_bytes(model.parameters())


def main():
    args = arguments()
    deepspeed, rank, device = start_deepspeed(args)
    model = build_decoder(args, device)
    engine, optimizer, _, _ = deepspeed.initialize(model=model,
                                                   model_parameters=model.parameters(),
                                                   config=zero_config(args))
    torch.manual_seed(args.seed * 1000003 + rank + 1)
    tokens = torch.randint(0, args.vocab, (args.batch_size, args.tokens + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    timer = IterationTimer(warmup=args.warmup)
    gradients = 0
    for iteration in range(args.warmup + args.iterations):
        with timer.iteration():
            with timer.phase("forward"):
                logits = engine(inputs)
                loss = F.cross_entropy(logits.float().reshape(-1, args.vocab), targets.reshape(-1))
            with timer.phase("backward"):
                engine.backward(loss)
            if iteration == args.warmup + args.iterations - 1:
                gradients = gradient_bytes(optimizer, args.stage)
            with timer.phase("step"):
                engine.step()  # steps and zeroes the gradients
    if args.memory_out:
        write_memory(args.memory_out, parameter_bytes(model, args.stage), gradients,
                     state_bytes(optimizer, args.stage))
    finish_rank()


if __name__ == "__main__":
    sys.exit(main())
