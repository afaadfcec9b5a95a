#!/usr/bin/python3
"""Success rate against training step from an `embsim eval` of a run directory: reads
EVAL_DIR/eval.json, writes EVAL_DIR/success_vs_step.png (one line per task, 95% Wilson band).

Usage: /usr/bin/python3 scripts/plot_success.py EVAL_DIR
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(eval_dir: str) -> str:
    report = json.load(open(f"{eval_dir}/eval.json"))
    checkpoints = report["checkpoints"]
    steps = [c["step"] for c in checkpoints]
    fig, ax = plt.subplots(figsize=(6, 4))
    for task in checkpoints[-1]["tasks"]:
        rates = [c["tasks"][task]["success_rate"] for c in checkpoints]
        lo = [c["tasks"][task]["ci95"][0] for c in checkpoints]
        hi = [c["tasks"][task]["ci95"][1] for c in checkpoints]
        line, = ax.plot(steps, rates, marker="o", label=task)
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("training step")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = f"{eval_dir}/success_vs_step.png"
    fig.savefig(path, dpi=120)
    return path


if __name__ == "__main__":
    print(plot(sys.argv[1]))
