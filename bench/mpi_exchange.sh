#!/usr/bin/env bash
# A halo exchange on 2 processes (pre-posted receives, sends, wait: bench/exchange/peer_exchange.c
# and examples/exchange.rs) on one MPI: the C program beside rpar's, and beside an older build of
# rpar's if given, in paired rounds (each round runs all of them within seconds of each other;
# this machine changes speed from one minute to the next). Prints each figure's median and the
# median of the rounds' ratios; raw lines in OUT.
# Usage: ROUNDS=5 bash bench/mpi_exchange.sh mpich|openmpi RPAR_EXCHANGE [OLDER_EXCHANGE] [OUT]
#   RPAR_EXCHANGE built with
#   `MPICC=mpicc.<mpi> CARGO_TARGET_DIR=target/<mpi> cargo build --release --features mpi --example exchange`
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mpi=${1:?mpich or openmpi}
after=${2:?the exchange example, built for that MPI}
before=${3:-}
out=${4:-$top/target/mpi-exchange-$mpi.jsonl}
source "$top/bench/mpi_launch.sh"
paired_rounds "$top/bench/exchange/peer_exchange.c" "$after" "$before" "$out" "${ROUNDS:-5}"
python3 "$top/bench/paired_table.py" "$out" "$mpi" bytes "face bytes"
