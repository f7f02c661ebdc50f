#!/usr/bin/env python3
"""One rank of DeepSpeed-MoE on the harness's BERT-style mixture-of-experts encoder.

The DeepSpeed peer of the harness's `kind: expert_parallel` (HiDup's comparison, VI.C-F): the
zoo's `bert_moe` (runtime/models/model_zoo.cpp: word and position embeddings and a LayerNorm,
post-LayerNorm encoder layers with a fused q, k, v projection, every `--moe-every`-th
feed-forward a mixture, a tanh pooler of the first token and a classifier; N(0, 0.02) weights,
zero biases) with each mixture a `deepspeed.moe.layer.MoE`: the same router (a bias-free linear
to the experts), the same experts (a 4x GELU feed-forward each), top-k routing with
ceil(factor x tokens x k / experts) tokens an expert (`min_capacity` 0, tokens beyond it
dropped), the experts sharded over all the ranks (`ep_size` = world, as the harness shards
them) and the gate's load-balancing loss added with the harness's weight, 0.01. The dense part
is averaged over the ranks by DeepSpeed's engine (no ZeRO), the experts' gradients over their
expert-data-parallel group (one rank here: nothing). Cross-entropy against random classes, AdamW.

Where it differs from the harness's (experiments/README.md, "Mixture of experts"):
DeepSpeed-MoE pads every expert's slot to its capacity and sends [experts, capacity, width] in
one all-to-all; its top-2 gate picks the second expert after Gumbel noise (GShard's sampling)
and orders capacity by its own rule.

Reads the torchrun variables, prints the harness's timing line protocol and, with --memory-out,
writes memory_rank<r>.json: this rank's parameters (its experts among them), gradients and
AdamW state.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ddp", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sharded", "python"))
from deepspeed_zero import deepspeed_adamw, start_deepspeed  # noqa: E402
from harness_timings import IterationTimer  # noqa: E402
from torch_sharded import tensor_bytes  # noqa: E402
from torchrun_rank import (add_adamw_arguments, add_run_arguments, finish_rank,  # noqa: E402
                           write_memory)

BERT_VOCABULARY = 30522
LOAD_BALANCE_WEIGHT = 0.01  # runtime::kLoadBalanceLossWeight


def feed_forward(width):
    return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))


class EncoderLayer(nn.Module):
    def __init__(self, width, mixture):
        super().__init__()
        self.heads = width // 64
        self.qkv = nn.Linear(width, 3 * width)
        self.attention_output = nn.Linear(width, width)
        self.attention_norm = nn.LayerNorm(width, eps=1e-12)
        self.mixture = mixture
        self.feed_forward = None if mixture is not None else feed_forward(width)
        self.output_norm = nn.LayerNorm(width, eps=1e-12)

    def forward(self, x):
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).view(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(q, k, v)
        x = self.attention_norm(x + self.attention_output(
            context.transpose(1, 2).reshape(batch, tokens, width)))
        if self.mixture is None:
            return self.output_norm(x + self.feed_forward(x)), 0.0
        mixed, balance, _ = self.mixture(x)
        return self.output_norm(x + mixed), balance


class BertMoe(nn.Module):
    def __init__(self, args, world):
        super().__init__()
        from deepspeed.moe.layer import MoE
        width = args.width
        self.words = nn.Embedding(BERT_VOCABULARY, width)
        self.positions = nn.Embedding(args.tokens, width)
        self.embedding_norm = nn.LayerNorm(width, eps=1e-12)
        self.layers = nn.ModuleList()
        for i in range(args.depth):
            mixture = None
            if (i + 1) % args.moe_every == 0:
                mixture = MoE(hidden_size=width, expert=feed_forward(width),
                              num_experts=args.experts, ep_size=world, k=args.top_k,
                              capacity_factor=args.capacity_factor,
                              eval_capacity_factor=args.capacity_factor, min_capacity=0,
                              drop_tokens=True, use_residual=False)
            self.layers.append(EncoderLayer(width, mixture))
        self.pooler = nn.Linear(width, width)
        self.classifier = nn.Linear(width, args.classes)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0, 0.02)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.embedding_norm(self.words(ids) + self.positions(positions).unsqueeze(0))
        balance = 0.0
        for layer in self.layers:
            x, layer_balance = layer(x)
            balance = balance + layer_balance
        return self.classifier(torch.tanh(self.pooler(x[:, 0]))), balance


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # 0: the harness's defaults (runtime/models/model_catalog.h), as a spec leaving a key out.
    p.add_argument("--depth", type=int, default=0, help="encoder layers (0: 12)")
    p.add_argument("--width", type=int, default=0, help="0: 768")
    p.add_argument("--classes", type=int, default=0, help="0: 2")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--top-k", type=int, choices=[1, 2], default=2)
    p.add_argument("--capacity-factor", type=float, default=1.25)
    p.add_argument("--moe-every", type=int, default=2)
    add_adamw_arguments(p)
    add_run_arguments(p)
    args = p.parse_args()
    args.depth, args.width, args.classes = args.depth or 12, args.width or 768, args.classes or 2
    return args


def engine_config(args):
    return {"train_micro_batch_size_per_gpu": args.batch_size,
            "gradient_accumulation_steps": 1,
            "optimizer": deepspeed_adamw(args),
            "steps_per_print": 1 << 30}


def adamw_state_bytes(optimizer):
    inner = getattr(optimizer, "optimizer", optimizer)
    return tensor_bytes(v for state in inner.state.values() for v in state.values()
                        if torch.is_tensor(v) and v.dim() > 0)


def main():
    args = arguments()
    deepspeed, rank, device = start_deepspeed(args)
    world = torch.distributed.get_world_size()
    torch.manual_seed(args.seed)
    model = BertMoe(args, world).to(device)
    engine, optimizer, _, _ = deepspeed.initialize(model=model,
                                                   model_parameters=model.parameters(),
                                                   config=engine_config(args))
    torch.manual_seed(args.seed * 1000003 + rank + 1)
    ids = torch.randint(0, BERT_VOCABULARY, (args.batch_size, args.tokens), device=device)
    classes = torch.randint(0, args.classes, (args.batch_size,), device=device)
    timer = IterationTimer(warmup=args.warmup)
    gradients = 0
    for iteration in range(args.warmup + args.iterations):
        with timer.iteration():
            with timer.phase("forward"):
                logits, balance = engine(ids)
                loss = F.cross_entropy(logits, classes) + LOAD_BALANCE_WEIGHT * balance
            with timer.phase("backward"):
                engine.backward(loss)
            if iteration == args.warmup + args.iterations - 1:
                gradients = tensor_bytes(p.grad for p in model.parameters())
            with timer.phase("step"):
                engine.step()
    if args.memory_out:
        experts = tensor_bytes(p for name, p in model.named_parameters() if ".experts." in name)
        write_memory(args.memory_out, tensor_bytes(model.parameters()), gradients,
                     adamw_state_bytes(optimizer), experts)
    finish_rank()


if __name__ == "__main__":
    sys.exit(main())
