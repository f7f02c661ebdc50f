#!/usr/bin/env python3
"""One rank of PyTorch's own DistributedDataParallel on the harness's synthetic workload.

Same model (torchvision), batch, loss (MSE against random targets), optimizer (SGD), Gloo
backend and bucket cap as the harness's C++ ranks. Reads the torchrun variables (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and prints the harness's line protocol, one JSON object
per measured iteration (baselines/ddp/python/harness_timings.py):
{"iter": 0, "forward_ms": ..., "backward_ms": ..., "step_ms": ..., "iteration_ms": ...}
Phases are timed like the harness's worker: forward = model + loss; backward = autograd and
the gradient all-reduce; step = zero_grad + SGD step. On a GPU (--device cuda) both time them
with CUDA events on the current stream, read once the iteration is over.

--precision as the harness's model.precision: fp32 is IEEE fp32 (on a GPU cuDNN's and cuBLAS's
TF32 turned off; PyTorch's default has cuDNN on TF32), tf32 turns both on (GPUs only), bf16
runs forward and loss under autocast in bfloat16 on the rank's device.

Modes:
  ddp        DistributedDataParallel; DDP overlaps bucketed all-reduces with backward and
             waits for them inside backward.
  no_sync    DDP with gradient accumulation: --accumulate micro-batches per iteration, all
             but the last under ddp.no_sync() (no communication), the last one all-reduces.
             Phases add up over the micro-batches.
  per_param  no DDP: after backward, one blocking all-reduce per parameter gradient, in
             registration order, then averaging (the harness's per_tensor mode).
"""
import argparse
import contextlib
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from harness_timings import IterationTimer


class CudaEventTimer(IterationTimer):
    """IterationTimer's protocol with phases timed by CUDA events on the current stream and
    read after the iteration (as the harness's ranks do on a GPU): nothing in the iteration
    waits for the device."""

    @contextlib.contextmanager
    def phase(self, name):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        try:
            yield
        finally:
            end.record()
            self._events.append((name, start, end))

    @contextlib.contextmanager
    def iteration(self):
        self._events, self._phases = [], {}
        begin, finish = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        yield
        finish.record()
        finish.synchronize()
        for name, start, end in self._events:
            self._phases[name] = self._phases.get(name, 0.0) + start.elapsed_time(end)
        if self.count >= self.warmup:
            self.emit(self.count - self.warmup, iteration_ms=begin.elapsed_time(finish),
                      **{f"{name}_ms": ms for name, ms in self._phases.items()})
        self.count += 1
        self._phases = None


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
    parser.add_argument("--mode", choices=["ddp", "no_sync", "per_param"], default="ddp")
    parser.add_argument("--accumulate", type=int, default=2,
                        help="no_sync: micro-batches per iteration (the last one all-reduces)")
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--input-shape", default="3,224,224")
    parser.add_argument("--num-classes", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--bucket-mb", type=float, default=25)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="cuda: GPU LOCAL_RANK (modulo the GPUs), as the harness places ranks")
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    parser.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    args = parser.parse_args()
    if args.accumulate < 1:
        parser.error("--accumulate must be >= 1")
    if args.precision == "tf32" and args.device != "cuda":
        parser.error("--precision tf32 needs --device cuda")

    torch.set_num_threads(args.threads)
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    device = torch.device("cpu")
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count())
        torch.cuda.set_device(device)
        tf32 = args.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32

    def forward_precision():
        if args.precision != "bf16":
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=torch.bfloat16)

    dist.init_process_group(args.backend, rank=rank, world_size=world_size)

    shape = [int(d) for d in args.input_shape.split(",")]
    torch.manual_seed(args.seed)
    model = build_model(args.model, shape, args.num_classes).to(device)
    model.train()
    if args.mode == "per_param":
        net = model
    else:
        device_ids = [device.index] if device.type == "cuda" else None
        net = DistributedDataParallel(model, device_ids=device_ids, bucket_cap_mb=args.bucket_mb)
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum)
    parameters = [p for p in model.parameters() if p.requires_grad]

    torch.manual_seed(args.seed * 1000003 + rank + 1)
    data = torch.randn([args.batch_size] + shape).to(device)
    with torch.no_grad():
        model.eval()
        classes = model(data[:1]).shape[1]
        model.train()
    target = torch.randn(args.batch_size, classes).to(device)

    micro_batches = args.accumulate if args.mode == "no_sync" else 1
    timer = (CudaEventTimer if device.type == "cuda" else IterationTimer)(warmup=args.warmup)
    for _ in range(args.warmup + args.iterations):
        with timer.iteration():
            with timer.phase("step"):
                optimizer.zero_grad()
            for micro in range(micro_batches):
                last = micro == micro_batches - 1
                skip_sync = args.mode == "no_sync" and not last
                with net.no_sync() if skip_sync else contextlib.nullcontext():
                    with timer.phase("forward"), forward_precision():
                        loss = torch.nn.functional.mse_loss(net(data), target)
                    with timer.phase("backward"):
                        loss.backward()
                        if args.mode == "per_param":
                            for p in parameters:
                                dist.all_reduce(p.grad)
                                p.grad.div_(world_size)
            with timer.phase("step"):
                optimizer.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
