#!/usr/bin/env bash
# The oracles of tests/oracle/ are MPICH's own answers: this rebuilds each C oracle with MPICH,
# runs it, and diffs its output with the committed file that rpar's tests read, so that a change
# to an oracle program (or a committed file edited by hand) cannot go unnoticed.
#
#   tests/oracle/check.sh            check every oracle (non-zero exit and a diff if one differs)
#   tests/oracle/check.sh --write    regenerate the committed files instead (after adding a case)
#   ORACLES="datatypes" tests/oracle/check.sh    only some of: datatypes dims topology
#
# Needs MPICH (mpicc.mpich, mpiexec.mpich; override with MPICC=, MPIEXEC=). The topology oracle
# runs 24 processes: on a small machine that takes a while (MPICH busy-polls).
set -euo pipefail
cd "$(dirname "$0")/../.."
mpicc=${MPICC:-mpicc.mpich}
mpiexec=${MPIEXEC:-mpiexec.mpich}
write=0
[[ ${1:-} == --write ]] && write=1
oracles=${ORACLES:-datatypes dims topology}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$mpicc" -O1 -o "$tmp/datatypes" tests/oracle/datatypes.c
"$mpicc" -O2 -o "$tmp/topology" tests/oracle/topology_oracle.c

failed=0
# check NAME COMMITTED_FILE COMMAND...: runs COMMAND (its stdout is the oracle's output)
check() {
  local name=$1 committed=$2
  shift 2
  "$@" >"$tmp/$name.txt"
  if ((write)); then
    cp "$tmp/$name.txt" "$committed"
    echo "$name: wrote $committed ($(wc -l <"$committed") lines)"
  elif diff -u "$committed" "$tmp/$name.txt" >"$tmp/$name.diff"; then
    echo "$name: $committed is MPICH's output ($(wc -l <"$committed") lines)"
  else
    echo "$name: $committed differs from MPICH's output:" >&2
    head -n 40 "$tmp/$name.diff" >&2
    failed=1
  fi
}

for o in $oracles; do
  case $o in
    datatypes) check datatypes tests/oracle/datatypes.txt "$mpiexec" -n 1 "$tmp/datatypes" ;;
    dims) check dims tests/oracle/dims_create.txt "$mpiexec" -n 1 "$tmp/topology" dims ;;
    topology) check topology tests/oracle/topology.txt "$mpiexec" -n 24 "$tmp/topology" topo ;;
    *) echo "unknown oracle '$o': expected datatypes, dims or topology" >&2; exit 2 ;;
  esac
done
exit $failed
