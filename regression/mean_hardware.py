#!/usr/bin/env python3
"""The mean of hardware files (inputs/hw/*.json) taken by the same probe at different times:
every {"value", "source"} figure becomes the mean of its values, its source saying so.
regression/plan_validation.sh brackets each run with two probes (before and after) and
predicts it with their mean, so a load that moves during the run moves both ends.
    regression/mean_hardware.py NAME A.json B.json [...] > OUT.json
"""
import json
import sys


def mean(nodes, n):
    first = nodes[0]
    if isinstance(first, dict) and "value" in first and "source" in first:
        return {"value": sum(x["value"] for x in nodes) / n,
                "source": f"mean of {n} probes bracketing the run, each {first['source']}"}
    if isinstance(first, dict):
        return {k: mean([x[k] for x in nodes], n) for k in first}
    return first


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: mean_hardware.py NAME A.json B.json [...]")
    files = [json.load(open(p)) for p in sys.argv[2:]]
    out = mean(files, len(files))
    out["name"] = sys.argv[1]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
