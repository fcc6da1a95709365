/* Acceptance data for rpar's virtual topologies, drawn from MPICH.
 *
 * Regenerate (from the repository root, with MPICH installed):
 *   mpicc.mpich -O2 -o /tmp/topology_oracle tests/oracle/topology_oracle.c
 *   mpiexec.mpich -n 1 /tmp/topology_oracle dims > tests/oracle/dims_create.txt
 *   mpiexec.mpich -n 24 /tmp/topology_oracle topo > tests/oracle/topology.txt
 *
 * `dims` mode (one process): for every nnodes in 1..=4096 one line
 *   "D nnodes | d | d d | d d d | d d d d | d d d d d"
 * with MPI_Dims_create's answer for 1..=5 free dims, then lines
 *   "F nnodes in0,in1,.. -> out0,out1,.." (or "-> ERR") for fixed entries.
 *
 * `topo` mode (24 processes): Cartesian grids of 1, 2 and 3 dims with every periods
 * combination, and graphs. Every rank writes its own lines, rank 0 prints them in rank order:
 *   "G name dims periods"                   a grid (dims "3x4", periods "TF")
 *   "C rank c0,c1,.."                        MPI_Cart_coords of this rank
 *   "S rank dim disp src dst"                MPI_Cart_shift (-1 = MPI_PROC_NULL)
 *   "W c0,c1,.. rank"                        MPI_Cart_rank of (wrapped) coordinates
 *   "B rank mask subrank subsize dims periods coords members"  MPI_Cart_sub, then
 *                                            MPI_Cart_get and the parent ranks of the members
 *                                            ("B rank mask NULL" where MPICH gives MPI_COMM_NULL)
 *   "M nnodes rank newrank"                  MPI_Cart_map (-1 = MPI_UNDEFINED)
 *   "H name nnodes index edges"              a graph
 *   "N rank count n0,n1,.."                  MPI_Graph_neighbors_count / MPI_Graph_neighbors
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *out;
static size_t out_len, out_cap;

static void emit(const char *fmt, ...) {
    va_list ap;
    char line[4096];
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (out_len + n + 1 > out_cap) {
        out_cap = 2 * (out_cap + n + 1);
        out = realloc(out, out_cap);
    }
    memcpy(out + out_len, line, n);
    out_len += n;
    out[out_len] = 0;
}

/* Rank 0 prints every rank's lines in rank order; then all buffers are cleared. */
static void flush_in_rank_order(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = (int)out_len;
    int *lens = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    if (rank == 0)
        for (int i = 0; i < size; i++) { displs[i] = total; total += lens[i]; }
    char *all = malloc(total + 1);
    MPI_Gatherv(out, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) { fwrite(all, 1, total, stdout); fflush(stdout); }
    free(all); free(lens); free(displs);
    out_len = 0;
}

static void list(char *buf, const int *v, int n) {
    buf[0] = 0;
    if (n == 0) { strcpy(buf, "-"); return; }
    for (int i = 0; i < n; i++)
        sprintf(buf + strlen(buf), i ? ",%d" : "%d", v[i]);
}

static void dims_mode(void) {
    for (int n = 1; n <= 4096; n++) {
        printf("D %d", n);
        for (int nd = 1; nd <= 5; nd++) {
            int dims[5] = {0};
            MPI_Dims_create(n, nd, dims);
            printf(" |");
            for (int i = 0; i < nd; i++) printf(" %d", dims[i]);
        }
        printf("\n");
    }
    /* Fixed entries: for 2 and 3 dims, one or two entries fixed to 1..4. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int n = 1; n <= 240; n++)
        for (int nd = 2; nd <= 3; nd++)
            for (int mask = 1; mask < (1 << nd) - 1 + (nd == 2); mask++)
                for (int v = 1; v <= 4; v++) {
                    int dims[3] = {0}, in[3];
                    for (int i = 0; i < nd; i++) dims[i] = (mask >> i) & 1 ? v + i : 0;
                    memcpy(in, dims, sizeof in);
                    int err = MPI_Dims_create(n, nd, dims);
                    char a[64], b[64];
                    list(a, in, nd);
                    list(b, dims, nd);
                    printf("F %d %s -> %s\n", n, a, err == MPI_SUCCESS ? b : "ERR");
                }
}

static void grid(const char *name, int nd, const int *dims, const int *periods) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nnodes = 1;
    for (int i = 0; i < nd; i++) nnodes *= dims[i];
    char d[64], p[8];
    d[0] = 0;
    for (int i = 0; i < nd; i++) {
        sprintf(d + strlen(d), i ? "x%d" : "%d", dims[i]);
        p[i] = periods[i] ? 'T' : 'F';
    }
    p[nd] = 0;
    if (rank == 0) emit("G %s %s %s\n", name, d, p);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart);
    if (cart != MPI_COMM_NULL) {
        int me, c[8];
        char buf[256], buf2[256], buf3[256];
        MPI_Comm_rank(cart, &me);
        MPI_Cart_coords(cart, me, nd, c);
        list(buf, c, nd);
        emit("C %d %s\n", me, buf);
        for (int dim = 0; dim < nd; dim++)
            for (int disp = -3; disp <= 3; disp++) {
                if (disp == 0) continue;
                int src, dst;
                MPI_Cart_shift(cart, dim, disp, &src, &dst);
                emit("S %d %d %d %d %d\n", me, dim, disp,
                     src == MPI_PROC_NULL ? -1 : src, dst == MPI_PROC_NULL ? -1 : dst);
            }
        for (int mask = 0; mask < (1 << nd); mask++) {
            int remain[8];
            for (int i = 0; i < nd; i++) remain[i] = (mask >> i) & 1;
            MPI_Comm sub;
            MPI_Cart_sub(cart, remain, &sub);
            char m[8], members[512];
            for (int i = 0; i < nd; i++) m[i] = remain[i] ? 'T' : 'F';
            m[nd] = 0;
            if (sub == MPI_COMM_NULL) {
                emit("B %d %s NULL\n", me, m);
                continue;
            }
            int sr, ss, snd, sd[8], sp[8], sc[8];
            MPI_Comm_rank(sub, &sr);
            MPI_Comm_size(sub, &ss);
            MPI_Cartdim_get(sub, &snd);
            MPI_Cart_get(sub, snd, sd, sp, sc);
            MPI_Group gs, gc;
            MPI_Comm_group(sub, &gs);
            MPI_Comm_group(cart, &gc);
            int *from = malloc(ss * sizeof(int)), *to = malloc(ss * sizeof(int));
            for (int i = 0; i < ss; i++) from[i] = i;
            MPI_Group_translate_ranks(gs, ss, from, gc, to);
            list(buf, sd, snd);
            list(buf2, sp, snd);
            list(buf3, sc, snd);
            list(members, to, ss);
            emit("B %d %s %d %d %s %s %s %s\n", me, m, sr, ss, buf, buf2, buf3, members);
            free(from); free(to);
            MPI_Group_free(&gs); MPI_Group_free(&gc);
            MPI_Comm_free(&sub);
        }
        if (me == 0) {
            /* Wrapped coordinates: on periodic dims any integer, on the others 0..dim. */
            int lo[8], hi[8], cur[8], total = 1;
            for (int i = 0; i < nd; i++) {
                lo[i] = periods[i] ? -2 * dims[i] - 1 : 0;
                hi[i] = periods[i] ? 2 * dims[i] + 1 : dims[i] - 1;
                total *= hi[i] - lo[i] + 1;
            }
            for (int k = 0; k < total; k++) {
                int t = k, r;
                for (int i = nd - 1; i >= 0; i--) {
                    int w = hi[i] - lo[i] + 1;
                    cur[i] = lo[i] + t % w;
                    t /= w;
                }
                MPI_Cart_rank(cart, cur, &r);
                list(buf, cur, nd);
                emit("W %s %d\n", buf, r);
            }
        }
        MPI_Comm_free(&cart);
    }
    flush_in_rank_order();
}

