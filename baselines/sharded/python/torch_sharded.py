#!/usr/bin/env python3
"""One rank of PyTorch's own data or tensor parallelism on the harness's Llama-style decoder.

The peer of the harness's `kind: sharded` and `kind: tensor_parallel` systems: the same decoder as runtime/models/llama.cpp
(token embeddings, pre-norm blocks of RMSNorm, causal attention with rotary embeddings and
grouped-query heads, a SwiGLU feed-forward, a last RMSNorm, an untied head; N(0, 0.02)
projections), the same synthetic next-token batch, cross-entropy loss, AdamW, backend and
threads. Modes:
  ddp    DistributedDataParallel (the harness's `overlap`);
  zero1  DistributedDataParallel with ZeroRedundancyOptimizer around AdamW: each rank steps
         its partition of the parameters and broadcasts it (the harness's stage 1);
  fsdp2  fully_shard (FSDP2) on every decoder block, the embeddings and the head, then on the
         root (the last norm), torchtitan's wrapping; bf16 through its MixedPrecisionPolicy
         (bf16 parameters in compute, fp32 gradients reduced), fp32 shards (the harness's
         stage 3);
  tp     DTensor's parallelize_module over all ranks (world = the tensor degree: one replica),
         torchtitan's plan for the blocks: q, k, v, gate and up ColwiseParallel, o and down
         RowwiseParallel; the embeddings, norms and head whole on every rank, as the
         harness's `kind: tensor_parallel`;
  tp_sp  the same with sequence parallelism: the norms SequenceParallel, the attention's and
         feed-forward's inputs gathered by PrepareModuleInput, o and down reduce-scattered to
         sequence shards; the first block's input split along the tokens and the last one's
         output gathered, where the harness shards and rejoins the sequence.
  fsdp_tp  torchtitan's 2D: tp_sp on the tensor dimension (--tensor ranks) of a 2D mesh, and
         fully_shard of every block, the embeddings and the head over its data dimension (the
         harness's `kind: tensor_parallel` with `zero_stage: 3`).
  A tensor-parallel replica trains on batch_size x tensor samples: the global batch of the
  other modes, as the harness's replica. With --vocabulary-parallel the tensor modes split the
  embeddings and the head by vocabulary rows too, torchtitan's plan with loss_parallel (the
  harness's `vocabulary_parallel: true`): the embeddings RowwiseParallel, the head
  ColwiseParallel with its logits left sharded, the last norm SequenceParallel under sequence
  parallelism (the embeddings' output and the head's input are then the token shards, in place
  of the first block's split and the last one's gather), and the cross-entropy inside
  loss_parallel().
Reads the torchrun variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), prints the
harness's timing line protocol (baselines/ddp/python/harness_timings.py) and, with
--memory-out, writes what the rank held after training in the harness's memory_rank<r>.json
form: the bytes of this rank's parameters (its shards under FSDP2), gradients and optimizer
state, and the process's peak resident memory.
"""
import argparse
import contextlib
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ddp", "python"))
from harness_timings import IterationTimer  # noqa: E402
from torchrun_rank import (add_adamw_arguments, add_run_arguments, adamw_settings,  # noqa: E402
                           finish_rank, start_rank, write_memory)


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


