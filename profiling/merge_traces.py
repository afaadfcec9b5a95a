#!/usr/bin/env python3
"""Merges a run's per-rank traces (outputs/RUN/trace/rank<R>.json, src/core/run_trace.hpp) into
one Chrome/Perfetto trace with a process per rank:

    profiling/merge_traces.py outputs/RUN [OUT.json]     (default: outputs/RUN/trace.json)

Open the result in https://ui.perfetto.dev or chrome://tracing. A rank's file from a killed job
lacks its closing bracket; it is read all the same (the trace format allows it). Prints how many
events each rank gave.
"""
import glob
import json
import os
import re
import sys


def read_rank(path):
    text = open(path).read().rstrip()
    if not text.endswith("]"):  # killed mid-run: close the array after the last whole event
        text = text[: text.rfind("}") + 1] + "\n]"
    return json.loads(text)


def rank_traces(run):
    """{rank: path} of a run's per-rank trace files, in rank order."""
    paths = glob.glob(os.path.join(run, "trace", "rank*.json"))
    return dict(sorted((int(re.search(r"rank(\d+)\.json$", p).group(1)), p) for p in paths))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(run, "trace.json")
    paths = rank_traces(run)
    if not paths:
        sys.exit(f"{run}/trace: no rank*.json (was the run made by an embtrain with traces?)")
    events = []
    for rank, path in paths.items():
        rank_events = read_rank(path)
        events += rank_events
        print(f"rank {rank}: {len(rank_events)} events")
    with open(out, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    print(f"{out}: {len(events)} events from {len(paths)} ranks")


if __name__ == "__main__":
    main()
