#!/usr/bin/env bash
# What tracing costs when it is compiled in but off (issue 7: "with tracing off the hot path pays
# nothing measurable"), counted in instructions, which unlike wall time do not depend on how
# loaded the machine is.
#
# Builds examples/self_send twice in release: with the default features (the `trace` feature
# compiled in; RPAR_TRACE is unset, so nothing is recorded) and with --no-default-features (no
# tracing code at all). Runs each under `valgrind --tool=callgrind` for N1 and N2 iterations of
# an 8-byte self send+recv on one rank, and prints the instructions per iteration,
# (count(N2) - count(N1)) / (N2 - N1), which leaves out start-up and shut-down, for the blocking
# loop (send + recv_into) and the non-blocking one (irecv_into + send + wait), with the ratio
# traced / untraced. Exits 1 if the blocking loop's ratio is above LIMIT (default 1.02).
#
# Usage: bench/trace_overhead.sh [out-dir]   (default: target/trace_overhead; needs valgrind)
# Its output is kept in bench/results/trace_overhead.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/target/trace_overhead}
n1=${N1:-20000}
n2=${N2:-120000}
limit=${LIMIT:-1.02}
mkdir -p "$out"
cd "$top"
unset RPAR_TRACE

build() { # variant cargo-args...
  local variant=$1
  shift
  cargo build -q --release --example self_send "$@"
  cp target/release/examples/self_send "$out/self_send.$variant"
}
build traced
build untraced --no-default-features

count() { # binary args... -> the instructions callgrind collected
  local log=$out/callgrind.log
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" "$@" >/dev/null 2>"$log"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log"
}
per_iteration() { # binary mode-args... -> instructions per iteration
  local c1 c2
  c1=$(count "$@" "$n1")
  c2=$(count "$@" "$n2")
  awk -v a="$c1" -v b="$c2" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.1f", (b - a) / (n2 - n1) }'
}

changes=$(git status --porcelain -- rpar examples Cargo.toml)
echo "instructions per 8-byte self send+recv on one rank: callgrind's count at $n2 iterations"
echo "less its count at $n1, over $((n2 - n1)) (start-up and shut-down cancel out)"
echo "rpar $(git rev-parse --short HEAD)${changes:+ with uncommitted changes}, $(rustc -V), $(valgrind --version)"
printf '%-26s %16s %16s %8s\n' loop "trace compiled in" "trace feature off" ratio
verdict=0
for mode in blocking nonblocking; do
  args=()
  [[ $mode == nonblocking ]] && args=(--nonblocking)
  traced=$(per_iteration "$out/self_send.traced" "${args[@]}")
  untraced=$(per_iteration "$out/self_send.untraced" "${args[@]}")
  ratio=$(awk -v a="$traced" -v b="$untraced" 'BEGIN { printf "%.3f", a / b }')
  label="send + recv_into"
  [[ $mode == nonblocking ]] && label="irecv_into + send + wait"
  printf '%-26s %16s %16s %8s\n' "$label" "$traced" "$untraced" "$ratio"
  if [[ $mode == blocking ]] && awk -v r="$ratio" -v l="$limit" 'BEGIN { exit !(r > l) }'; then
    verdict=1
  fi
done
if ((verdict)); then
  echo "the blocking loop's ratio is above $limit: tracing costs the hot path when it is off"
else
  echo "the blocking loop's ratio is within $limit"
fi
exit "$verdict"
