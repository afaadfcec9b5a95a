#!/usr/bin/python3
"""The report of scripts/rl_bench.sh (make rl-bench): the throughput table of sync,
async_rollout and async on the same ranks (modelled with the stage-cost model and raw), the
learning results (success on the eval split of every checkpoint against the SFT start) and
plots: ROOT/rl_success_vs_env_steps.png, ROOT/rl_staleness.png.

Usage: /usr/bin/python3 scripts/rl_report.py ROOT
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = ["sync", "async_rollout", "async"]


def load(path):
    return json.load(open(path)) if os.path.exists(path) else None


def throughput_table(root):
    lines = ["## Throughput (same ranks; environment steps per second)", "",
             "| mode | cost model | env steps/s | vs sync | busy: simulators / generators / trainers "
             "| generator batch | stale dropped | overran stages |",
             "|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for cost in ["on", "off"]:
        runs = {m: load(f"{root}/throughput/{m}_cost_{cost}/summary.json") for m in MODES}
        if not runs["sync"]:
            continue
        key = "modelled_env_steps_per_s" if cost == "on" else "env_steps_per_s"
        base = runs["sync"][key]
        for m in MODES:
            s = runs[m]
            if not s:
                continue
            u = s["utilisation"]
            busy = " / ".join(f"{u[r]['busy_fraction']:.2f}" for r in ["simulator", "generator", "trainer"])
            ratio = s[key] / base if base else 0.0
            ratios[(m, cost)] = ratio
            label = f"on (x{s['cost_time_scale']:g} slower)" if cost == "on" else "off (raw CPU)"
            lines.append(f"| {m} | {label} | {s[key]:.1f} | {ratio:.2f}x | {busy} | "
                         f"{s['generator_mean_batch']:.1f} | {s['dropped_stale']} | "
                         f"{s['paced_overruns']}/{s['paced_stages']} |")
    lines.append("")
    if ("async", "on") in ratios:
        lines.append(f"Modelled: async is {ratios[('async', 'on')]:.2f}x sync (target >= 2.27x, RL-VLA3's +126.67%), "
                     f"async_rollout {ratios.get(('async_rollout', 'on'), 0):.2f}x.")
    return lines


def env_steps_of(summary, version):
    for point in summary["curve"]:
        if point["version"] == version:
            return point["env_steps"]
    return None


def learning(root):
    sft = load(f"{root}/learn/sft_eval/eval.json")
    lines = ["## Learning (push, eval split, embsim eval)", ""]
    if not sft:
        return lines, None
    base = sft["tasks"]["push"]
    lines.append(f"SFT start: {base['successes']}/{base['episodes']} = {base['success_rate']:.2f} "
                 f"(95% CI {base['ci95'][0]:.2f} .. {base['ci95'][1]:.2f})")
    lines.append("")
    lines.append("| mode | update | env steps | success | 95% CI | minutes |")
    lines.append("|---|---|---|---|---|---|")
    curves = {}
    for m in ["sync", "async"]:
        summary, ev = load(f"{root}/learn/{m}/summary.json"), load(f"{root}/learn/{m}_eval/eval.json")
        if not summary or not ev:
            continue
        xs, ys, lo, hi = [0], [base["success_rate"]], [base["ci95"][0]], [base["ci95"][1]]
        for c in ev["checkpoints"]:
            t = c["tasks"]["push"]
            steps = env_steps_of(summary, c["step"])
            point = next((p for p in summary["curve"] if p["version"] == c["step"]), {"seconds": 0})
            lines.append(f"| {m} | {c['step']} | {steps} | {t['success_rate']:.2f} | "
                         f"{t['ci95'][0]:.2f} .. {t['ci95'][1]:.2f} | {point['seconds'] / 60:.1f} |")
            xs.append(steps), ys.append(t["success_rate"]), lo.append(t["ci95"][0]), hi.append(t["ci95"][1])
        curves[m] = (xs, ys, lo, hi, summary)
        lines.append(f"| {m} | | | gain {100 * (ys[-1] - ys[0]):+.0f} points | | wall {summary['wall_s'] / 60:.1f} |")
    return lines, curves


def plot(root, curves):
    fig, ax = plt.subplots(figsize=(6, 4))
    for m, (xs, ys, lo, hi, _) in curves.items():
        line, = ax.plot(xs, ys, marker="o", label=m)
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("push success (eval split)")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{root}/rl_success_vs_env_steps.png", dpi=120)
    if "async" in curves:
        hist = curves["async"][4]["staleness_histogram"]
        ages = sorted(int(k) for k in hist)
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.bar(ages, [hist[str(a)] for a in ages])
        ax.set_xlabel("versions behind at training")
        ax.set_ylabel("transitions")
        ax.set_title("async staleness")
        fig.tight_layout()
        fig.savefig(f"{root}/rl_staleness.png", dpi=120)


def main(root):
    lines = ["# make rl-bench", ""] + throughput_table(root) + [""]
    more, curves = learning(root)
    lines += more
    if curves:
        plot(root, curves)
        lines += ["", "Plots: rl_success_vs_env_steps.png, rl_staleness.png"]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
