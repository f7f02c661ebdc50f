#!/usr/bin/env python3
"""One rank of DeepSpeed-MoE on the harness's BERT- or ViT-style mixture-of-experts encoder.

The DeepSpeed peer of the harness's `kind: expert_parallel` (HiDup's comparison, VI.C-F): the
zoo's `bert_moe` (runtime/models/model_zoo.cpp: word and position embeddings and a LayerNorm,
post-LayerNorm encoder layers with a fused q, k, v projection, every `--moe-every`-th
feed-forward a mixture, a tanh pooler of the first token and a classifier) or `vit_moe` (16 x 16
patches projected, a class token and learned positions, the same layers normalising before each
branch with eps 1e-6, the class token's LayerNorm and classifier); N(0, 0.02) weights, zero
biases; each mixture a `deepspeed.moe.layer.MoE`: the same router (a bias-free linear
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
PATCH = 16  # ViT-B/16's


def feed_forward(width):
    return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))


class EncoderLayer(nn.Module):
    """BERT's post-LayerNorm layer, or with `pre_norm` ViT's (each branch normalises its input)."""

    def __init__(self, width, mixture, pre_norm):
        super().__init__()
        eps = 1e-6 if pre_norm else 1e-12
        self.heads, self.pre_norm = width // 64, pre_norm
        self.qkv = nn.Linear(width, 3 * width)
        self.attention_output = nn.Linear(width, width)
        self.attention_norm = nn.LayerNorm(width, eps=eps)
        self.mixture = mixture
        self.feed_forward = None if mixture is not None else feed_forward(width)
        self.output_norm = nn.LayerNorm(width, eps=eps)

    def attention(self, x):
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).view(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(q, k, v)
        return self.attention_output(context.transpose(1, 2).reshape(batch, tokens, width))

    def feed_forward_branch(self, x):
        if self.mixture is None:
            return self.feed_forward(x), 0.0
        mixed, balance, _ = self.mixture(x)
        return mixed, balance

    def forward(self, x):
        if self.pre_norm:
            x = x + self.attention(self.attention_norm(x))
            mixed, balance = self.feed_forward_branch(self.output_norm(x))
            return x + mixed, balance
        x = self.attention_norm(x + self.attention(x))
        mixed, balance = self.feed_forward_branch(x)
        return self.output_norm(x + mixed), balance


def encoder_layers(args, world, pre_norm):
    """The layers, a DeepSpeed-MoE mixture in every `--moe-every`-th."""
    from deepspeed.moe.layer import MoE
    layers = nn.ModuleList()
    for i in range(args.depth):
        mixture = None
        if (i + 1) % args.moe_every == 0:
            mixture = MoE(hidden_size=args.width, expert=feed_forward(args.width),
                          num_experts=args.experts, ep_size=world, k=args.top_k,
                          capacity_factor=args.capacity_factor,
                          eval_capacity_factor=args.capacity_factor, min_capacity=0,
                          drop_tokens=True, use_residual=False)
        layers.append(EncoderLayer(args.width, mixture, pre_norm))
    return layers


def run_layers(layers, x):
    balance = 0.0
    for layer in layers:
        x, layer_balance = layer(x)
        balance = balance + layer_balance
    return x, balance


def initialize(model):
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, 0, 0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)


class BertMoe(nn.Module):
    def __init__(self, args, world):
        super().__init__()
        width = args.width
        self.words = nn.Embedding(BERT_VOCABULARY, width)
        self.positions = nn.Embedding(args.input_shape[0], width)
        self.embedding_norm = nn.LayerNorm(width, eps=1e-12)
        self.layers = encoder_layers(args, world, pre_norm=False)
        self.pooler = nn.Linear(width, width)
        self.classifier = nn.Linear(width, args.classes)
        initialize(self)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.embedding_norm(self.words(ids) + self.positions(positions).unsqueeze(0))
        x, balance = run_layers(self.layers, x)
        return self.classifier(torch.tanh(self.pooler(x[:, 0]))), balance


class VitMoe(nn.Module):
    def __init__(self, args, world):
        super().__init__()
        channels, height, width_px = args.input_shape
        patches = (height // PATCH) * (width_px // PATCH)
        self.projection = nn.Linear(channels * PATCH * PATCH, args.width)
        self.class_token = nn.Parameter(torch.zeros(1, 1, args.width))
        self.positions = nn.Parameter(torch.zeros(1, patches + 1, args.width))
        self.layers = encoder_layers(args, world, pre_norm=True)
        self.norm = nn.LayerNorm(args.width, eps=1e-6)
        self.classifier = nn.Linear(args.width, args.classes)
        initialize(self)
        nn.init.normal_(self.class_token, 0, 0.02)
        nn.init.normal_(self.positions, 0, 0.02)

    def forward(self, images):
        batch, channels, height, width_px = images.shape
        patches = images.reshape(batch, channels, height // PATCH, PATCH, width_px // PATCH, PATCH)
        patches = patches.permute(0, 2, 4, 1, 3, 5).reshape(batch, -1, channels * PATCH * PATCH)
        x = torch.cat([self.class_token.expand(batch, -1, -1), self.projection(patches)], 1)
        x, balance = run_layers(self.layers, x + self.positions)
        return self.classifier(self.norm(x)[:, 0]), balance


def arguments():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # 0: the harness's defaults (runtime/models/model_catalog.h), as a spec leaving a key out.
    p.add_argument("--model", choices=["bert_moe", "vit_moe"], default="bert_moe")
    p.add_argument("--depth", type=int, default=0, help="encoder layers (0: 12)")
    p.add_argument("--width", type=int, default=0, help="0: 768")
    p.add_argument("--classes", type=int, default=0, help="0: 2 (bert_moe), 1000 (vit_moe)")
    p.add_argument("--input-shape", default="",
                   help="TOKENS (bert_moe, default 128) or CHANNELS,HEIGHT,WIDTH (vit_moe, "
                        "default 3,224,224)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--top-k", type=int, choices=[1, 2], default=2)
    p.add_argument("--capacity-factor", type=float, default=1.25)
    p.add_argument("--moe-every", type=int, default=2)
    add_adamw_arguments(p)
    add_run_arguments(p)
    args = p.parse_args()
    vit = args.model == "vit_moe"
    args.depth, args.width = args.depth or 12, args.width or 768
    args.classes = args.classes or (1000 if vit else 2)
    default_shape = "3,224,224" if vit else "128"
    args.input_shape = [int(d) for d in (args.input_shape or default_shape).split(",")]
    if len(args.input_shape) != (3 if vit else 1):
        p.error(f"--input-shape {args.input_shape}: {args.model} takes {default_shape}'s form")
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
    model = (VitMoe if args.model == "vit_moe" else BertMoe)(args, world).to(device)
    engine, optimizer, _, _ = deepspeed.initialize(model=model,
                                                   model_parameters=model.parameters(),
                                                   config=engine_config(args))
    torch.manual_seed(args.seed * 1000003 + rank + 1)
    shape = (args.batch_size, *args.input_shape)
    ids = (torch.randn(shape, device=device) if args.model == "vit_moe"
           else torch.randint(0, BERT_VOCABULARY, shape, device=device))
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
