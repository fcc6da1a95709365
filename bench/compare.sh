#!/usr/bin/env bash
# Runs MPICH's and Open MPI's figures (shared/peers/run.sh) and rpar's (examples/osu and
# examples/pack_bench) in one go
# on this machine, and prints one table: figure, MPICH, Open MPI, rpar, and rpar against the
# better peer (>1 means rpar is better: for times that is peer/rpar, for rates rpar/peer).
# The peers' figures move by 30-50% from one run to the next on a small machine, so it runs
# all of them ROUNDS times (default 3), peers and rpar in turn, and the table gives each
# figure's median over the rounds (table.md), then each at its best round (table-best.md); the
# raw lines stay in the output folder.
# With MPICH's mpiexec and libclang present it also builds osu with the `mpi` feature and runs
# it under mpiexec.mpich -n 2, 4 and 8 in every round: the "rpar on MPI" column; likewise with
# Open MPI's mpicc and mpiexec (target/openmpi), the "rpar on Open MPI" column (RPAR_NO_MPI=1
# skips both).
# With BEFORE=<another checkout of rpar> (e.g. a `git worktree` of an older commit, built with
# `cargo build --release --example osu --example pack_bench`) every round also runs that
# checkout's osu and pack_bench, and the table gets its column and after/before ratios: a
# before-and-after comparison in one run, beside the same peer figures.
# Usage: [ROUNDS=n] [BEFORE=dir] bench/compare.sh [out-dir]   (default: target/bench); takes a
# few minutes a round.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/target/bench}
mkdir -p "$out"
peers=$top/../shared/peers/run.sh
[[ -x $peers ]] || peers=$top/shared/peers/run.sh
echo "peers: $peers" >&2
(cd "$top" && cargo build -q --release --example osu --example pack_bench)
: > "$out/peers.jsonl"
: > "$out/rpar.jsonl"
: > "$out/rpar-before.jsonl"
# rpar's figures, and with BEFORE those of the older checkout (its lines renamed rpar-before)
run_rpar() {
  "$top/target/release/examples/osu" --json >> "$out/rpar.jsonl"
  # pack throughput of the peers' two vector types (and a memcpy of the same bytes, same round)
  "$top/target/release/examples/pack_bench" | grep '^{' >> "$out/rpar.jsonl"
}
run_before() {
  { "$BEFORE/target/release/examples/osu" --json
    "$BEFORE/target/release/examples/pack_bench" | grep '^{'
  } | sed 's/"peer":"rpar"/"peer":"rpar-before"/' >> "$out/rpar-before.jsonl"
}
# rpar on each MPI beside it (the "rpar on MPI" and "rpar on Open MPI" columns), built once
mpis=()
if [[ -z ${RPAR_NO_MPI:-} ]] && command -v mpiexec.mpich >/dev/null; then
  (cd "$top" && MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpi \
    cargo build -q --release --features mpi --example osu)
  mpis+=(mpi)
fi
if [[ -z ${RPAR_NO_MPI:-} ]] && command -v mpiexec.openmpi >/dev/null; then
  # Open MPI's mpiexec refuses to run as root unless told (as on CI machines and here)
  [[ $(id -u) != 0 ]] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  (cd "$top" && MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi \
    cargo build -q --release --features mpi --example osu)
  mpis+=(openmpi)
fi
for mpi in "${mpis[@]}"; do : > "$out/rpar-$mpi.jsonl"; done
# one round of osu under each MPI's launcher on 2, 4 and 8 processes; on 4 and 8 as many calls
# as that MPI's peer runs there (its scale in run.sh)
run_mpis() {
  local mpi n
  for mpi in "${mpis[@]}"; do
    for n in 2 4 8; do
      case $mpi in
        mpi) mpiexec.mpich -n $n "$top/target/mpi/release/examples/osu" --json \
               --oversubscribed-scale 0.01 ;;
        openmpi) mpiexec.openmpi --oversubscribe -n $n \
                   "$top/target/openmpi/release/examples/osu" --json |
                   sed 's/"peer":"rpar-mpi"/"peer":"rpar-openmpi"/' ;;
      esac
    done >> "$out/rpar-$mpi.jsonl"
  done
}
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
  echo "round $round" >&2
  bash "$peers" >> "$out/peers.jsonl"
  if [[ -z ${BEFORE:-} ]]; then
    run_rpar
  elif ((round % 2)); then # each goes first in every other round: the first after the peers
    run_rpar                # ran slower (8-byte collectives 0.38 against 0.10 us) in one run
    run_before
  else
    run_before
    run_rpar
  fi
  run_mpis
done
files=("$out/peers.jsonl" "$out/rpar.jsonl")
[[ -z ${BEFORE:-} ]] || files+=("$out/rpar-before.jsonl")
for mpi in "${mpis[@]}"; do files+=("$out/rpar-$mpi.jsonl"); done
python3 "$top/bench/table.py" "${files[@]}" | tee "$out/table.md"
# the same figures, each at its best round (this machine's figures are bimodal from one run to
# the next, for the peers and rpar alike: the best of the rounds compares the faster modes)
echo >&2
echo "best of the ${ROUNDS:-3} rounds (least time, highest rate):" >&2
TABLE_STAT=best python3 "$top/bench/table.py" "${files[@]}" | tee "$out/table-best.md"
