/* Overlap of MPI_Iallreduce with computation, measured as the OSU micro-benchmarks'
 * osu_iallreduce measures it, for MPICH and Open MPI beside rpar's examples/overlap.rs (same
 * method, same sizes). For each size: `pure` is the time of MPI_Iallreduce + MPI_Wait; then
 * every rank starts the allreduce, computes (a busy loop) for `pure` microseconds, and waits;
 * overlap = 100 * (1 - (total - compute) / pure), clamped to 0..100, where total is the time of
 * the three. Each figure is the median over 7 repetitions of the mean over `iters` iterations;
 * reported: rank 0's, as JSON lines in the form of shared/peers/run.sh.
 *
 * Usage: mpiexec -n P peer_overlap SCALE NAME   (SCALE multiplies the iteration counts). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 7

static double now_us(void) { return MPI_Wtime() * 1e6; }

static void compute_for(double us) {
    double end = now_us() + us;
    volatile double x = 1.0;
    while (now_us() < end) {
        x = x * 1.0000001 + 1e-9;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v) {
    qsort(v, REPS, sizeof(double), cmp);
    return v[REPS / 2];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    const char *name = argc > 2 ? argv[2] : "mpi";
    size_t sizes[] = {8, 64 << 10, 1 << 20};
    for (int s = 0; s < 3; s++) {
        size_t bytes = sizes[s];
        size_t n = bytes / 8;
        double *send = malloc(bytes), *recv = malloc(bytes);
        for (size_t i = 0; i < n; i++) send[i] = rank + i;
        int iters = (int)((bytes >= (1 << 20) ? 50 : 500) * scale);
        if (iters < 1) iters = 1;
        double pure[REPS], overlap[REPS];
        for (int r = 0; r < REPS; r++) {
            MPI_Request req;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now_us();
            for (int i = 0; i < iters; i++) {
                MPI_Iallreduce(send, recv, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            double p = (now_us() - t0) / iters;
            /* every rank computes as long as rank 0's pure time */
            MPI_Bcast(&p, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double total = 0, comp = 0;
            for (int i = 0; i < iters; i++) {
                double a = now_us();
                MPI_Iallreduce(send, recv, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
                double c0 = now_us();
                compute_for(p);
                comp += now_us() - c0;
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                total += now_us() - a;
            }
            total /= iters;
            comp /= iters;
            double o = 100.0 * (1.0 - (total - comp) / p);
            pure[r] = p;
            overlap[r] = o < 0 ? 0 : (o > 100 ? 100 : o);
        }
        if (rank == 0) {
            printf("{\"peer\":\"%s\",\"figure\":\"iallreduce_us\",\"ranks\":%d,\"bytes\":%zu,\"value\":%.3f}\n",
                   name, size, bytes, median(pure));
            printf("{\"peer\":\"%s\",\"figure\":\"iallreduce_overlap_pct\",\"ranks\":%d,\"bytes\":%zu,\"value\":%.1f}\n",
                   name, size, bytes, median(overlap));
        }
        free(send);
        free(recv);
    }
    MPI_Finalize();
    return 0;
}