static void graph(const char *name, int nnodes, const int *index, const int *edges) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char a[512], b[512];
    if (rank == 0) {
        list(a, index, nnodes);
        list(b, edges, index[nnodes - 1]);
        emit("H %s %d %s %s\n", name, nnodes, a, b);
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &g);
    if (g != MPI_COMM_NULL) {
        int me, count, nb[64];
        MPI_Comm_rank(g, &me);
        MPI_Graph_neighbors_count(g, me, &count);
        MPI_Graph_neighbors(g, me, count, nb);
        list(a, nb, count);
        emit("N %d %d %s\n", me, count, a);
        MPI_Comm_free(&g);
    }
    flush_in_rank_order();
}

static void topo_mode(void) {
    static const int d1[][1] = {{5}, {2}, {1}, {7}};
    static const int d2[][2] = {{3, 4}, {4, 2}, {1, 3}};
    static const int d3[][3] = {{2, 3, 4}, {3, 1, 2}};
    char name[32];
    for (int g = 0; g < 4; g++)
        for (int p = 0; p < 2; p++) {
            int per[1] = {p};
            sprintf(name, "1d-%d", g);
            grid(name, 1, d1[g], per);
        }
    for (int g = 0; g < 3; g++)
        for (int p = 0; p < 4; p++) {
            int per[2] = {p & 1, (p >> 1) & 1};
            sprintf(name, "2d-%d", g);
            grid(name, 2, d2[g], per);
        }
    for (int g = 0; g < 2; g++)
        for (int p = 0; p < 8; p++) {
            int per[3] = {p & 1, (p >> 1) & 1, (p >> 2) & 1};
            sprintf(name, "3d-%d", g);
            grid(name, 3, d3[g], per);
        }
    /* MPI_Cart_map: grids smaller than, equal to and (1 rank) the world. */
    {
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        static const int maps[][2] = {{4, 5}, {6, 4}, {1, 1}, {3, 3}};
        for (int m = 0; m < 4; m++) {
            int per[2] = {0, 1}, nr;
            MPI_Cart_map(MPI_COMM_WORLD, 2, maps[m], per, &nr);
            emit("M %d %d %d\n", maps[m][0] * maps[m][1], rank, nr == MPI_UNDEFINED ? -1 : nr);
        }
        flush_in_rank_order();
    }
    /* The MPI standard's example graph, a star, a ring with a self-loop and a repeated edge. */
    static const int i1[] = {2, 3, 4, 6}, e1[] = {1, 3, 0, 3, 0, 2};
    graph("standard", 4, i1, e1);
    static const int i2[] = {3, 4, 5, 6}, e2[] = {1, 2, 3, 0, 0, 0};
    graph("star", 4, i2, e2);
    static const int i3[] = {3, 5, 7, 9, 11}, e3[] = {1, 4, 0, 0, 2, 1, 3, 2, 4, 3, 0};
    graph("ring-selfloop", 5, i3, e3);
    static const int i4[] = {3, 4, 6}, e4[] = {1, 1, 2, 0, 0, 1};
    graph("multi", 3, i4, e4);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "dims") == 0) dims_mode();
    else topo_mode();
    MPI_Finalize();
    return 0;
}
