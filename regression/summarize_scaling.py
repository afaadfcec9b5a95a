#!/usr/bin/python3
"""Collects summary.json files of a scaling sweep into one JSON and a plot.

Usage: summarize_scaling.py OUT_PREFIX KIND:RANKS:SUMMARY_JSON...
Writes OUT_PREFIX.json (per run: samples/s, efficiency, per-phase medians per step) and
OUT_PREFIX.png. Efficiency: strong = t1 / (N * tN) in step time; weak = t1 / tN.
"""
import json
import os
import sys

PHASES = ["data_wait", "fwd", "bwd", "comm_exposed", "optim", "step"]


def main(prefix, specs):
    runs = []
    for spec in specs:
        kind, ranks, path = spec.split(":", 2)
        s = json.load(open(path))
        runs.append({
            "kind": kind,
            "ranks": int(ranks),
            "samples_per_s": s["samples_per_s"],
            "tokens_per_s": s["tokens_per_s"],
            "step_median_s": s["phases"]["step"]["per_step"]["median"],
            "phase_median_s": {p: s["phases"][p]["per_step"]["median"] for p in PHASES},
            "comm_exposed_fraction": s["comm_exposed_fraction"],
            "summary": path,
        })
    for kind in ("strong", "weak"):
        base = next((r for r in runs if r["kind"] == kind and r["ranks"] == 1), None)
        for r in runs:
            if r["kind"] != kind or base is None:
                continue
            t1, tn = base["step_median_s"], r["step_median_s"]
            r["efficiency"] = t1 / (r["ranks"] * tn) if kind == "strong" else t1 / tn
    result = {"cores": os.cpu_count(), "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "auto"),
              "threads_per_rank": 1, "runs": runs}
    json.dump(result, open(prefix + ".json", "w"), indent=2)
    for r in runs:
        print(f'{r["kind"]:6s} {r["ranks"]} ranks: {r["samples_per_s"]:9.1f} samples/s, step '
              f'{r["step_median_s"] * 1e3:7.2f} ms, efficiency {r.get("efficiency", 0):.2f}')
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, kind in zip(axes, ("strong", "weak")):
        sel = sorted((r for r in runs if r["kind"] == kind), key=lambda r: r["ranks"])
        # The step's parts next to the step they sum to.
        for p in PHASES:
            ax.plot([str(r["ranks"]) for r in sel], [r["phase_median_s"][p] * 1e3 for r in sel],
                    "k.-" if p == "step" else ".-", label=p, lw=2 if p == "step" else 1)
        ax.set_title(f"{kind} scaling ({os.cpu_count()} cores)")
        ax.set_xlabel("ranks")
        ax.set_ylabel("median ms per step")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix + ".png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
