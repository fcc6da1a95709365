"""Prints the README's benchmark table: a selection of the figures of bench/compare.sh, with
the better of MPICH and Open MPI and rpar's ratio to it (>1: rpar is better); a figure given
several times (several rounds) counts with its median.
Usage: python3 bench/readme_table.py bench/results/peers.jsonl bench/results/rpar.jsonl"""
import json,sys
rows={}
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith('{'): continue
        r=json.loads(line); key=(r['figure'],r.get('ranks',2),r['bytes'])
        rows.setdefault(key,{}).setdefault(r['peer'],[]).append(r['value'])
import statistics
rows={k:{p:statistics.median(v) for p,v in d.items()} for k,d in rows.items()}
def fmt(b):
    return {8:'8 B',1024:'1 KiB',65536:'64 KiB',1048576:'1 MiB',4194304:'4 MiB',16777216:'16 MiB'}.get(b,str(b))
def num(x):
    return f"{x:.3g}" if x < 1000 else f"{x:.0f}"
out=["| figure | ranks | size | better of MPICH, Open MPI | rpar | rpar vs better |","|---|---:|---:|---:|---:|---:|"]
pick=[('latency_us',2,8),('latency_us',2,1024),('latency_us',2,1048576),('bandwidth_GBps',2,1048576),
      ('allreduce_us',2,8),('allreduce_us',8,8),('allreduce_us',8,1048576),
      ('bcast_us',2,8),('bcast_us',8,8),('bcast_us',8,65536),
      ('allgather_us',2,8),('allgather_us',8,65536),('alltoall_us',4,8),('alltoall_us',8,1048576),
      ('pack_vector_stride2_GBps',2,16777216),('pack_vector_4of8_GBps',2,16777216)]
for k in pick:
    v=rows.get(k,{})
    if 'rpar' not in v: continue
    peers=[v[p] for p in ('mpich','openmpi') if p in v]
    hi=k[0].endswith('GBps')
    best=max(peers) if hi else min(peers)
    ratio=v['rpar']/best if hi else best/v['rpar']
    unit='GB/s' if hi else 'us'
    out.append(f"| {k[0].replace('_us','').replace('_GBps','')} ({unit}) | {k[1]} | {fmt(k[2])} | {num(best)} | {num(v['rpar'])} | {ratio:.2f}x |")
print('\n'.join(out))
