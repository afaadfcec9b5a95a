#!/usr/bin/env python3
"""Turns run outputs into a regression measurement (what regression/compare reads):

    collect.py OUT.json MACHINE [--run NAME=outputs/RUN/summary.json]... [--scaling outputs/bench/scaling.json]
               [--loader outputs/bench/data_loader.json] [--tolerance T]

With --tolerance the output is a baseline: every metric carries that tolerance
(regression/baselines/<machine kind>.json).

Metrics, each {"value", "better": "lower"|"higher"}:
  NAME.<phase>_s            per-step median over ranks and steps of step, fwd, bwd, optim,
                            comm_exposed, data_wait (summary.json);
  scaling.<kind>.np<N>      strong/weak scaling efficiency (regression/run_scaling.sh);
  loader.<mode>.gbps        loader read bandwidth, median over its epochs (tests/data/run_data_bench.sh).
"""
import argparse
import json
import statistics

PHASES = ("step", "fwd", "bwd", "optim", "comm_exposed", "data_wait")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("machine")
    ap.add_argument("--run", action="append", default=[])
    ap.add_argument("--scaling")
    ap.add_argument("--loader")
    ap.add_argument("--tolerance", type=float)
    a = ap.parse_args()
    metrics = {}
    for spec in a.run:
        name, path = spec.split("=", 1)
        s = json.load(open(path))
        for p in PHASES:
            metrics[f"{name}.{p}_s"] = {"value": s["phases"][p]["per_step"]["median"], "better": "lower"}
        metrics[f"{name}.samples_per_s"] = {"value": s["samples_per_s"], "better": "higher"}
    if a.scaling:
        for r in json.load(open(a.scaling))["runs"]:
            if "efficiency" in r:
                metrics[f"scaling.{r['kind']}.np{r['ranks']}"] = {"value": r["efficiency"], "better": "higher"}
    if a.loader:
        runs = json.load(open(a.loader))["loader"]
        by_mode = {}
        for r in runs if isinstance(runs, list) else []:
            if "gbps" in r:
                by_mode.setdefault(r.get("mode", "default"), []).append(r["gbps"])
        for mode, v in by_mode.items():
            metrics[f"loader.{mode}.gbps"] = {"value": statistics.median(v), "better": "higher"}
    if a.tolerance is not None:
        for m in metrics.values():
            m["tolerance"] = a.tolerance
    json.dump({"machine": a.machine, "metrics": metrics}, open(a.out, "w"), indent=2)
    print(f"{a.out}: {len(metrics)} metrics for {a.machine}")


if __name__ == "__main__":
    main()
