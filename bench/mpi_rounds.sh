#!/usr/bin/env bash
# rpar's point-to-point figures on the MPI transport before and after a change, beside the MPI's
# own C benchmark, in paired rounds: each round runs the C benchmark
# (shared/peers/peer_bench.c), the BEFORE build's osu and the AFTER build's osu (`--json`,
# `--features mpi`, built for that MPI) within seconds of each other, on 2 processes. This
# machine changes speed from one minute to the next, so the table gives each figure's median
# and the median of the rounds' ratios (two programs of one round ran in the same speed far more
# often than two rounds did). Raw lines in OUT.
# Usage: ROUNDS=6 bash bench/mpi_rounds.sh mpich|openmpi BEFORE_OSU AFTER_OSU [OUT.jsonl]
#   e.g. a worktree of the older commit built with
#   `MPICC=mpicc.openmpi CARGO_TARGET_DIR=<dir> cargo build --release --features mpi --example osu`
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mpi=${1:?mpich or openmpi}
before=${2:?the older build of osu}
after=${3:?the newer build of osu}
out=${4:-$top/target/mpi-rounds-$mpi.jsonl}
rounds=${ROUNDS:-6}
source "$top/bench/mpi_launch.sh"
mkdir -p "$(dirname "$out")"
peer=$(mktemp -d)/peer
"mpicc.$mpi" -O2 -w "$top/../shared/peers/peer_bench.c" -o "$peer"
: > "$out"
for round in $(seq "$rounds"); do
  label="\"round\":$round,"
  "${launch[@]}" "$peer" 1.0 "$mpi" 2>/dev/null | grep '^{' | sed "s/^{/{$label/" >> "$out"
  "${launch[@]}" "$before" --json 2>/dev/null |
    sed "s/^{/{$label/; s/\"peer\":\"rpar-mpi\"/\"peer\":\"rpar-before\"/" >> "$out"
  "${launch[@]}" "$after" --json 2>/dev/null | sed "s/^{/{$label/" >> "$out"
done
python3 - "$out" "$mpi" <<'PY'
import json, statistics, sys
from collections import defaultdict
out, mpi = sys.argv[1], sys.argv[2]
runs = defaultdict(dict)
for line in open(out):
    r = json.loads(line)
    if r["figure"] in ("latency_us", "bandwidth_GBps") and r.get("procs", 2) == 2:
        runs[(r["figure"], r["bytes"], r["round"])][r["peer"]] = r["value"]
figures = sorted({(f, b) for f, b, _ in runs})
def cost(figure, ours, theirs):
    # rpar's cost against the other: > 1 is slower, for times and rates alike
    return ours / theirs if figure == "latency_us" else theirs / ours
print(f"| figure | bytes | {mpi} C | rpar before | rpar after | before's cost | after's cost | after / before |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for figure, size in figures:
    rounds = [v for (f, b, _), v in runs.items() if (f, b) == (figure, size)]
    rounds = [v for v in rounds if {mpi, "rpar-before", "rpar-mpi"} <= v.keys()]
    med = lambda xs: statistics.median(xs)
    c, b, a = (med([v[k] for v in rounds]) for k in (mpi, "rpar-before", "rpar-mpi"))
    bc = med([cost(figure, v["rpar-before"], v[mpi]) for v in rounds])
    ac = med([cost(figure, v["rpar-mpi"], v[mpi]) for v in rounds])
    ab = med([v["rpar-mpi"] / v["rpar-before"] for v in rounds])
    print(f"| {figure} | {size} | {c:.3f} | {b:.3f} | {a:.3f} | {bc:.2f}x | {ac:.2f}x | {ab:.2f} |")
PY
