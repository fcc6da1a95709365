"""Joins the JSON lines of the MPI peers and of rpar by (figure, ranks, bytes) and prints a
Markdown table with rpar's ratio against the better peer (>1: rpar is better). A figure given
several times (several rounds of bench/compare.sh) counts with its median."""
import json
import statistics
import sys

values = {}
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["figure"], r.get("ranks", 2), r["bytes"])
        values.setdefault(key, {}).setdefault(r["peer"], []).append(r["value"])
rows = {
    key: {peer: statistics.median(v) for peer, v in by_peer.items()}
    for key, by_peer in values.items()
}


def better_is_higher(figure):
    return figure.endswith("GBps")


print("| figure | ranks | bytes | MPICH | Open MPI | rpar | rpar vs better peer | rpar on MPI | rpar on MPI vs MPICH |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (figure, ranks, nbytes), v in sorted(rows.items()):
    peers = [v[p] for p in ("mpich", "openmpi") if p in v]
    if "memcpy" in v:
        peers.append(v["memcpy"])
    rpar = v.get("rpar")
    ratio = ""
    if rpar is not None and peers:
        if better_is_higher(figure):
            ratio = f"{rpar / max(peers):.2f}x"
        else:
            ratio = f"{min(peers) / rpar:.2f}x" if rpar > 0 else ""
    fmt = lambda x: "" if x is None else f"{x:.3f}"
    on_mpi, mpich = v.get("rpar-mpi"), v.get("mpich")
    mpi_ratio = ""
    if on_mpi and mpich:
        mpi_ratio = f"{on_mpi / mpich:.2f}x" if better_is_higher(figure) else f"{mpich / on_mpi:.2f}x"
    print(f"| {figure} | {ranks} | {nbytes} | {fmt(mpich)} | {fmt(v.get('openmpi'))} | {fmt(rpar)} | {ratio} | {fmt(on_mpi)} | {mpi_ratio} |")