class Attention(nn.Module):
    def __init__(self, width, heads, kv_heads, tokens):
        super().__init__()
        self.heads, self.kv_heads, self.head_width = heads, kv_heads, width // heads
        self.q_proj = nn.Linear(width, width, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_width, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_width, bias=False)
        self.o_proj = nn.Linear(width, width, bias=False)
        frequencies = 10000.0 ** (-torch.arange(0, self.head_width, 2).float() / self.head_width)
        angles = torch.outer(torch.arange(tokens).float(), frequencies)
        both = torch.cat([angles, angles], -1)
        self.register_buffer("rope_cos", both.cos())
        self.register_buffer("rope_sin", both.sin())

    def forward(self, x):
        batch, tokens, width = x.shape
        heads_of = lambda t, n: t.view(batch, tokens, n, self.head_width).transpose(1, 2)
        cos, sin = self.rope_cos[:tokens], self.rope_sin[:tokens]
        q = rotate(heads_of(self.q_proj(x), self.heads), cos, sin)
        k = rotate(heads_of(self.k_proj(x), self.kv_heads), cos, sin)
        v = heads_of(self.v_proj(x), self.kv_heads)
        if self.kv_heads < self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, 1)
            v = v.repeat_interleave(self.heads // self.kv_heads, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_width)
        future = torch.ones(tokens, tokens, dtype=torch.bool, device=x.device).triu(1)
        context = torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v
        # -1: under tensor parallelism this rank's heads are a share of the width.
        return self.o_proj(context.transpose(1, 2).reshape(batch, tokens, -1))


class FeedForward(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def feed_forward_width(width):
    return (2 * (4 * width) // 3 + 255) // 256 * 256


class DecoderLayer(nn.Module):
    def __init__(self, width, heads, kv_heads, tokens):
        super().__init__()
        self.input_layernorm = RMSNorm(width)
        self.self_attn = Attention(width, heads, kv_heads, tokens)
        self.post_attention_layernorm = RMSNorm(width)
        self.mlp = FeedForward(width, feed_forward_width(width))

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, depth, width, heads, kv_heads, vocab, tokens):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(DecoderLayer(width, heads, kv_heads, tokens) for _ in range(depth))
        self.norm = RMSNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0, 0.02)

    def forward(self, tokens):
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def local(tensor):
    """A DTensor's shard on this rank, any other tensor as it is."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def tensor_bytes(tensors):
    return sum(local(t).numel() * local(t).element_size() for t in tensors if t is not None)


def optimizer_state_bytes(optimizer):
    inner = getattr(optimizer, "optim", optimizer)  # ZeroRedundancyOptimizer's own partition
    return tensor_bytes(v for state in inner.state.values() for v in state.values()
                        if torch.is_tensor(v) and v.dim() > 0)


def add_decoder_arguments(parser):
    """The decoder's shape, a rank's batch and AdamW's options; 0 for a shape's key is the
    harness's default (runtime/models/model_catalog.h), as a spec leaving the key out."""
    parser.add_argument("--depth", type=int, default=0, help="blocks (0: 2)")
    parser.add_argument("--width", type=int, default=0, help="0: 512")
    parser.add_argument("--heads", type=int, default=0, help="0: width / 64")
    parser.add_argument("--kv-heads", type=int, default=0, help="0: the heads")
    parser.add_argument("--vocab", type=int, default=0, help="0: 32000")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=2, help="samples per rank")
    add_adamw_arguments(parser)


def build_decoder(args, device):
    """The decoder of add_decoder_arguments' options, drawn from --seed on `device`; the
    defaults are resolved into `args` (depth, width, vocab)."""
    args.depth, args.width, args.vocab = args.depth or 2, args.width or 512, args.vocab or 32000
    heads = args.heads or args.width // 64
    torch.manual_seed(args.seed)
    return Llama(args.depth, args.width, heads, args.kv_heads or heads, args.vocab,
                 args.tokens).to(device)


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["ddp", "zero1", "fsdp2", "tp", "tp_sp", "fsdp_tp"],
                   required=True)
    p.add_argument("--tensor", type=int, default=0,
                   help="ranks that split each layer (0: all of them; fsdp_tp: required)")
    add_decoder_arguments(p)
    add_run_arguments(p)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--bucket-mb", type=float, default=25)
    p.add_argument("--vocabulary-parallel", action="store_true",
                   help="tp, tp_sp, fsdp_tp: the embeddings and the head split by vocabulary rows")
    args = p.parse_args()
    if args.vocabulary_parallel and args.mode not in ("tp", "tp_sp", "fsdp_tp"):
        p.error("--vocabulary-parallel goes with a tensor mode (tp, tp_sp, fsdp_tp)")
    if args.mode == "fsdp_tp" and args.tensor < 2:
        p.error("fsdp_tp needs --tensor, the ranks that split each layer (2 or more)")
    return args


def vocabulary_parallel(model, sequence_parallel, mesh):
    """torchtitan's plan for the embeddings, the last norm and the head, for loss_parallel."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    between = Shard(1) if sequence_parallel else Replicate()
    plan = {"embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=between),
            "lm_head": ColwiseParallel(input_layouts=between, output_layouts=Shard(-1),
                                       use_local_output=False)}
    if sequence_parallel:
        plan["norm"] = SequenceParallel()
    parallelize_module(model, mesh, plan)


def tensor_parallel(model, sequence_parallel, mesh, vocabulary=False):
    """torchtitan's plan for the decoder's blocks over `mesh`; heads counted per rank."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   PrepareModuleOutput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    world = mesh.size()
    leave = RowwiseParallel(output_layouts=Shard(1)) if sequence_parallel else RowwiseParallel()
    for i, layer in enumerate(model.layers):
        plan = {name: ColwiseParallel() for name in
                ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "mlp.gate_proj",
                 "mlp.up_proj")}
        plan.update({"self_attn.o_proj": leave, "mlp.down_proj": leave})
        if sequence_parallel:
            gather = PrepareModuleInput(input_layouts=(Shard(1),),
                                        desired_input_layouts=(Replicate(),))
            plan.update({"input_layernorm": SequenceParallel(), "self_attn": gather,
                         "post_attention_layernorm": SequenceParallel(), "mlp": gather})
        parallelize_module(layer, mesh, plan)
        layer.self_attn.heads //= world
        layer.self_attn.kv_heads //= world
    if vocabulary:
        vocabulary_parallel(model, sequence_parallel, mesh)
    elif sequence_parallel:
        parallelize_module(model.layers[0], mesh, PrepareModuleInput(
            input_layouts=(Replicate(),), desired_input_layouts=(Shard(1),), use_local_output=True))
        parallelize_module(model.layers[-1], mesh, PrepareModuleOutput(
            output_layouts=(Shard(1),), desired_output_layouts=(Replicate(),),
            use_local_output=True))
    return model


