#!/usr/bin/env bash
# The overlap of a non-blocking allreduce with computation (OSU's osu_iallreduce method) for
# MPICH and Open MPI (bench/overlap/peer_overlap.c) and rpar in-process (examples/overlap.rs),
# in one run, on 2 and 4 ranks, as JSON lines and a table (ROUNDS rounds, default 3; medians).
# Usage: [ROUNDS=n] bench/overlap.sh [out-dir]   (default: target/bench)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/target/bench}
mkdir -p "$out"
if ! command -v mpicc.mpich >/dev/null || ! command -v mpicc.openmpi >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    mpich libmpich-dev openmpi-bin libopenmpi-dev >/dev/null
fi
mpicc.mpich -O2 -w "$top/bench/overlap/peer_overlap.c" -o "$out/overlap_mpich"
mpicc.openmpi -O2 -w "$top/bench/overlap/peer_overlap.c" -o "$out/overlap_openmpi"
(cd "$top" && cargo build -q --release --example overlap)
: > "$out/overlap.jsonl"
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
  echo "round $round" >&2
  for n in 2 4; do
    # 4 ranks oversubscribe 2 cores: MPICH busy-polls there, so it gets a tenth of the iterations
    scale=1.0; [[ $n -gt 2 ]] && scale=0.1
    mpiexec.mpich -n $n "$out/overlap_mpich" $scale mpich 2>/dev/null | grep '^{' >> "$out/overlap.jsonl"
    mpirun.openmpi --allow-run-as-root --oversubscribe -n $n "$out/overlap_openmpi" $scale openmpi \
      2>/dev/null | grep '^{' >> "$out/overlap.jsonl"
    "$top/target/release/examples/overlap" --ranks $n --json >> "$out/overlap.jsonl"
  done
done
python3 - "$out/overlap.jsonl" <<'PY'
import json, statistics, sys
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    j = json.loads(line)
    v[(j["figure"], j["ranks"], j["bytes"], j["peer"])].append(j["value"])
keys = sorted({(f, r, b) for f, r, b, _ in v})
print("| figure | ranks | bytes | MPICH | Open MPI | rpar |")
print("|---|---:|---:|---:|---:|---:|")
for f, r, b in keys:
    cell = lambda p: f"{statistics.median(v[(f, r, b, p)]):.1f}" if (f, r, b, p) in v else "-"
    print(f"| {f} | {r} | {b} | {cell('mpich')} | {cell('openmpi')} | {cell('rpar')} |")
PY
