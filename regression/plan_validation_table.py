#!/usr/bin/env python3
"""The table of regression/plan_validation.sh: per deck and rank count, the measured step and
phases (summary.json, medians over steps) against --plan's prediction (its JSON), the median
over rounds, written to outputs/bench/plan_validation.json and printed as markdown.
    plan_validation_table.py DECK:RANKS:ROUND:SUMMARY:PLAN:LOAD_BEFORE:LOAD_AFTER [...]
Phases: the step's parts as the trainer times them (src/core/timer.hpp kStepParts: they do not
overlap and sum to the step) against --plan's "phases" (the same parts, summing to its step):
fwd and bwd (the compute, the op calls' host time, and on a shared core the collectives run
under the compute), optim, exposed comm (the waits for collectives), and other (the blocking
host reductions, the loop's own work; measured: the rest of the step, data_wait, h2d included).
"""
import json
import statistics
import sys

PHASES = {"fwd": "fwd", "bwd": "bwd", "optim": "optim", "comm": "comm_exposed", "other": "other"}


def run_of(row):
    deck, np, rnd, summary, plan, load_before, load_after = row.split(":")
    s, p = json.load(open(summary)), json.load(open(plan))
    predicted_phases = p["deck"]["phases"]
    measured = {k: s["phases"][v]["per_step"]["median"] for k, v in PHASES.items()}
    predicted = {k: predicted_phases[v] for k, v in PHASES.items()}
    step = s["phases"]["step"]["per_step"]["median"]
    # Medians over steps of each part need not sum to the median step: `other` takes the rest
    # of the step beyond the other medians (data_wait and h2d, a few microseconds here, in it).
    measured["other"] = max(0.0, step - sum(v for k, v in measured.items() if k != "other"))
    predicted["other"] += predicted_phases["data_wait"]
    step_predicted = p["deck"]["seconds"]["step"]
    return {"deck": deck, "ranks": int(np), "round": int(rnd),
            "load_average_before_after": [float(load_before), float(load_after)],
            "measured_step_s": step, "predicted_step_s": step_predicted, "error": step_predicted / step - 1,
            "measured": measured, "predicted": predicted}


def median_row(runs):
    phases = runs[0]["measured"].keys()
    return {"deck": runs[0]["deck"], "ranks": runs[0]["ranks"], "rounds": len(runs),
            "load_average": [min(r["load_average_before_after"][0] for r in runs),
                             max(r["load_average_before_after"][1] for r in runs)],
            "measured_step_s": statistics.median(r["measured_step_s"] for r in runs),
            "predicted_step_s": statistics.median(r["predicted_step_s"] for r in runs),
            "median_error": statistics.median(r["error"] for r in runs),
            "measured": {k: statistics.median(r["measured"][k] for r in runs) for k in phases},
            "predicted": {k: statistics.median(r["predicted"][k] for r in runs) for k in phases}}


def ms(x):
    return f"{1e3 * x:.1f}"


def main():
    runs = [run_of(row) for row in sys.argv[1:]]
    keys = sorted({(r["deck"], r["ranks"]) for r in runs}, key=lambda k: (k[0], k[1]))
    table = [median_row([r for r in runs if (r["deck"], r["ranks"]) == k]) for k in keys]
    json.dump({"rows": table, "runs": runs}, open("outputs/bench/plan_validation.json", "w"), indent=2)
    print("| deck | ranks | load avg | measured step | predicted | error (median) | "
          "fwd | bwd | optim | exposed comm | other |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for t in table:
        phases = " | ".join(f"{ms(t['measured'][k])} / {ms(t['predicted'][k])}"
                            for k in ("fwd", "bwd", "optim", "comm", "other"))
        load = "%.1f-%.1f" % tuple(t["load_average"])
        print(f"| {t['deck']} | {t['ranks']} | {load} | {ms(t['measured_step_s'])} ms | "
              f"{ms(t['predicted_step_s'])} ms | {100 * t['median_error']:+.1f} % | {phases} |")
    print("\nphases: measured / predicted, ms, medians over rounds")


if __name__ == "__main__":
    main()