def wrap(model, args, device):
    """The mode's model and optimizer."""
    adamw = adamw_settings(args)
    if args.mode in ("tp", "tp_sp", "fsdp_tp"):
        from torch.distributed.device_mesh import init_device_mesh
        world = torch.distributed.get_world_size()
        if args.mode != "fsdp_tp":
            net = tensor_parallel(model, args.mode == "tp_sp", init_device_mesh(device.type, (world,)),
                                  args.vocabulary_parallel)
            return net, torch.optim.AdamW(net.parameters(), **adamw)
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh(device.type, (world // args.tensor, args.tensor),
                                mesh_dim_names=("data", "tensor"))
        tensor_parallel(model, True, mesh["tensor"], args.vocabulary_parallel)
        for module in [model.embed_tokens, *model.layers, model.lm_head]:
            fully_shard(module, mesh=mesh["data"])
        fully_shard(model, mesh=mesh["data"])
        return model, torch.optim.AdamW(model.parameters(), **adamw)
    if args.mode == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) \
            if args.precision == "bf16" else MixedPrecisionPolicy()
        for module in [model.embed_tokens, *model.layers, model.lm_head]:
            fully_shard(module, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
        return model, torch.optim.AdamW(model.parameters(), **adamw)
    from torch.nn.parallel import DistributedDataParallel
    device_ids = [device.index] if device.type == "cuda" else None
    net = DistributedDataParallel(model, device_ids=device_ids, bucket_cap_mb=args.bucket_mb)
    if args.mode == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return net, ZeroRedundancyOptimizer(net.parameters(), optimizer_class=torch.optim.AdamW,
                                            **adamw)
    return net, torch.optim.AdamW(net.parameters(), **adamw)


def sharded_loss(vocabulary):
    """loss_parallel() around a vocabulary-parallel iteration's loss and its backward."""
    if not vocabulary:
        return contextlib.nullcontext()
    from torch.distributed.tensor.parallel import loss_parallel
    return loss_parallel()


def main():
    args = arguments()
    rank, world, device = start_rank(args.threads, args.device, args.backend)
    model = build_decoder(args, device)
    net, optimizer = wrap(model, args, device)
    # A tensor-parallel replica draws batch_size x tensor samples, its ranks the same ones.
    tensor = args.tensor or world if args.mode in ("tp", "tp_sp", "fsdp_tp") else 1
    torch.manual_seed(args.seed * 1000003 + rank // tensor + 1)
    rows = args.batch_size * tensor
    tokens = torch.randint(0, args.vocab, (rows, args.tokens + 1), device=device)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    # FSDP2 casts itself; the other modes run forward under autocast, as the harness's ranks.
    autocast = args.precision == "bf16" and args.mode != "fsdp2"
    timer = IterationTimer(warmup=args.warmup)
    for _ in range(args.warmup + args.iterations):
        with timer.iteration(), sharded_loss(args.vocabulary_parallel):
            with timer.phase("step"):
                optimizer.zero_grad()
            with timer.phase("forward"):
                with torch.autocast(device.type, dtype=torch.bfloat16) if autocast else contextlib.nullcontext():
                    logits = net(inputs)
                loss = F.cross_entropy(logits.float().reshape(-1, args.vocab), targets.reshape(-1))
            with timer.phase("backward"):
                loss.backward()
            with timer.phase("step"):
                optimizer.step()
    if args.memory_out:
        write_memory(args.memory_out, tensor_bytes(model.parameters()),
                     tensor_bytes(p.grad for p in model.parameters()),
                     optimizer_state_bytes(optimizer))
    finish_rank()

if __name__ == "__main__":
    sys.exit(main())
