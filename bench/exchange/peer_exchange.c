/* A halo exchange between 2 processes as C programs write it, for examples/exchange.rs on
 * rpar's MPI transport to stand beside: each step, each process posts MPI_Irecv for its two
 * faces from the other (tags 0 and 1, each into a buffer of its own), starts MPI_Isend of its
 * two faces, and completes the four with MPI_Waitall. Prints, per face size, the time of one
 * step in microseconds (median of 7 repetitions of the mean over the steps) as JSON lines in
 * the form of shared/peers/run.sh ("peer", "figure", "bytes", "value").
 * Build and run: mpicc.mpich -O2 -o peer_exchange bench/exchange/peer_exchange.c;
 *                mpiexec.mpich -n 2 ./peer_exchange mpich */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
enum { REPS = 7 };
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
int main(int argc, char **argv) {
  int provided; MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *peer = argc > 1 ? argv[1] : "mpi";
  if (size != 2) { if (rank == 0) fprintf(stderr, "run on 2 processes\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
  int other = 1 - rank;
  const int sizes[] = {8, 1024, 65536, 1 << 20};
  for (int k = 0; k < 4; k++) {
    int m = sizes[k];
    int steps = m <= 1024 ? 20000 : m <= 65536 ? 2000 : 200;
    char *out[2], *in[2];
    for (int f = 0; f < 2; f++) {
      out[f] = malloc(m); in[f] = malloc(m);
      memset(out[f], 1 + f, m); memset(in[f], 0, m);
    }
    double t[REPS];
    for (int r = 0; r < REPS; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < steps; i++) {
        MPI_Request req[4];
        MPI_Irecv(in[0], m, MPI_BYTE, other, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in[1], m, MPI_BYTE, other, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(out[1], m, MPI_BYTE, other, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out[0], m, MPI_BYTE, other, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
      }
      t[r] = (MPI_Wtime() - t0) / steps * 1e6;
    }
    qsort(t, REPS, sizeof t[0], cmp);
    if (rank == 0)
      printf("{\"peer\":\"%s\",\"figure\":\"exchange_us\",\"bytes\":%d,\"value\":%.3f}\n", peer, m, t[REPS / 2]);
    for (int f = 0; f < 2; f++) { free(out[f]); free(in[f]); }
  }
  MPI_Finalize();
  return 0;
}
