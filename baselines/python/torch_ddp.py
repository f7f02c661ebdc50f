#!/usr/bin/env python3
"""One rank of PyTorch's own DistributedDataParallel on the harness's synthetic workload.

Same model (torchvision), batch, loss (MSE against random targets), optimizer (SGD), Gloo
backend and bucket cap as the harness's C++ ranks. Reads the torchrun variables (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and prints one JSON object per measured iteration:
{"iter": 0, "forward_ms": ..., "backward_ms": ..., "step_ms": ..., "iteration_ms": ...}
Phases are timed like the harness's worker: forward = model + loss; backward = autograd and
DDP's gradient all-reduce (DDP waits for it inside backward); step = zero_grad + SGD step.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def build_model(name, input_shape, num_classes):
    import torchvision.models as models
    if name == "resnet50":
        return models.resnet50(num_classes=num_classes or 1000)
    if name == "resnet18":
        return models.resnet18(num_classes=num_classes or 1000)
    if name == "mlp":
        features = 1
        for d in input_shape:
            features *= d
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(features, 256), torch.nn.ReLU(),
                                   torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                   torch.nn.Linear(256, num_classes or 10))
    raise SystemExit(f"unknown model {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--input-shape", default="3,224,224")
    parser.add_argument("--num-classes", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--bucket-mb", type=float, default=25)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    shape = [int(d) for d in args.input_shape.split(",")]
    torch.manual_seed(args.seed)
    model = build_model(args.model, shape, args.num_classes)
    model.train()
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)

    torch.manual_seed(args.seed * 1000003 + rank + 1)
    data = torch.randn([args.batch_size] + shape)
    with torch.no_grad():
        model.eval()
        classes = model(data[:1]).shape[1]
        model.train()
    target = torch.randn(args.batch_size, classes)

    clock = time.perf_counter  # monotonic
    for it in range(args.warmup + args.iterations):
        t0 = clock()
        optimizer.zero_grad()
        t1 = clock()
        loss = torch.nn.functional.mse_loss(ddp(data), target)
        t2 = clock()
        loss.backward()
        t3 = clock()
        optimizer.step()
        t4 = clock()
        if it >= args.warmup:
            ms = lambda a, b: (b - a) * 1000.0
            print(json.dumps({"iter": it - args.warmup, "forward_ms": ms(t1, t2),
                              "backward_ms": ms(t2, t3), "step_ms": ms(t3, t4) + ms(t0, t1),
                              "iteration_ms": ms(t0, t4)}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
