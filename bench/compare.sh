#!/usr/bin/env bash
# Runs MPICH's and Open MPI's figures (shared/peers/run.sh) and rpar's (examples/osu) in one go
# on this machine, and prints one table: figure, MPICH, Open MPI, rpar, and rpar against the
# better peer (>1 means rpar is better: for times that is peer/rpar, for rates rpar/peer).
# Usage: bench/compare.sh [out-dir]   (default: target/bench); takes a few minutes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/target/bench}
mkdir -p "$out"
peers=$top/../shared/peers/run.sh
[[ -x $peers ]] || peers=$top/shared/peers/run.sh
echo "peers: $peers" >&2
bash "$peers" > "$out/peers.jsonl"
(cd "$top" && cargo run -q --release --example osu -- --json) > "$out/rpar.jsonl"
python3 "$top/bench/table.py" "$out/peers.jsonl" "$out/rpar.jsonl" | tee "$out/table.md"
