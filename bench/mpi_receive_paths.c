/* What MPI itself charges for the ways rpar's MPI transport could receive a message: a
 * ping-pong of LEN bytes (default 58: 8 of payload and rpar's 50-byte header) between 2
 * processes, the receiver in one of four modes:
 *   0  MPI_Recv from the known source into the buffer (what a C program does; the floor),
 *   1  MPI_Improbe on any source and any tag, polled, then MPI_Mrecv into the buffer (what
 *      rpar does),
 *   2  a receive pre-posted on any source into a 4 KiB slab, polled with MPI_Test, copied out
 *      and posted again (the alternative rpar has not built; LEN at most 4096),
 *   3  as 1, the probe on the known source (whether naming it makes MPI's probe cheaper),
 *   4  MPI_Irecv from the known source into the buffer, polled with MPI_Test (what rpar's
 *      direct receive does: the floor of a receive that must keep polling for progress).
 * Buffers are written before the loop (an untouched calloc'd page is the kernel's zero page,
 * which flatters a single-copy transfer). Prints the half round trip in microseconds.
 * Build and run: mpicc.mpich -O2 -o receive_paths bench/mpi_receive_paths.c;
 * for m in 0 1 2 3 4; do mpiexec.mpich -n 2 ./receive_paths $m [LEN]; done */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
enum { SLAB = 4096 };
int main(int argc, char **argv) {
  /* MPI_THREAD_SINGLE, what rpar asks for from a process's main thread (Open MPI locks around
   * every call at any higher level) */
  int provided; MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int mode = argc > 1 ? atoi(argv[1]) : 0;
  int len = argc > 2 ? atoi(argv[2]) : 58;
  if (mode < 0 || mode > 4 || len < 0 || (mode == 2 && len > SLAB)) {
    if (rank == 0) fprintf(stderr, "usage: receive_paths MODE(0-4) [LEN, at most %d in mode 2]\n", SLAB);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int n = len <= 4096 ? 200000 : len <= 65536 ? 20000 : 2000;
  char *sbuf = malloc(len + 1), *rbuf = malloc(len + 1), *slab = malloc(SLAB);
  memset(sbuf, 1, len + 1); memset(rbuf, 2, len + 1); memset(slab, 3, SLAB);
  int peer = 1 - rank;
  MPI_Request req;
  if (mode == 2) MPI_Irecv(slab, SLAB, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
  double t0 = 0;
  for (int i = -n / 100; i < n; i++) {
    if (i == 0) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
    for (int turn = 0; turn < 2; turn++) {
      int sending = (turn == 0) == (rank == 0);
      if (sending) { MPI_Send(sbuf, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD); continue; }
      if (mode == 0) {
        MPI_Recv(rbuf, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (mode == 1 || mode == 3) {
        int flag = 0; MPI_Message m; MPI_Status st;
        int from = mode == 1 ? MPI_ANY_SOURCE : peer;
        while (!flag) MPI_Improbe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
        int c; MPI_Get_count(&st, MPI_BYTE, &c);
        MPI_Mrecv(rbuf, c, MPI_BYTE, &m, MPI_STATUS_IGNORE);
      } else if (mode == 4) {
        int flag = 0;
        MPI_Irecv(rbuf, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &req);
        while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      } else {
        int flag = 0; MPI_Status st;
        while (!flag) MPI_Test(&req, &flag, &st);
        int c; MPI_Get_count(&st, MPI_BYTE, &c); memcpy(rbuf, slab, c);
        MPI_Irecv(slab, SLAB, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
      }
    }
  }
  double t = MPI_Wtime() - t0;
  if (rank == 0) printf("mode %d len %d: %.3f us\n", mode, len, t / n / 2 * 1e6);
  if (mode == 2) { MPI_Cancel(&req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
  free(sbuf); free(rbuf); free(slab);
  MPI_Finalize();
  return 0;
}
