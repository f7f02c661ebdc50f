"""The table of a validation's rounds (bench/simulator/validate_tensor.sh, validate_experts.sh):
per world and system, the measured p50 (the median over the rounds' runs), the samples they
pooled, the median of the rounds' simulated p50s, its error and each round's error.

Usage: rounds_table.py OUT [NOTE]: reads OUT/rounds.csv (world, system, round, measured_p50_ms,
simulated_p50_ms, samples_dir: the run's results folder) and prints Markdown; NOTE is added to
the header line."""
import csv
import glob
import json
import os
import platform
import statistics
import sys


def samples(results, system):
    summary = json.load(open(glob.glob(os.path.join(results, "*/*/summary.json"))[0]))
    return sum(s["phases"]["iteration"]["count"]
               for s in summary["points"][0]["systems"] if s["name"] == system)


def error(simulated, measured):
    return 100 * (float(simulated) / float(measured) - 1)


def main(out, note=""):
    rows = list(csv.DictReader(open(os.path.join(out, "rounds.csv"))))
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), platform.machine())
    rounds = len({r["round"] for r in rows})
    print(f"Machine: {model}, {os.cpu_count()} cores. Rounds: {rounds}.{' ' + note if note else ''}\n")
    print("| world | system | measured p50 (ms) | n | simulated p50 (ms) | error | per-round errors |")
    print("|---:|---|---:|---:|---:|---:|---|")
    for world in dict.fromkeys(r["world"] for r in rows):
        for system in dict.fromkeys(r["system"] for r in rows):
            mine = [r for r in rows if r["world"] == world and r["system"] == system]
            if not mine:
                continue
            n = sum(samples(r["samples_dir"], system) for r in mine)
            measured = statistics.median(float(r["measured_p50_ms"]) for r in mine)
            simulated = statistics.median(float(r["simulated_p50_ms"]) for r in mine)
            errors = ", ".join(f"{error(r['simulated_p50_ms'], r['measured_p50_ms']):+.1f}%"
                               for r in mine)
            print(f"| {world} | {system} | {measured:.1f} | {n} | {simulated:.1f} | "
                  f"{error(simulated, measured):+.1f}% | {errors} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
