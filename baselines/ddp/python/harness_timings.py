"""Reference emitter of the harness's timing line protocol for Python training programs.

An external system (kind: external in an experiment spec) reports one JSON object per measured
iteration, on stdout or in a file:

    {"iter": 0, "forward_ms": 101.2, "backward_ms": 212.4, "step_ms": 3.1, "iteration_ms": 317.0}

`iter` counts measured iterations from 0 (warm-up iterations print nothing). Any phase may be
left out; iteration_ms is the whole iteration. Standard library only, so it can be copied
next to any script:

    from harness_timings import IterationTimer
    timer = IterationTimer(warmup=args.warmup)
    for _ in range(args.warmup + args.iterations):
        with timer.iteration():
            with timer.phase("forward"):
                loss = loss_fn(model(x), y)
            with timer.phase("backward"):
                loss.backward()
            with timer.phase("step"):
                optimizer.step()
                optimizer.zero_grad()

A phase entered several times in one iteration (gradient accumulation) adds up.
"""
import contextlib
import json
import sys
import time

PHASES = ("forward", "backward", "step")


class IterationTimer:
    def __init__(self, warmup=0, out=None, clock=time.perf_counter):
        """warmup: iterations timed but not printed; out: a text stream (default stdout) or a
        path to append to; clock: a monotonic clock in seconds."""
        self.warmup = warmup
        self.clock = clock
        self._own_file = isinstance(out, str)
        self.out = open(out, "a", buffering=1) if self._own_file else (out or sys.stdout)
        self.count = 0  # iterations finished, warm-up included
        self._phases = None

    @contextlib.contextmanager
    def phase(self, name):
        if name not in PHASES:
            raise ValueError(f"unknown phase {name!r} (expected one of {', '.join(PHASES)})")
        if self._phases is None:
            raise RuntimeError("phase() outside iteration()")
        start = self.clock()
        try:
            yield
        finally:
            self._phases[name] = self._phases.get(name, 0.0) + (self.clock() - start) * 1000.0

    @contextlib.contextmanager
    def iteration(self):
        self._phases = {}
        start = self.clock()
        yield
        total = (self.clock() - start) * 1000.0
        if self.count >= self.warmup:
            fields = {f"{name}_ms": self._phases[name] for name in PHASES if name in self._phases}
            self.emit(self.count - self.warmup, iteration_ms=total, **fields)
        self.count += 1
        self._phases = None

    def emit(self, iteration, **fields):
        """Prints one sample: emit(3, forward_ms=1.5, iteration_ms=4.0)."""
        self.out.write(json.dumps({"iter": iteration, **fields}) + "\n")
        self.out.flush()  # the harness reads it as it comes (and as a heartbeat)

    def close(self):
        if self._own_file:
            self.out.close()
