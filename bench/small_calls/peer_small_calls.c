/* The time of one small call, robust to a machine whose speed changes from one second to the
 * next: an 8-byte ping-pong (MPI_Send, MPI_Recv from the known source; the half round trip),
 * an 8-byte MPI_Bcast from rank 0 and an 8-byte MPI_Allreduce (MPI_SUM of one uint64), on 2
 * processes, each timed in CHUNKS chunks of 1000 calls from a barrier (a collective's chunk
 * is the slower process's), the figure being the 10th percentile of the chunks' times per call
 * (the median is printed beside it): a pause of the machine spoils the chunks it falls in,
 * not the figure. examples/small_calls.rs is the same in rpar; bench/mpi_small_calls.sh runs
 * both in paired rounds. Prints JSON lines in the form of shared/peers/run.sh.
 * Usage: peer_small_calls PEER_NAME [CHUNKS] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CALLS = 1000 };

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One chunk of CALLS calls of `figure`, in microseconds per call (per half round trip for
 * the ping-pong), the slower process's. */
static double chunk(int figure, int rank) {
  uint64_t send[1] = {1}, recv[1] = {0};
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < CALLS; i++) {
    switch (figure) {
      case 0:
        if (rank == 0) {
          MPI_Send(send, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(recv, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(recv, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(send, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        break;
      case 1: MPI_Bcast(send, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD); break;
      case 2: MPI_Allreduce(send, recv, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); break;
    }
  }
  double local = (MPI_Wtime() - t0) * 1e6 / (figure == 0 ? 2 * CALLS : CALLS), worst;
  MPI_Allreduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char **argv) {
  /* MPI_THREAD_SINGLE, what rpar asks for from a process's main thread */
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *peer = argc > 1 ? argv[1] : "mpi";
  int chunks = argc > 2 ? atoi(argv[2]) : 200;
  if (size != 2 || chunks < 1) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 peer_small_calls PEER_NAME [CHUNKS >= 1]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *names[] = {"pingpong_us", "bcast_us", "allreduce_us"};
  double *t = malloc(sizeof(double) * chunks);
  for (int figure = 0; figure < 3; figure++) {
    chunk(figure, rank); /* warm-up */
    for (int c = 0; c < chunks; c++) t[c] = chunk(figure, rank);
    qsort(t, chunks, sizeof(double), by_value);
    if (rank == 0)
      printf("{\"peer\":\"%s\",\"figure\":\"%s\",\"bytes\":8,\"value\":%.4f,\"median\":%.4f}\n",
             peer, names[figure], t[chunks / 10], t[chunks / 2]);
  }
  free(t);
  MPI_Finalize();
  return 0;
}
