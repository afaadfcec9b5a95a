#!/usr/bin/python3
"""The closed-loop report: a success table (the trained policy's last checkpoint beside the
expert, zero-action and random baselines, with 95% Wilson intervals) printed as Markdown, and
ROOT/eval/success_vs_step.png (scripts/plot_success.py).

Usage: /usr/bin/python3 scripts/closed_loop_report.py ROOT   (ROOT as scripts/closed_loop.sh made it)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_success import plot  # noqa: E402


def cell(t: dict) -> str:
    lo, hi = t["ci95"]
    return f"{100 * t['success_rate']:.0f}% ({t['successes']}/{t['episodes']}, CI {100 * lo:.0f}-{100 * hi:.0f}%)"


def main(root: str) -> None:
    policy = json.load(open(f"{root}/eval/eval.json"))
    baselines = {b: json.load(open(f"{root}/eval_{b}/eval.json")) for b in ("expert", "zero", "random")}
    last = policy["checkpoints"][-1]
    print(f"| task | policy (step {last['step']}) | expert | zero action | random |")
    print("|---|---|---|---|---|")
    for task, t in last["tasks"].items():
        print(f"| {task} | {cell(t)} | " + " | ".join(cell(b["tasks"][task]) for b in baselines.values()) + " |")
    print(f"\nflow steps K = {policy.get('flow_steps')}, executed steps n = {policy.get('exec_steps')}, "
          f"eval seed {policy['seed']} (eval split; demonstrations came from the collect split)")
    plot(f"{root}/eval")


if __name__ == "__main__":
    main(sys.argv[1])
