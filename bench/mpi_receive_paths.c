/* What MPI itself charges for the ways rpar's MPI transport could receive a small message: an
 * 8-byte ping-pong (58 bytes on the wire: 8 of payload and rpar's 50-byte header) between 2
 * processes, the receiver in one of three modes:
 *   0  MPI_Recv from the known source (what a C program does; the floor),
 *   1  MPI_Improbe on any source, polled, then MPI_Mrecv into a fresh buffer (what rpar does),
 *   2  a receive pre-posted on any source into a slab, polled with MPI_Test, copied out and
 *      posted again (the alternative rpar has not built).
 * Build and run: mpicc.mpich -O2 -o receive_paths bench/mpi_receive_paths.c;
 * for m in 0 1 2; do mpiexec.mpich -n 2 ./receive_paths $m; done */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  int provided; MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int mode = atoi(argv[1]); int n = 200000; int len = 58;
  char sbuf[64] = {0}; char slab[4096]; MPI_Request req;
  int peer = 1 - rank;
  if (mode == 2) MPI_Irecv(slab, 4096, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
  double t0 = 0;
  for (int i = -1000; i < n; i++) {
    if (i == 0) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
    for (int turn = 0; turn < 2; turn++) {
      int sending = (turn == 0) == (rank == 0);
      if (sending) { MPI_Send(sbuf, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD); continue; }
      if (mode == 0) { char r[64]; MPI_Recv(r, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else if (mode == 1) {
        int flag = 0; MPI_Message m; MPI_Status st;
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &m, &st);
        int c; MPI_Get_count(&st, MPI_BYTE, &c); char *b = malloc(c);
        MPI_Mrecv(b, c, MPI_BYTE, &m, MPI_STATUS_IGNORE); free(b);
      } else {
        int flag = 0; MPI_Status st;
        while (!flag) MPI_Test(&req, &flag, &st);
        int c; MPI_Get_count(&st, MPI_BYTE, &c); char *b = malloc(c); memcpy(b, slab, c); free(b);
        MPI_Irecv(slab, 4096, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
      }
    }
  }
  double t = MPI_Wtime() - t0;
  if (rank == 0) printf("mode %d: %.3f us\n", mode, t / n / 2 * 1e6);
  if (mode == 2) { MPI_Cancel(&req); MPI_Wait(&req, MPI_STATUS_IGNORE); }
  MPI_Finalize();
}
