# Sourced by the MPI benchmark scripts: sets `launch` to the command that starts a 2-process job
# under the MPI named by `$mpi` (mpich or openmpi), allowing Open MPI's launcher to run as root,
# and defines `paired_rounds`.
case $mpi in
  mpich) launch=(mpiexec.mpich -n 2) ;;
  openmpi)
    launch=(mpiexec.openmpi -n 2)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
  *) echo "mpich or openmpi, got $mpi" >&2; exit 2 ;;
esac

# paired_rounds C_SOURCE AFTER BEFORE OUT ROUNDS: builds the C program C_SOURCE for `$mpi` and
# runs it (argument: the MPI's name), BEFORE (an older rpar build; skipped if empty) and AFTER
# (both with --json) in turn, ROUNDS times, within seconds of each other (this machine changes
# speed from one minute to the next); every JSON line into OUT with its round, the older
# build's as peer "rpar-before". bench/paired_table.py makes the table. `$ARGS` (if set) goes to
# both rpar builds, `$PEER_ENV` (if set, `NAME=value` words) to the C program's environment.
paired_rounds() {
  local source=$1 after=$2 before=$3 out=$4 rounds=$5
  local peer
  peer=$(mktemp -d)/peer
  "mpicc.$mpi" -O2 -w "$source" -o "$peer"
  mkdir -p "$(dirname "$out")"
  : > "$out"
  for round in $(seq "$rounds"); do
    local label="\"round\":$round,"
    # shellcheck disable=SC2086 # ARGS and PEER_ENV are lists of words
    env ${PEER_ENV:-} "${launch[@]}" "$peer" "$mpi" | grep '^{' | sed "s/^{/{$label/" >> "$out"
    if [ -n "$before" ]; then
      # shellcheck disable=SC2086
      "${launch[@]}" "$before" --json ${ARGS:-} |
        sed "s/^{/{$label/; s/\"peer\":\"rpar-mpi\"/\"peer\":\"rpar-before\"/" >> "$out"
    fi
    # shellcheck disable=SC2086
    "${launch[@]}" "$after" --json ${ARGS:-} | sed "s/^{/{$label/" >> "$out"
  done
}
