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
rounds=${ROUNDS:-5}
source "$top/bench/mpi_launch.sh"
mkdir -p "$(dirname "$out")"
peer=$(mktemp -d)/peer_exchange
"mpicc.$mpi" -O2 -w "$top/bench/exchange/peer_exchange.c" -o "$peer"
: > "$out"
for round in $(seq "$rounds"); do
  label="\"round\":$round,"
  "${launch[@]}" "$peer" "$mpi" | sed "s/^{/{$label/" >> "$out"
  if [ -n "$before" ]; then
    "${launch[@]}" "$before" --json |
      sed "s/^{/{$label/; s/\"peer\":\"rpar-mpi\"/\"peer\":\"rpar-before\"/" >> "$out"
  fi
  "${launch[@]}" "$after" --json | sed "s/^{/{$label/" >> "$out"
done
python3 - "$out" "$mpi" <<'PY'
import json, statistics, sys
from collections import defaultdict
out, mpi = sys.argv[1], sys.argv[2]
runs = defaultdict(dict)
for line in open(out):
    r = json.loads(line)
    runs[(r["bytes"], r["round"])][r["peer"]] = r["value"]
peers = [p for p in (mpi, "rpar-before", "rpar-mpi") if any(p in v for v in runs.values())]
med = statistics.median
print("| face bytes | " + " | ".join(f"{p} (us)" for p in peers) + " | "
      + " | ".join(f"{p} / {mpi}" for p in peers[1:]) + " |")
print("|---:|" + "---:|" * (2 * len(peers) - 1))
for size in sorted({b for b, _ in runs}):
    rounds = [v for (b, _), v in runs.items() if b == size and set(peers) <= v.keys()]
    cells = [f"{med([v[p] for v in rounds]):.3f}" for p in peers]
    cells += [f"{med([v[p] / v[mpi] for v in rounds]):.2f}x" for p in peers[1:]]
    print(f"| {size} | " + " | ".join(cells) + " |")
PY

