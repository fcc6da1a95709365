/* Oracle for rpar's derived datatypes: MPICH computes size, lb, extent, true lb, true extent and
   the MPI_Pack bytes of ~50 derived types; tests/datatype_oracle.rs builds the same types with
   rpar and checks every figure and every packed byte against the committed output.

   Check that the committed output is still MPICH's (from the repository root):
     tests/oracle/check.sh
   Regenerate it after adding a case: tests/oracle/check.sh --write

   Output: one line per case:
     <name> <count> <size> <lb> <extent> <true_lb> <true_extent> <packed bytes as hex>
   The packed buffer holds `count` elements starting at the origin of a source buffer whose byte
   at offset o (relative to the origin, which may be negative) is (o * 31 + 7) mod 256. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define HALF 8192
static unsigned char src[2 * HALF];

static void report(const char *name, MPI_Datatype t, int count) {
  MPI_Type_commit(&t);
  int size;
  MPI_Aint lb, extent, tlb, textent;
  MPI_Type_size(t, &size);
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_get_true_extent(t, &tlb, &textent);
  int cap;
  MPI_Pack_size(count, t, MPI_COMM_SELF, &cap);
  unsigned char *out = malloc(cap + 1);
  int pos = 0;
  MPI_Pack(src + HALF, count, t, out, cap, &pos, MPI_COMM_SELF);
  printf("%s %d %d %ld %ld %ld %ld ", name, count, size, (long)lb, (long)extent, (long)tlb, (long)textent);
  for (int i = 0; i < pos; i++) printf("%02x", out[i]);
  if (pos == 0) printf("-");
  printf("\n");
  free(out);
  MPI_Type_free(&t);
}

static MPI_Datatype struct3(int n, const int *bl, const MPI_Aint *d, const MPI_Datatype *ty) {
  MPI_Datatype t;
  MPI_Type_create_struct(n, bl, d, ty, &t);
  return t;
}

/* struct { c: i8 @0, d: f64 @8, i: i32 @16 } */
static MPI_Datatype cdi(void) {
  int bl[] = {1, 1, 1};
  MPI_Aint d[] = {0, 8, 16};
  MPI_Datatype ty[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  return struct3(3, bl, d, ty);
}

static MPI_Datatype column(void) { /* column of a 3x4 int matrix, resized to one int */
  MPI_Datatype v, r;
  MPI_Type_vector(3, 1, 4, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 4, &r);
  MPI_Type_free(&v);
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  for (int i = 0; i < 2 * HALF; i++) src[i] = (unsigned char)((i - HALF) * 31 + 7);
  MPI_Datatype t, u;

  MPI_Type_contiguous(3, MPI_INT, &t); report("contiguous_3_i32", t, 2);
  MPI_Type_contiguous(0, MPI_INT, &t); report("contiguous_0_i32", t, 1);
  MPI_Type_vector(2, 3, 4, MPI_DOUBLE, &t); report("vector_2_3_4_f64", t, 1);
  MPI_Type_vector(3, 1, -2, MPI_INT, &t); report("vector_3_1_m2_i32", t, 2);
  MPI_Type_vector(2, 2, 1, MPI_SHORT, &t); report("vector_overlap_i16", t, 1);
  MPI_Type_create_hvector(3, 2, -20, MPI_SHORT, &t); report("hvector_3_2_m20_i16", t, 2);
  MPI_Type_create_hvector(3, 1, 5, MPI_CHAR, &t); report("hvector_3_1_5_i8", t, 3);
  MPI_Type_create_hvector(2, 1, 6, MPI_INT, &t); report("hvector_2_1_6_i32", t, 2);
  { int bl[] = {2, 1, 3}, d[] = {5, 0, 10}; MPI_Type_indexed(3, bl, d, MPI_INT, &t); report("indexed_unordered_i32", t, 2); }
  { int bl[] = {1, 0, 2}, d[] = {4, 100, 0}; MPI_Type_indexed(3, bl, d, MPI_INT, &t); report("indexed_zero_block_i32", t, 1); }
  { int bl[] = {2, 1}, d[] = {-3, 2}; MPI_Type_indexed(2, bl, d, MPI_SHORT, &t); report("indexed_negative_i16", t, 2); }
  { int bl[] = {1, 2}; MPI_Aint d[] = {16, -8}; MPI_Type_create_hindexed(2, bl, d, MPI_DOUBLE, &t); report("hindexed_f64", t, 2); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {3, 12}; MPI_Type_create_hindexed(2, bl, d, MPI_DOUBLE, &t); report("hindexed_odd_f64", t, 2); }
  { int d[] = {3, 0, 7}; MPI_Type_create_indexed_block(3, 2, d, MPI_FLOAT, &t); report("indexed_block_2_f32", t, 1); }
  { MPI_Aint d[] = {12, 0, 4}; MPI_Type_create_hindexed_block(3, 1, d, MPI_INT, &t); report("hindexed_block_i32", t, 2); }
  t = cdi(); report("struct_cdi", t, 2);
  { int bl[] = {1, 1}; MPI_Aint d[] = {0, 4}; MPI_Datatype ty[] = {MPI_INT, MPI_CHAR}; t = struct3(2, bl, d, ty); report("struct_int_char", t, 3); }
  { int bl[] = {1, 3}; MPI_Aint d[] = {0, 8}; MPI_Datatype ty[] = {MPI_DOUBLE, MPI_CHAR}; t = struct3(2, bl, d, ty); report("struct_f64_3i8", t, 2); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {0, 2}; MPI_Datatype ty[] = {MPI_CHAR, MPI_SHORT}; t = struct3(2, bl, d, ty); report("struct_char_short", t, 2); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {8, 0}; MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}; t = struct3(2, bl, d, ty); report("struct_unordered", t, 2); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {0, 0}; MPI_Datatype ty[] = {MPI_INT, MPI_INT}; t = struct3(2, bl, d, ty); report("struct_repeated", t, 2); }
  { int bl[] = {3, 2}; MPI_Aint d[] = {0, 12}; MPI_Datatype ty[] = {MPI_FLOAT, MPI_CHAR}; t = struct3(2, bl, d, ty); report("struct_3f32_2i8", t, 2); }
  { int bl[] = {2, 1}; MPI_Aint d[] = {0, 48}; MPI_Datatype c = cdi(); MPI_Datatype ty[] = {c, MPI_INT}; t = struct3(2, bl, d, ty); MPI_Type_free(&c); report("struct_nested", t, 2); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {0, 24}; MPI_Datatype c = cdi(); MPI_Datatype ty[] = {c, MPI_CHAR}; t = struct3(2, bl, d, ty); MPI_Type_free(&c); report("struct_nested_pad", t, 1); }
  { int bl[] = {1, 1}; MPI_Aint d[] = {-8, 4}; MPI_Datatype ty[] = {MPI_DOUBLE, MPI_CHAR}; t = struct3(2, bl, d, ty); report("struct_negative", t, 2); }
  u = cdi(); MPI_Type_vector(2, 1, 2, u, &t); MPI_Type_free(&u); report("vector_of_struct", t, 1);
  u = cdi(); MPI_Type_create_hvector(2, 1, -40, u, &t); MPI_Type_free(&u); report("hvector_m40_struct", t, 1);
  u = column(); report("column_resized", u, 4);
  u = column(); MPI_Type_contiguous(2, u, &t); MPI_Type_free(&u); report("contiguous_of_column", t, 2);
  MPI_Type_create_resized(MPI_INT, -4, 12, &t); report("resized_i32_m4_12", t, 3);
  u = cdi(); MPI_Type_create_resized(u, 0, 16, &t); MPI_Type_free(&u); report("resized_struct_shrunk", t, 3);
  { MPI_Datatype r; MPI_Type_create_resized(MPI_INT, 0, 8, &r);
    int bl[] = {2, 1}; MPI_Aint d[] = {0, 20}; MPI_Datatype ty[] = {r, MPI_CHAR}; t = struct3(2, bl, d, ty); MPI_Type_free(&r); report("struct_of_resized", t, 2); }
  { MPI_Datatype r; MPI_Type_create_resized(MPI_CHAR, 0, 3, &r);
    int bl[] = {1, 1}; MPI_Aint d[] = {0, 8}; MPI_Datatype ty[] = {MPI_DOUBLE, r}; t = struct3(2, bl, d, ty); MPI_Type_free(&r); report("struct_resized_char", t, 2); }
  MPI_Type_vector(2, 1, 3, MPI_INT, &u); MPI_Type_vector(2, 1, 2, u, &t); MPI_Type_free(&u); report("vector_of_vector", t, 1);
  { int sz[] = {4, 5}, sub[] = {2, 3}, st[] = {1, 1};
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t); report("subarray_c_2d", t, 2);
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t); report("subarray_f_2d", t, 2); }
  { int sz[] = {3, 4, 5}, sub[] = {2, 2, 3}, st[] = {1, 0, 2};
    MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_INT, &t); report("subarray_c_3d", t, 1);
    MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t); report("subarray_f_3d", t, 1); }
  { int sz[] = {6}, sub[] = {0}, st[] = {2};
    MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t); report("subarray_empty", t, 1); }
  u = cdi(); { int sz[] = {3, 3}, sub[] = {2, 1}, st[] = {0, 2};
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, u, &t); MPI_Type_free(&u); report("subarray_of_struct", t, 1); }
  { int bl[] = {1, 1, 1}; MPI_Aint d[] = {0, 2, 8}; MPI_Datatype ty[] = {MPI_UINT8_T, MPI_INT16_T, MPI_UINT64_T}; t = struct3(3, bl, d, ty); report("struct_u8_i16_u64", t, 2); }
  /* negative extents (MPI_Type_create_resized allows them): elements go down in memory */
  MPI_Type_create_resized(MPI_SHORT, 4, -6, &t); report("resized_i16_4_m6", t, 3);
  MPI_Type_create_resized(MPI_CHAR, 0, -2, &u); MPI_Type_contiguous(3, u, &t); MPI_Type_free(&u); report("contiguous_of_backwards_i8", t, 2);
  MPI_Type_create_resized(MPI_CHAR, 0, -2, &u); MPI_Type_vector(2, 2, 3, u, &t); MPI_Type_free(&u); report("vector_of_backwards_i8", t, 2);
  MPI_Type_vector(3, 2, 3, MPI_INT, &u); MPI_Type_create_resized(u, 8, -40, &t); MPI_Type_free(&u); report("resized_vector_m40", t, 3);
  { MPI_Datatype s, c; MPI_Type_create_resized(MPI_SHORT, 0, -5, &s); MPI_Type_create_resized(MPI_CHAR, 0, -6, &c);
    int bl[] = {1, 1}; MPI_Aint d[] = {0, 0}; MPI_Datatype ty[] = {s, c}; t = struct3(2, bl, d, ty); MPI_Type_free(&s); MPI_Type_free(&c); report("struct_negative_extent", t, 2); }
  MPI_Type_create_resized(MPI_INT, 0, -4, &u); { int sz[] = {2, 3}, sub[] = {1, 2}, st[] = {1, 0};
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, u, &t); MPI_Type_free(&u); report("subarray_of_backwards_i32", t, 2); }
  MPI_Type_create_resized(MPI_DOUBLE, 0, -8, &u); { int bl[] = {2, 1}; MPI_Aint d[] = {16, -8};
    MPI_Type_create_hindexed(2, bl, d, u, &t); MPI_Type_free(&u); report("hindexed_of_backwards_f64", t, 2); }
  /* MPI_Type_create_darray: block, cyclic(k), none; default and explicit dargs; C and Fortran */
  { int g[] = {5, 7}, d[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK}, a[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {3, 2};
    MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t); report("darray_block_c_2d", t, 1);
    MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_FORTRAN, MPI_INT, &t); report("darray_block_f_2d", t, 1);
    MPI_Type_create_darray(6, 5, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t); report("darray_block_c_2d_last", t, 2); }
  { int g[] = {9, 10}, d[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, a[] = {2, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {2, 2};
    MPI_Type_create_darray(4, 3, 2, g, d, a, p, MPI_ORDER_C, MPI_DOUBLE, &t); report("darray_cyclic_c_2d", t, 1);
    MPI_Type_create_darray(4, 1, 2, g, d, a, p, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t); report("darray_cyclic_f_2d", t, 1); }
  { int g[] = {4, 5, 6}, d[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, a[] = {1, MPI_DISTRIBUTE_DFLT_DARG, 3}, p[] = {3, 1, 2};
    MPI_Type_create_darray(6, 5, 3, g, d, a, p, MPI_ORDER_FORTRAN, MPI_SHORT, &t); report("darray_mixed_f_3d", t, 2);
    MPI_Type_create_darray(6, 2, 3, g, d, a, p, MPI_ORDER_C, MPI_SHORT, &t); report("darray_mixed_c_3d", t, 1); }
  { int g[] = {10}, d[] = {MPI_DISTRIBUTE_BLOCK}, a[] = {3}, p[] = {4};
    MPI_Type_create_darray(4, 1, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t); report("darray_block_3_of_10", t, 1);
    MPI_Type_create_darray(4, 3, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t); report("darray_block_last_short", t, 1); }
  { int g[] = {5}, d[] = {MPI_DISTRIBUTE_BLOCK}, a[] = {MPI_DISTRIBUTE_DFLT_DARG}, p[] = {4};
    MPI_Type_create_darray(4, 3, 1, g, d, a, p, MPI_ORDER_C, MPI_INT, &t); report("darray_block_empty", t, 1); }
  { int g[] = {10}, d[] = {MPI_DISTRIBUTE_CYCLIC}, a[] = {3}, p[] = {3};
    MPI_Type_create_darray(3, 0, 1, g, d, a, p, MPI_ORDER_C, MPI_CHAR, &t); report("darray_cyclic_partial_block", t, 2); }
  u = cdi(); { int g[] = {3, 2}, d[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE}, a[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {2, 1};
    MPI_Type_create_darray(2, 1, 2, g, d, a, p, MPI_ORDER_C, u, &t); MPI_Type_free(&u); report("darray_of_struct", t, 1); }
  MPI_Finalize();
  return 0;
}
