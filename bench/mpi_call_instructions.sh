#!/usr/bin/env bash
# rpar's own instructions per 8-byte collective call on MPICH, deterministic where times are not:
# examples/small_calls under callgrind on 2 processes (5 chunks of 1000 calls per figure), each
# form's inclusive count (`bcast_with`, `allreduce_with`) minus the MPI routine it runs, per
# call and per process. The MPI routine's own count includes its polling (not rpar's), and so
# does the periodic comparison of the agreement's (its MPI_Wait): CHECK=off (the default) sets
# RPAR_COLLECTIVE_CHECK past the run's calls, CHECK=on leaves it.
# Usage: bash bench/mpi_call_instructions.sh [SMALL_CALLS]
#   SMALL_CALLS built with
#   `MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi --example small_calls`
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/target/mpi/release/examples/small_calls}
work=$(mktemp -d)
wrap=$work/callgrind.sh
cat > "$wrap" <<WRAP
#!/usr/bin/env bash
exec valgrind -q --tool=callgrind --toggle-collect='small_calls::chunk::{{closure}}' \
  --callgrind-out-file=$work/cg.\$PMI_RANK.out "\$@"
WRAP
chmod +x "$wrap"
if [ "${CHECK:-off}" = off ]; then export RPAR_COLLECTIVE_CHECK=1000000000; fi
mpiexec.mpich -n 2 -genvall "$wrap" "$bin" --chunks 5 > /dev/null 2> "$work/stderr"
for rank in 0 1; do
  callgrind_annotate --tree=calling --inclusive=yes "$work/cg.$rank.out" > "$work/tree.$rank" 2>/dev/null
  python3 - "$work/tree.$rank" "$rank" <<'PY'
import re, sys
tree = open(sys.argv[1]).read()
def inclusive(pattern):
    m = re.search(r'^\s*([\d,]+) \([^)]*\)\s+\*\s+' + pattern, tree, re.M)
    return int(m.group(1).replace(',', '')) if m else 0
calls = 5 * 1000 + 1000  # the chunks timed and the warm-up chunk
for form, routine in (('allreduce', 'Allreduce'), ('bcast', 'Bcast')):
    whole = inclusive(r'\S*collective/' + form + r'\.rs:.*' + form + r'_with$')
    mpi = inclusive(r'\?\?\?:PMPI_' + routine + ' ')
    print(f"process {sys.argv[2]}: {form} rpar {(whole - mpi) / calls:.0f} instructions a call "
          f"(MPI_{routine} {mpi / calls:.0f}, with its polling)")
PY
done
rm -rf "$work"
