# Sourced by the MPI benchmark scripts: sets `launch` to the command that starts a 2-process job
# under the MPI named by `$mpi` (mpich or openmpi), allowing Open MPI's launcher to run as root.
case $mpi in
  mpich) launch=(mpiexec.mpich -n 2) ;;
  openmpi)
    launch=(mpiexec.openmpi -n 2)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
  *) echo "mpich or openmpi, got $mpi" >&2; exit 2 ;;
esac
