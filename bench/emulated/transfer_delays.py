#!/usr/bin/env python3
"""Per-transfer delivery times of a traced pipeline run (issue 39).

Reads the trace_rank<r>.json files of one run folder (`harness run SPEC --set run.trace=true`,
raw/<point>/<system>/rep<k>/) and prints, for every point-to-point transfer of the traced
iteration, when its sender issued it, when its receiver posted the receive, when the receive
completed, and the delivery time: completion minus the later of the two (the moment both sides
were ready; Gloo writes a message only once its receiver has posted). Beside it, the mean number
of ranks computing (forward, backward, step) during the delivery, and the sender's other
transfers in flight with it. Last, the delivery times split by which side was ready first.

    python3 bench/emulated/transfer_delays.py RESULTS/raw/p000/dapple_4/rep0
"""
import json
import os
import statistics
import sys

COMPUTE = ("forward", "backward", "step")


def read_events(folder):
    events, rank = [], 0
    while os.path.exists(path := os.path.join(folder, f"trace_rank{rank}.json")):
        with open(path) as f:
            for e in json.load(f)["traceEvents"]:
                if e.get("ph") == "X":
                    start = e["ts"] / 1000
                    events.append({"rank": rank, "name": e["name"], "start": start,
                                   "end": start + e["dur"] / 1000, "args": e.get("args", {})})
        rank += 1
    if not events:
        print(f"error: {folder}: no trace_rank<r>.json with events (run with run.trace=true)",
              file=sys.stderr)
        sys.exit(2)
    origin = min(e["start"] for e in events)
    for e in events:
        e["start"] -= origin
        e["end"] -= origin
    return events


def transfers(events):
    """(sender's send event, receiver's recv event, peer) for every send whose receive is traced."""
    receives = {(e["rank"], e["name"]): e for e in events if e["name"].startswith("recv ")}
    out = []
    for send in events:
        if not send["name"].startswith("send ") or "peer" not in send["args"]:
            continue
        what = send["name"][len("send "):]
        for peer in send["args"]["peer"]:
            if (receive := receives.get((peer, "recv " + what))) is not None:
                out.append((send, receive, peer))
    return sorted(out, key=lambda t: max(t[0]["start"], t[1]["start"]))


def ranks_computing(events, start, end):
    if end <= start:
        return 0.0
    busy = sum(max(0.0, min(end, e["end"]) - max(start, e["start"]))
               for e in events if e["name"].startswith(COMPUTE))
    return busy / (end - start)


def main():
    if len(sys.argv) != 2:
        print("usage: bench/emulated/transfer_delays.py RUN_FOLDER (raw/<point>/<system>/rep<k>)",
              file=sys.stderr)
        sys.exit(2)
    events = read_events(sys.argv[1])
    rows = transfers(events)
    print(f"{'transfer':<24} {'ranks':>7} {'sent':>7} {'posted':>7} {'done':>7} {'delivery':>8} "
          f"{'computing':>9}  with")
    by_order = {"receiver first": [], "sender first": []}
    for send, receive, peer in rows:
        ready = max(send["start"], receive["start"])
        delivery = receive["end"] - ready
        alongside = [f"{s['name'][5:]}->r{p}" for s, r, p in rows
                     if s["rank"] == send["rank"] and s is not send
                     and max(s["start"], r["start"]) < receive["end"] and r["end"] > ready]
        by_order["receiver first" if receive["start"] <= send["start"] else "sender first"].append(
            delivery)
        print(f"{send['name'][5:]:<24} r{send['rank']}->r{peer:<3} {send['start']:7.2f} "
              f"{receive['start']:7.2f} {receive['end']:7.2f} {delivery:8.2f} "
              f"{ranks_computing(events, ready, receive['end']):9.2f}  {', '.join(alongside)}")
    for order, times in by_order.items():
        if times:
            print(f"{order}: {len(times)} transfers, delivery median {statistics.median(times):.2f} ms,"
                  f" {min(times):.2f}-{max(times):.2f} ms")


if __name__ == "__main__":
    main()
