#!/usr/bin/env bash
# Small calls on 2 processes, robust to this machine's changes of speed (an 8-byte ping-pong,
# bcast and allreduce, each the 10th percentile of chunks of 1000 calls:
# bench/small_calls/peer_small_calls.c and examples/small_calls.rs) on one MPI: the C program
# beside rpar's, and beside an older build of rpar's if given, in paired rounds. Prints each
# figure's median and the median of the rounds' ratios; raw lines in OUT.
# Usage: ROUNDS=5 bash bench/mpi_small_calls.sh mpich|openmpi RPAR_SMALL_CALLS [OLDER] [OUT]
#   RPAR_SMALL_CALLS built with
#   `MPICC=mpicc.<mpi> CARGO_TARGET_DIR=target/<mpi> cargo build --release --features mpi --example small_calls`
# rpar's own algorithms beside MPICH's same ones (the bcast and allreduce figures):
#   ARGS="--bcast binomial --allreduce recursive-doubling" PEER_ENV="MPIR_CVAR_DEVICE_COLLECTIVES=none
#   MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling"
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mpi=${1:?mpich or openmpi}
after=${2:?the small_calls example, built for that MPI}
before=${3:-}
out=${4:-$top/target/mpi-small-calls-$mpi.jsonl}
source "$top/bench/mpi_launch.sh"
paired_rounds "$top/bench/small_calls/peer_small_calls.c" "$after" "$before" "$out" "${ROUNDS:-5}"
python3 "$top/bench/paired_table.py" "$out" "$mpi" figure "8-byte figure"
