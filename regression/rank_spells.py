#!/usr/bin/env python3
"""How far a run's ranks ran apart for spells of steps: the part of each rank's lead over the
step's mean compute (fwd + bwd + optim, the run's timings.csv) that persists over windows of
WINDOW steps beyond what independent steps give, as a share of the mean compute.

A rank's compute a step moves with its samples and with the host's noise, independently step to
step: over a window of W steps its mean lead varies by var/W. A core of the VM that runs slower
than the other for spells of tens of steps (session 33: one rank at 10 ms a step and the other
8.3-10.7 ms in blocks of 20-50 steps) adds a variance that windows do not average away: the
excess of the windows' variance over var/W. Quiet 2-rank runs here measured 0.3-0.4 %, runs in
spells 2.2-5.6 % (regression/plan_validation.md session 33).
    regression/rank_spells.py RUN_DIR [WINDOW]   (prints the share; 0 for one rank or < 3 windows)
"""
import statistics
import sys

from plan_validation_table import per_step_phases

COMPUTE = ("fwd", "bwd", "optim")


def rank_compute(run_dir):
    """{rank: {step: seconds}} of fwd + bwd + optim."""
    return {rank: {step: sum(phases.get(p, 0.0) for p in COMPUTE) for step, phases in steps.items()}
            for rank, steps in per_step_phases(run_dir).items()}


def steps_past_warm_up(ranks, *by_rank):
    """The steps each of `ranks` has in every {rank: {step: ...}} of by_rank, sorted, past the
    first tenth (the first steps' warm-up)."""
    if not ranks:
        return []
    steps = sorted(set.intersection(*(set(per_rank[r]) for per_rank in by_rank for r in ranks)))
    return steps[len(steps) // 10:]


def persistent_spread(run_dir, window=20):
    compute = rank_compute(run_dir)
    ranks = sorted(compute)
    steps = steps_past_warm_up(ranks, compute)
    windows = len(steps) // window
    if len(ranks) < 2 or windows < 3:
        return 0.0
    means = [statistics.mean(compute[r][s] for r in ranks) for s in steps]
    excess = []
    for r in ranks:
        lead = [compute[r][s] - m for s, m in zip(steps, means)][: windows * window]
        window_means = [statistics.mean(lead[w * window:(w + 1) * window]) for w in range(windows)]
        excess.append(statistics.pvariance(window_means) - statistics.pvariance(lead) / window)
    return max(0.0, statistics.mean(excess)) ** 0.5 / statistics.mean(means)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    print(round(persistent_spread(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 20), 4))


if __name__ == "__main__":
    main()
