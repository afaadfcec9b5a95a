#!/usr/bin/env python3
"""How much of a rank's compute a step moves with its samples and how much with the host: its
compute (fwd + bwd + optim, the run's timings) fitted by least squares to its query and context
tokens (the "batch" events of its trace, src/core/run_trace.hpp). The fitted part is the
samples' spread, which --plan models (data_spread); the residual is the host's jitter a step,
the ranks' own part of which they wait for. Session 34 found, by hand, tiny_gr00t
at 2 ranks 8.4-8.8 µs a context token, explaining 0.93-0.97 ms of the sd of the two ranks'
difference, 1.40-1.55 ms (a rank's lead over the mean is half that difference).
    regression/rank_tokens.py RUN_DIR   (/usr/bin/python3: numpy)
"""
import os
import sys

import numpy as np

from rank_spells import rank_compute, steps_past_warm_up

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "profiling"))
from merge_traces import rank_traces, read_rank  # noqa: E402

KINDS = ("query_tokens", "context_tokens")


def rank_tokens(run_dir):
    """{rank: {step: (query tokens, context tokens)}} from the traces' batch events."""
    return {rank: {e["args"]["step"]: tuple(e["args"][k] for k in KINDS)
                   for e in read_rank(path) if e.get("name") == "batch"}
            for rank, path in rank_traces(run_dir).items()}


def split_spread(run_dir):
    """A rank's compute a step (seconds) split: fitted over every rank and step to its query and
    context tokens (a common intercept and seconds per token of each kind), the sd of the fitted
    part (the samples' spread, --plan's data_spread), and the residual's, the host's jitter, in
    its part common to the ranks a step (which no rank waits for) and the ranks' own (what a rank
    waits for, as one rank's sd); None without 10 steps."""
    compute, tokens = rank_compute(run_dir), rank_tokens(run_dir)
    ranks = sorted(set(compute) & set(tokens))
    steps = steps_past_warm_up(ranks, compute, tokens)
    if len(steps) < 10:
        return None
    c = np.array([[compute[r][s] for r in ranks] for s in steps])  # [step, rank]
    t = np.array([[tokens[r][s] for r in ranks] for s in steps], dtype=float)  # [step, rank, kind]
    flat = t.reshape(-1, len(KINDS))
    varying = flat.std(axis=0) > 0  # a kind every sample has as many of explains nothing
    design = np.column_stack([np.ones(len(flat)), flat[:, varying]])
    fit = np.linalg.lstsq(design, c.ravel(), rcond=None)[0]
    per_token = np.zeros(len(KINDS))
    per_token[varying] = fit[1:]
    fitted = (flat @ per_token).reshape(c.shape)
    residual = c - fitted
    common = residual.mean(axis=1, keepdims=True)
    R = len(ranks)
    own = float((residual - common).std() * np.sqrt(R / (R - 1))) if R > 1 else 0.0
    # What the ranks wait for at the step's end: the slowest rank's lead over the mean, a step's
    # (--plan's imbalance holds the mean of the whole's: its samples' part and its timing's).
    wait = lambda x: float((x.max(axis=1) - x.mean(axis=1)).mean())
    return {"steps": len(steps), "ranks": R, "mean_compute_s": float(c.mean()),
            "wait_s": wait(c), "samples_wait_s": wait(fitted), "jitter_wait_s": wait(residual),
            "samples_s": float(fitted.std()), "jitter_common_s": float(common.std()),
            "jitter_own_s": own, "s_per_token": dict(zip(KINDS, map(float, per_token)))}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    split = split_spread(sys.argv[1])
    if split is None:
        sys.exit(f"{sys.argv[1]}: needs the timings and traces (with batch events) of 10 steps or more")
    ms = lambda s: f"{s * 1e3:.3f} ms"
    print(f"{split['ranks']} rank(s), {split['steps']} steps, compute {ms(split['mean_compute_s'])} a step")
    print(f"its samples' tokens: sd {ms(split['samples_s'])} "
          f"({', '.join(f'{k} {v * 1e6:.2f} µs a token' for k, v in split['s_per_token'].items())})")
    print(f"the rest, the host's jitter: sd {ms(split['jitter_common_s'])} common to the ranks, "
          f"{ms(split['jitter_own_s'])} a rank's own")
    if split["ranks"] > 1:
        print(f"the slowest rank's lead a step, the mean: {ms(split['wait_s'])} "
              f"(its samples' alone {ms(split['samples_wait_s'])}, the jitter's alone {ms(split['jitter_wait_s'])})")


if __name__ == "__main__":
    main()
