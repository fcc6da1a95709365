"""The table of a paired-rounds benchmark (bench/mpi_exchange.sh, bench/mpi_small_calls.sh):
JSON lines, each with a "round", a "peer" (the MPI's C program, "rpar-before", "rpar-mpi")
and a "value", a row per value of the ROW field; each cell the median over the rounds, each
ratio the median of the rounds' ratios to the MPI's own (two programs of one round ran in the
same speed of this machine far more often than two rounds did).
Usage: python3 bench/paired_table.py OUT.jsonl MPI ROW_FIELD ROW_TITLE"""
import json
import statistics
import sys
from collections import defaultdict

out, mpi, row, title = sys.argv[1:5]
runs = defaultdict(dict)
for line in open(out):
    r = json.loads(line)
    runs[(r[row], r["round"])][r["peer"]] = r["value"]
peers = [p for p in (mpi, "rpar-before", "rpar-mpi") if any(p in v for v in runs.values())]
med = statistics.median
print(f"| {title} | " + " | ".join(f"{p} (us)" for p in peers) + " | "
      + " | ".join(f"{p} / {mpi}" for p in peers[1:]) + " |")
print("|---:|" + "---:|" * (2 * len(peers) - 1))
for key in sorted({k for k, _ in runs}, key=lambda k: (isinstance(k, str), k)):
    rounds = [v for (k, _), v in runs.items() if k == key and set(peers) <= v.keys()]
    cells = [f"{med([v[p] for v in rounds]):.3f}" for p in peers]
    cells += [f"{med([v[p] / v[mpi] for v in rounds]):.2f}x" for p in peers[1:]]
    print(f"| {key} | " + " | ".join(cells) + " |")
