"""The start every PyTorch peer of the harness shares: this process's rank under torchrun's
variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), its device and its process
group, with `threads` intra-op threads. Imported by the peers beside harness_timings."""
import os

import torch
import torch.distributed as dist


def add_run_arguments(parser):
    """The options every peer takes from the harness's run: iterations, warm-up, threads, seed,
    device, backend and where the memory file goes."""
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    parser.add_argument("--memory-out", default="", help="where to write memory_rank<r>.json")


def add_adamw_arguments(parser):
    """AdamW's options, as the spec's optimizer keys give them: lr, betas, eps, weight decay."""
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--betas", default="0.9,0.999")
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--weight-decay", type=float, default=0.01)


def adamw_settings(args):
    """torch.optim.AdamW's keyword arguments from add_adamw_arguments' options."""
    return dict(lr=args.lr, betas=tuple(float(b) for b in args.betas.split(",")), eps=args.eps,
                weight_decay=args.weight_decay)


def rank_device(threads, device_kind):
    """Returns (rank, world_size, device) under torchrun's variables, with `threads` intra-op
    threads and, on `cuda`, local rank r on GPU r (ranks share GPUs round-robin)."""
    torch.set_num_threads(threads)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device("cpu")
    if device_kind == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank))
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    return rank, world, device


def start_rank(threads, device_kind, backend):
    """Returns (rank, world_size, device) once the default process group is up."""
    rank, world, device = rank_device(threads, device_kind)
    dist.init_process_group(backend, rank=rank, world_size=world)
    return rank, world, device


def write_memory(path, parameter_bytes, gradient_bytes, optimizer_state_bytes,
                 expert_parameter_bytes=0):
    """The rank's memory_rank<r>.json, as the harness's ranks write it, with the process's peak
    resident memory; expert_parameter_bytes: of the parameters, a mixture's experts'."""
    import json
    import resource
    memory = {"parameter_bytes": parameter_bytes, "gradient_bytes": gradient_bytes,
              "optimizer_state_bytes": optimizer_state_bytes,
              "expert_parameter_bytes": expert_parameter_bytes,
              "peak_resident_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    with open(path, "w") as out:
        json.dump(memory, out, indent=1)


def finish_rank():
    """Every rank done before the process group goes."""
    dist.barrier()
    dist.destroy_process_group()
