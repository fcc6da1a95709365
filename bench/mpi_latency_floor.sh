#!/usr/bin/env bash
# rpar's point-to-point latency on the MPI transport beside the floor of MPI itself, in paired
# rounds on 2 processes: each round, for MPICH and then Open MPI, MPI's C ping-pong with
# MPI_Recv from the known source (bench/mpi_receive_paths.c mode 0, at 8 B and 64 KiB), then
# `osu --latency-only` built for that MPI (target/mpi and target/openmpi, built here). One line
# per round and MPI; compare within a line (this machine changes speed from minute to minute).
# Usage: ROUNDS=4 bash bench/mpi_latency_floor.sh > out.txt
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
for mpi in mpich openmpi; do
  "mpicc.$mpi" -O2 -o "$work/floor-$mpi" "$top/bench/mpi_receive_paths.c"
done
(cd "$top" && MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpi \
  cargo build -q --release --features mpi --example osu)
(cd "$top" && MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi \
  cargo build -q --release --features mpi --example osu)
for round in $(seq "${ROUNDS:-4}"); do
  for mpi in mpich openmpi; do
    case $mpi in
      mpich) launch=(mpiexec.mpich -n 2) osu=$top/target/mpi/release/examples/osu ;;
      openmpi) launch=(mpiexec.openmpi -n 2) osu=$top/target/openmpi/release/examples/osu ;;
    esac
    c8=$("${launch[@]}" "$work/floor-$mpi" 0 8 | awk '{print $5}')
    c64=$("${launch[@]}" "$work/floor-$mpi" 0 65536 | awk '{print $5}')
    rpar=$("${launch[@]}" "$osu" --latency-only --json 2>/dev/null | grep latency |
      sed 's/.*"bytes":\([0-9]*\),"value":\([0-9.]*\)}/\1=\2/' | tr '\n' ' ')
    echo "round $round $mpi C8=$c8 C64K=$c64 rpar: $rpar"
  done
done
