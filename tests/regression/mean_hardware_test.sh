#!/usr/bin/env bash
# regression/mean_hardware.py: every {"value", "source"} figure of two probes becomes their
# mean with a source that says so; other fields are kept from the first; the name is replaced.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/a.json" <<'JSON'
{"name": "a", "ranks_share_node": true,
 "gemm_flops": {"fp32": {"value": 10.0, "source": "probe"}},
 "intra_node": {"latency_s": {"value": 1e-6, "source": "probe"}}}
JSON
cat > "$tmp/b.json" <<'JSON'
{"name": "b", "ranks_share_node": true,
 "gemm_flops": {"fp32": {"value": 30.0, "source": "probe"}},
 "intra_node": {"latency_s": {"value": 3e-6, "source": "probe"}}}
JSON
/usr/bin/python3 regression/mean_hardware.py "around the run" "$tmp/a.json" "$tmp/b.json" > "$tmp/mean.json"
/usr/bin/python3 - "$tmp/mean.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["name"] == "around the run", m["name"]
assert m["ranks_share_node"] is True
assert m["gemm_flops"]["fp32"]["value"] == 20.0, m["gemm_flops"]
assert abs(m["intra_node"]["latency_s"]["value"] - 2e-6) < 1e-18, m["intra_node"]
assert m["gemm_flops"]["fp32"]["source"] == "mean of 2 probes bracketing the run, each probe", m["gemm_flops"]
print("mean_hardware: ok")
PY
if /usr/bin/python3 regression/mean_hardware.py only-a-name "$tmp/a.json" 2>/dev/null; then
  echo "mean_hardware: one file should be refused" >&2
  exit 1
fi
