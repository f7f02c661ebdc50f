"""The harness's change points against Apache Otava's on the same series.

Usage: otava_peer.py CHANGE_POINTS_TOOL [REAL_SERIES_JSON]  (run by the Python of a virtual
environment that holds apache-otava; tests/e2e/history_otava.sh makes one)

Every series below goes through otava.analysis.compute_change_points (its defaults: window 50,
max_pvalue 0.001) and through the harness's detector (harness/history/change_points.h, through
CHANGE_POINTS_TOOL), twice:
- with the merge step retesting as otava 0.8.0 does (MergeRetest::otava_0_8): the indices must be
  equal on every series;
- with the harness's default (MergeRetest::neighbours: both points beside a removed one are
  retested, where otava retests the one after it and the one after that): the indices must be
  equal except on the series named in BY_DESIGN, which must differ, each with the reason.
Series are passed to Otava as Python lists: given a numpy array, otava 0.8.0's split step runs
every window over the whole series (detector.py slices only a list) and shifts the indices by the
window's start.

Exits 0 when all of that holds, 1 naming each series where it does not.
"""

import json
import subprocess
import sys

import numpy as np
from otava.analysis import compute_change_points

WINDOW = 50
MAX_PVALUE = 0.001

# Where the default merge answers otherwise than otava, and why.
BY_DESIGN = {
    "drift 0.2% a commit over 80, noise 1%":
        "a drift has no single change; the weak points are 5 20 31 40 48 58 68 75, and when 58 "
        "is removed the point before it, 48, is retested over [40, 68) (p 1.4e-5, kept), where "
        "otava keeps its p over [40, 58) (0.0018) and removes it next",
}


def step(rng, n, at, change, noise, level=100.0):
    values = level * (1 + noise * rng.standard_normal(n))
    values[at:] *= 1 + change
    return values


def synthetic_series():
    rng = np.random.default_rng(20261202)
    series = {}
    # Steps up and down of 3 to 30% at several noise levels and places.
    for change in (0.03, 0.05, 0.10, 0.30):
        for sign in (1, -1):
            series[f"step {sign * change:+.0%} at 20 of 40, noise 1%"] = step(
                rng, 40, 20, sign * change, 0.01)
    series["step +10% at 30 of 60, noise 3%"] = step(rng, 60, 30, 0.10, 0.03)
    series["step +15% at 18 of 30, noise 2%"] = step(rng, 30, 18, 0.15, 0.02)
    series["step -5% at 70 of 120, noise 1%"] = step(rng, 120, 70, -0.05, 0.01)
    series["step +3% at 10 of 50, noise 2%"] = step(rng, 50, 10, 0.03, 0.02)
    # Creeps: 2% a commit for five commits, then steady; and a slow drift.
    creep = 100 * (1 + 0.01 * rng.standard_normal(45))
    for k in range(20, 45):
        creep[k] *= 1.02 ** min(k - 19, 5)
    series["creep 2% x 5 from 20 of 45, noise 1%"] = creep
    series["drift 0.2% a commit over 80, noise 1%"] = 100 * (
        1.002 ** np.arange(80)) * (1 + 0.01 * rng.standard_normal(80))
    # Pure noise at several levels.
    for noise in (0.005, 0.02, 0.05, 0.10):
        series[f"noise {noise:.1%}, 60 commits"] = 100 * (1 + noise * rng.standard_normal(60))
    series["noise 2%, 200 commits"] = 100 * (1 + 0.02 * rng.standard_normal(200))
    # Two changes, and a change that comes back.
    two = step(rng, 80, 25, 0.10, 0.01)
    two[55:] *= 1.08
    series["two steps +10% at 25, +8% at 55 of 80"] = two
    back = step(rng, 70, 20, 0.12, 0.015)
    back[45:] /= 1.12
    series["step +12% at 20, back at 45 of 70"] = back
    # Outliers: single spikes on a steady series, and on a step.
    spikes = 100 * (1 + 0.01 * rng.standard_normal(50))
    spikes[[7, 23, 41]] *= 1.5
    series["noise 1% with three +50% spikes"] = spikes
    spiky_step = step(rng, 60, 35, 0.08, 0.01)
    spiky_step[[10, 50]] *= 1.6
    series["step +8% at 35 of 60 with two spikes"] = spiky_step
    # Heavy tails: runs of a noisy machine.
    tails = 100 + 2 * rng.standard_t(3, 60)
    tails[40:] += 9
    series["step +9% at 40 of 60, t(3) noise"] = tails
    return {name: [float(v) for v in values] for name, values in series.items()}


def harness_points(tool, series, merge_retest):
    request = {"window": WINDOW, "max_pvalue": MAX_PVALUE, "merge_retest": merge_retest,
               "series": series}
    return json.loads(subprocess.run([tool], input=json.dumps(request), capture_output=True,
                                     text=True, check=True).stdout)


def main():
    tool = sys.argv[1]
    series = synthetic_series()
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            series.update(json.load(f)["series"])
    as_otava = harness_points(tool, series, "otava_0_8")
    default = harness_points(tool, series, "neighbours")
    failures = 0
    for name, values in series.items():
        points, _ = compute_change_points(list(values), window_len=WINDOW, max_pvalue=MAX_PVALUE)
        otava = [int(p.index) for p in points]
        same = otava == as_otava[name]
        expected_default = default[name] != otava if name in BY_DESIGN else default[name] == otava
        failures += not same or not expected_default
        status = "ok  " if same and expected_default else "FAIL"
        note = f"; by design: {BY_DESIGN[name]}" if name in BY_DESIGN else ""
        print(f"{status} {name} ({len(values)} points): otava {otava}, harness as otava "
              f"{as_otava[name]}, harness {default[name]}{note}")
    print(f"{len(series) - failures} of {len(series)} series as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
