"""Joins the JSON lines of the MPI peers and of rpar by (figure, ranks, bytes) and prints a
Markdown table with rpar's ratio against the better peer (>1: rpar is better). A figure given
several times (several rounds of bench/compare.sh) counts with its median, or with
TABLE_STAT=best with its best (the least time, the highest rate): on this machine many figures
are bimodal from one run to the next, for the peers and rpar alike (BENCHMARKS.md, twelfth
round), and the best of a few rounds compares each program in the machine's faster mode.

Three kinds of rows join more than one figure:
- owned_vec_bandwidth_GBps (a Vec moved to the receiver, not copied) has no figure of its own
  at the peers: its row shows the peers' bandwidth_GBps at the same bytes, and rpar's ratio to
  the better of them (issue 7's target: at least 10x).
- copy_GBps is each program's own memcpy of the pack figures' bytes, in the same run as its
  pack figures: peer_bench.c prints it as peer "memcpy" right after the pack figures of its run
  (MPICH's, then Open MPI's), so a "memcpy" line belongs to the peer whose pack figures sit next
  to it; rpar's comes from examples/pack_bench (as "rpar" or, the same way, "memcpy").
- each pack figure also has a row "<pack figure> / copy_GBps": its ratio to the memcpy of its
  own run, median over runs, steadier on a loaded machine than the rates themselves.

Records of an older rpar (peer "rpar-before", from bench/compare.sh with BEFORE=…) add two
columns: its figure and rpar's ratio against it (>1: the current rpar is better).

Records of rpar on Open MPI (peer "rpar-openmpi") add two columns: its figure and its ratio
against Open MPI's own.

Usage: python3 bench/table.py peers.jsonl rpar.jsonl [rpar-mpi.jsonl] [rpar-openmpi.jsonl]
[rpar-before.jsonl]"""
import json
import os
import statistics
import sys

PEERS = ("mpich", "openmpi")
OWNED, BANDWIDTH, COPY = "owned_vec_bandwidth_GBps", "bandwidth_GBps", "copy_GBps"


def is_local(figure):
    """A figure of one process's own memory: a pack rate or the memcpy beside it."""
    return figure.startswith("pack_") or figure == COPY


def runs(path):
    """The records of a file, each as (figure, ranks, bytes, peer, value), with every "memcpy"
    record given to the peer whose pack figures are next to it (or, failing that, the last
    other peer before it)."""
    records = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            records.append([r["figure"], r.get("ranks", 2), r["bytes"], r["peer"], r["value"]])
    # blocks: runs of consecutive pack/copy records, one program's
    blocks, current = [], []
    for rec in records:
        if is_local(rec[0]):
            current.append(rec)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    last = "memcpy"
    owner_of = {}
    for block in blocks:
        owners = {rec[3] for rec in block} - {"memcpy"}
        if len(owners) == 1:
            for rec in block:
                owner_of[id(rec)] = next(iter(owners))
    for rec in records:
        if rec[3] == "memcpy":
            rec[3] = owner_of.get(id(rec), last)
        else:
            last = rec[3]
    return records, blocks


values = {}  # (figure, ranks, bytes) -> peer -> [values]
for path in sys.argv[1:]:
    records, blocks = runs(path)
    for figure, ranks, nbytes, peer, value in records:
        values.setdefault((figure, ranks, nbytes), {}).setdefault(peer, []).append(value)
    # each pack figure against the memcpy of its own run
    for block in blocks:
        copies = [rec[4] for rec in block if rec[0] == COPY]
        if not copies:
            continue
        copy = statistics.median(copies)
        for figure, ranks, nbytes, peer, value in block:
            if figure != COPY and copy > 0:
                key = (f"{figure} / {COPY}", ranks, nbytes)
                values.setdefault(key, {}).setdefault(peer, []).append(value / copy)
def better_is_higher(figure):
    return figure.endswith("GBps")


def statistic(figure, v):
    """A figure's value over its rounds: the median, or the best with TABLE_STAT=best."""
    if os.environ.get("TABLE_STAT", "median") == "best":
        return max(v) if better_is_higher(figure) else min(v)
    return statistics.median(v)


rows = {
    key: {peer: statistic(key[0], v) for peer, v in by_peer.items()}
    for key, by_peer in values.items()
}


def ratio(figure, rpar, peer):
    if rpar is None or peer is None or rpar <= 0 or peer <= 0:
        return ""
    return f"{rpar / peer:.2f}x" if better_is_higher(figure) else f"{peer / rpar:.2f}x"


def fmt(x):
    return "" if x is None else f"{x:.3f}"


before = any("rpar-before" in v for v in rows.values())
openmpi = any("rpar-openmpi" in v for v in rows.values())
print(
    "| figure | ranks | bytes | MPICH | Open MPI | rpar | rpar vs better peer "
    "| rpar on MPI | rpar on MPI vs MPICH |"
    + (" rpar on Open MPI | rpar on Open MPI vs Open MPI |" if openmpi else "")
    + (" rpar before | rpar vs before |" if before else "")
)
print(
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    + ("---:|---:|" if openmpi else "")
    + ("---:|---:|" if before else "")
)
for (figure, ranks, nbytes), v in sorted(rows.items()):
    label, theirs = figure, v
    if figure == OWNED:
        # the peers have no owned buffers: their bandwidth of the same bytes
        label = f"{OWNED} (MPI: {BANDWIDTH})"
        theirs = rows.get((BANDWIDTH, ranks, nbytes), {})
    peers = [theirs[p] for p in PEERS if p in theirs]
    best = None
    if peers:
        best = max(peers) if better_is_higher(figure) else min(peers)
    rpar, on_mpi = v.get("rpar"), v.get("rpar-mpi")
    print(
        f"| {label} | {ranks} | {nbytes} | {fmt(theirs.get('mpich'))} "
        f"| {fmt(theirs.get('openmpi'))} | {fmt(rpar)} | {ratio(figure, rpar, best)} "
        f"| {fmt(on_mpi)} | {ratio(figure, on_mpi, theirs.get('mpich'))} |"
        + (
            f" {fmt(v.get('rpar-openmpi'))} "
            f"| {ratio(figure, v.get('rpar-openmpi'), theirs.get('openmpi'))} |"
            if openmpi
            else ""
        )
        + (f" {fmt(v.get('rpar-before'))} | {ratio(figure, rpar, v.get('rpar-before'))} |"
           if before else "")
    )
