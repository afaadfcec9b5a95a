#!/usr/bin/python3
"""Plots outputs/<run>/loss.csv into loss.png (matplotlib, Agg backend).

Usage: /usr/bin/python3 scripts/plot_loss.py outputs/<run>
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(run_dir: str) -> None:
    with open(f"{run_dir}/loss.csv") as f:
        rows = list(csv.DictReader(f))
    steps = [int(r["step"]) for r in rows]
    loss = [float(r["loss"]) for r in rows]
    lr = [float(r["lr"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, loss, lw=0.6, alpha=0.4, label="loss")
    window = max(1, len(loss) // 50)  # a running mean shows the trend under the step noise
    smooth = [sum(loss[max(0, i - window + 1):i + 1]) / (i + 1 - max(0, i - window + 1)) for i in range(len(loss))]
    ax.plot(steps, smooth, lw=1.6, color="tab:blue", label=f"mean of {window} steps")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(steps, lr, color="tab:orange", lw=0.8, alpha=0.7, label="lr")
    ax2.set_ylabel("learning rate")
    ax.set_title(run_dir.rstrip("/").split("/")[-1])
    fig.tight_layout()
    fig.savefig(f"{run_dir}/loss.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1])
