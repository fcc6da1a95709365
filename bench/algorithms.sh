#!/usr/bin/env bash
# rpar's own collective algorithms on the MPI transport beside MPICH running the same algorithm
# (issue 21: "explicit rpar algorithms over MPI within 1.2x of the same algorithm in MPICH"):
# for each pair, MPICH's C benchmark (shared/peers/peer_bench.c) with the algorithm fixed by
# MPIR_CVAR_<OP>_INTRA_ALGORITHM (and MPIR_CVAR_DEVICE_COLLECTIVES=none, so that ch4 does not
# choose its own), then `osu --<op> <algorithm>` built with `--features mpi`, in turn, ROUNDS
# times (default 3), on 2 processes; prints a table (medians, and each round's ratio: the two
# ran seconds apart), the raw lines in OUT.
# Usage: bash bench/algorithms.sh [OUT.jsonl]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/bench/results/algorithms/mpich-2.jsonl}
rounds=${ROUNDS:-3}
mkdir -p "$(dirname "$out")"
peer=$(mktemp -d)/peer_mpich
mpicc.mpich -O2 -w "$top/../shared/peers/peer_bench.c" -o "$peer"
# a target folder of MPICH's own: the mpi crate's build does not follow a change of MPICC, so a
# shared folder may hold a build linked to Open MPI
(cd "$top" && MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi --example osu -q)
osu=$top/target/mpi/release/examples/osu
# figure, MPICH's name for the algorithm, rpar's option and name for it
pairs=(
  "allreduce_us recursive_doubling --allreduce recursive-doubling"
  "allreduce_us reduce_scatter_allgather --allreduce rabenseifner"
  "bcast_us binomial --bcast binomial"
  "bcast_us scatter_ring_allgather --bcast scatter-allgather"
  "allgather_us ring --allgather ring"
  "allgather_us recursive_doubling --allgather recursive-doubling"
  "allgather_us brucks --allgather bruck"
  "alltoall_us pairwise --alltoall pairwise"
  "alltoall_us brucks --alltoall bruck"
)
: > "$out"
for round in $(seq "$rounds"); do
  for pair in "${pairs[@]}"; do
    read -r figure theirs option ours <<< "$pair"
    cvar=MPIR_CVAR_$(echo "${figure%_us}" | tr a-z A-Z)_INTRA_ALGORITHM
    label="\"algorithm\":\"$ours\",\"round\":$round,"
    env MPIR_CVAR_DEVICE_COLLECTIVES=none "$cvar=$theirs" mpiexec.mpich -n 2 "$peer" 1.0 mpich 2>/dev/null |
      grep "\"figure\":\"$figure\"" | sed "s/^{/{$label/" >> "$out"
    mpiexec.mpich -n 2 "$osu" --json "$option" "$ours" 2>/dev/null |
      grep "\"figure\":\"$figure\"" | sed "s/^{/{$label/" >> "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict
runs = defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["figure"], r["algorithm"], r["bytes"], r["round"])][r["peer"]] = r["value"]
# each round's ratio (MPICH and rpar ran within seconds of each other), then the median: this
# machine's speed changes from minute to minute, which a ratio of medians would mix in
table = defaultdict(lambda: ([], [], []))
for (figure, algorithm, size, _), peers in runs.items():
    if "mpich" in peers and "rpar-mpi" in peers:
        theirs, ours, ratios = table[(figure, algorithm, size)]
        theirs.append(peers["mpich"])
        ours.append(peers["rpar-mpi"])
        ratios.append(peers["rpar-mpi"] / peers["mpich"])
print("| figure | algorithm | bytes | MPICH (us) | rpar on MPICH (us) | rpar's time / MPICH's, per round | median |")
print("|---|---|---:|---:|---:|---|---:|")
med = statistics.median
for key in sorted(table):
    theirs, ours, ratios = table[key]
    each = " ".join(f"{x:.2f}" for x in ratios)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {med(theirs):.3f} | {med(ours):.3f} | {each} | {med(ratios):.2f} |")
PY
