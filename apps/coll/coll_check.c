/* coll_check: checks every MPI collective against a sequential computation.
 *
 * For each collective: every root, several counts (0, 1, odd, non-power-of-two,
 * and large enough for rendezvous messages and several pipeline segments),
 * MPI_IN_PLACE where MPI allows it, a non-contiguous vector datatype (whose
 * holes must stay untouched), and for reductions MPI_SUM (int), MPI_MAX
 * (double), MPI_MINLOC (2int), a non-commutative user operation (composition
 * of affine maps, must be applied in rank order) and MPI_SUM on the vector
 * type.
 *
 * Everything runs twice: on MPI_COMM_WORLD, then on two communicators at
 * once (even and odd world ranks, in reverse rank order).
 *
 * Usage: smpirun -np N ... coll_check [quick|full] [tests]
 *   quick: smaller counts and fewer roots (for sweeps over many sizes);
 *   tests: only the tests whose name is part of this string (e.g. "bcast";
 *          "gather" covers gather and scatter).
 * Prints "FAIL rank=R <what>" lines for mismatches (at most 20 per rank) and,
 * on rank 0, a last line "OK" or "FAILED <n>"; exits 1 on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, errors, quick;
static MPI_Comm comm;
static const char *phase = "world";
static MPI_Datatype vec_t, aff_t;
static MPI_Op aff_op;

#define FILL (-7777777)
#define FAIL(...)                                                                                  \
  do {                                                                                             \
    if (errors++ < 20) {                                                                           \
      printf("FAIL %s rank=%d ", phase, rank);                                                     \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
      fflush(stdout);                                                                              \
    }                                                                                              \
  } while (0)

/* ------------------------------------------------------------------ layouts */
/* Data-movement tests carry a stream of ints. INT: one int per element.
 * VEC: MPI_Type_vector(2, 1, 2, MPI_INT): 2 ints per element at offsets 0 and
 * 2 of a 3-int extent; offset 1 is a hole. */
enum { L_INT, L_VEC };
static const char *lname[] = {"int", "vec"};
static int width(int l) { return l == L_INT ? 1 : 2; }
static int span(int l) { return l == L_INT ? 1 : 3; }
static MPI_Datatype ltype(int l) { return l == L_INT ? MPI_INT : vec_t; }
static int *lalloc(int l, long elems)
{
  long n = elems * span(l) + 1;
  int *p = malloc(n * sizeof(int));
  for (long i = 0; i < n; i++) p[i] = FILL;
  return p;
}
static int *at(int l, int *buf, long idx)
{
  return l == L_INT ? &buf[idx] : &buf[3 * (idx / 2) + (idx % 2) * 2];
}
static int holes_ok(int l, int *buf, long elems)
{
  if (l == L_INT) return 1;
  for (long e = 0; e < elems; e++)
    if (buf[3 * e + 1] != FILL) return 0;
  return 1;
}
static int V(int src, int dst, long idx) { return src * 1000003 + dst * 7919 + (int)idx; }

/* ------------------------------------------------------------------ reduction cases */
typedef struct {
  const char *name;
  MPI_Datatype *dt;
  MPI_Op op;
  size_t ext;                                 /* bytes per element */
  void (*gen)(int r, long i, void *e);        /* contribution of rank r, element i */
  void (*comb)(void *acc, const void *x);     /* acc = acc op x */
  int (*eq)(const void *a, const void *b);
} Case;

static MPI_Datatype int_t = MPI_INT, dbl_t = MPI_DOUBLE, twoint_t = MPI_2INT;

static void g_sum(int r, long i, void *e) { *(int *)e = r * 100 + (int)(i % 1000); }
static void c_sum(void *a, const void *x) { *(int *)a += *(const int *)x; }
static int e_int(const void *a, const void *b) { return *(const int *)a == *(const int *)b; }

static void g_max(int r, long i, void *e) { *(double *)e = (double)((r * 131 + i * 17) % 97) + r * 0.001; }
static void c_max(void *a, const void *x)
{
  if (*(const double *)x > *(double *)a) *(double *)a = *(const double *)x;
}
static int e_dbl(const void *a, const void *b) { return *(const double *)a == *(const double *)b; }

static void g_minloc(int r, long i, void *e)
{
  int *p = e;
  p[0] = (int)((r * 37 + i * 11) % 23);
  p[1] = r;
}
static void c_minloc(void *a, const void *x)
{
  int *p = a;
  const int *q = x;
  if (q[0] < p[0] || (q[0] == p[0] && q[1] < p[1])) {
    p[0] = q[0];
    p[1] = q[1];
  }
}
static int e_pair(const void *a, const void *b)
{
  return ((const int *)a)[0] == ((const int *)b)[0] && ((const int *)a)[1] == ((const int *)b)[1];
}

/* x -> a*x + b (mod 2^32); u op v = "u then v" = (av*au, av*bu + bv) */
static void g_aff(int r, long i, void *e)
{
  unsigned *p = e;
  p[0] = 2u * r + 3u + (unsigned)i;
  p[1] = 7u * r + (unsigned)i + 1u;
}
static void aff_then(const unsigned *u, unsigned *v) /* v = u op v */
{
  unsigned a = v[0] * u[0], b = v[0] * u[1] + v[1];
  v[0] = a;
  v[1] = b;
}
static void c_aff(void *acc, const void *x)
{
  unsigned t[2] = {((const unsigned *)x)[0], ((const unsigned *)x)[1]};
  aff_then(acc, t);
  memcpy(acc, t, sizeof t);
}
static void aff_user(void *in, void *inout, int *len, MPI_Datatype *dt)
{
  (void)dt;
  for (int i = 0; i < *len; i++) aff_then((unsigned *)in + 2 * i, (unsigned *)inout + 2 * i);
}

static void g_vsum(int r, long i, void *e)
{
  int *p = e;
  p[0] = r * 10 + (int)(i % 1000);
  p[1] = FILL; /* hole */
  p[2] = r * 3 - (int)(i % 777);
}
static void c_vsum(void *a, const void *x)
{
  ((int *)a)[0] += ((const int *)x)[0];
  ((int *)a)[2] += ((const int *)x)[2];
}
static int e_vec(const void *a, const void *b)
{
  const int *p = a, *q = b;
  return p[0] == q[0] && p[2] == q[2] && p[1] == FILL;
}

static Case cases[5];
static int ncases;

static void init_cases(void)
{
  Case c0 = {"sum_int", &int_t, MPI_SUM, sizeof(int), g_sum, c_sum, e_int};
  Case c1 = {"max_double", &dbl_t, MPI_MAX, sizeof(double), g_max, c_max, e_dbl};
  Case c2 = {"minloc_2int", &twoint_t, MPI_MINLOC, 2 * sizeof(int), g_minloc, c_minloc, e_pair};
  Case c3 = {"noncomm_affine", &aff_t, MPI_OP_NULL, 2 * sizeof(unsigned), g_aff, c_aff, e_pair};
  Case c4 = {"sum_vector", &vec_t, MPI_SUM, 3 * sizeof(int), g_vsum, c_vsum, e_vec};
  c3.op = aff_op;
  cases[0] = c0;
  cases[1] = c1;
  cases[2] = c2;
  cases[3] = c3;
  cases[4] = c4;
  ncases = 5;
}

static unsigned char *cbuf(Case *c, long n)
{
  unsigned char *p = malloc(c->ext * n + 16);
  for (size_t i = 0; i < (c->ext * n + 16) / sizeof(int); i++) ((int *)p)[i] = FILL;
  return p;
}
static void cfill(Case *c, unsigned char *p, int r, long off, long n)
{
  for (long i = 0; i < n; i++) c->gen(r, off + i, p + i * c->ext);
}
/* expected reduction of element i over ranks lo..hi-1, in rank order */
static void expect(Case *c, long i, int lo, int hi, void *out)
{
  unsigned char x[32];
  c->gen(lo, i, out);
  for (int r = lo + 1; r < hi; r++) {
    c->gen(r, i, x);
    c->comb(out, x);
  }
}

/* ------------------------------------------------------------------ counts */
static long counts_full[] = {0, 1, 7, 1000, 40000};
static long counts_quick[] = {0, 1, 7, 300, 20000};
static long *counts;
static int ncounts = 5;

static int nroots(void) { return quick ? (size < 3 ? size : 3) : size; }
static int root_at(int k) { return quick ? (k == 0 ? 0 : k == 1 ? size - 1 : size / 2) : k; }

/* ------------------------------------------------------------------ tests */
static void t_bcast(void)
{
  for (int k = 0; k < nroots(); k++) {
    int root = root_at(k);
    for (int ci = 0; ci < ncounts; ci++)
      for (int l = 0; l < 2; l++) {
        long n = counts[ci];
        int *b = lalloc(l, n);
        if (rank == root)
          for (long i = 0; i < n * width(l); i++) *at(l, b, i) = V(root, 0, i);
        MPI_Bcast(b, (int)n, ltype(l), root, comm);
        for (long i = 0; i < n * width(l); i++)
          if (*at(l, b, i) != V(root, 0, i)) {
            FAIL("bcast root=%d count=%ld type=%s idx=%ld got=%d", root, n, lname[l], i, *at(l, b, i));
            break;
          }
        if (!holes_ok(l, b, n)) FAIL("bcast root=%d count=%ld: vector holes overwritten", root, n);
        free(b);
      }
  }
}

static void check_reduced(const char *what, Case *c, unsigned char *r, long n, long off, int root, int inplace)
{
  unsigned char e[32];
  for (long i = 0; i < n; i++) {
    expect(c, off + i, 0, size, e);
    if (!c->eq(r + i * c->ext, e)) {
      FAIL("%s op=%s root=%d count=%ld inplace=%d element %ld wrong", what, c->name, root, n, inplace, off + i);
      return;
    }
  }
}

static void t_reduce(void)
{
  for (int k = 0; k < nroots(); k++) {
    int root = root_at(k);
    for (int ci = 0; ci < ncounts; ci++)
      for (int oc = 0; oc < ncases; oc++)
        for (int inplace = 0; inplace < 2; inplace++) {
          long n = counts[ci];
          Case *c = &cases[oc];
          if (n > 1000 && (oc != 0 && oc != 3)) continue;
          if (n > 1000 && k > 1 && !quick) continue;
          unsigned char *s = cbuf(c, n), *r = cbuf(c, n);
          cfill(c, s, rank, 0, n);
          if (inplace && rank == root) {
            memcpy(r, s, c->ext * n);
            MPI_Reduce(MPI_IN_PLACE, r, (int)n, *c->dt, c->op, root, comm);
          } else
            MPI_Reduce(s, r, (int)n, *c->dt, c->op, root, comm);
          if (rank == root) check_reduced("reduce", c, r, n, 0, root, inplace);
          free(s);
          free(r);
        }
  }
}

static void t_allreduce(void)
{
  for (int ci = 0; ci < ncounts; ci++)
    for (int oc = 0; oc < ncases; oc++)
      for (int inplace = 0; inplace < 2; inplace++) {
        long n = counts[ci];
        Case *c = &cases[oc];
        if (n > 1000 && oc != 0 && oc != 3 && oc != 4) continue;
        unsigned char *s = cbuf(c, n), *r = cbuf(c, n);
        cfill(c, s, rank, 0, n);
        if (inplace) {
          memcpy(r, s, c->ext * n);
          MPI_Allreduce(MPI_IN_PLACE, r, (int)n, *c->dt, c->op, comm);
        } else
          MPI_Allreduce(s, r, (int)n, *c->dt, c->op, comm);
        check_reduced("allreduce", c, r, n, 0, -1, inplace);
        free(s);
        free(r);
      }
}

/* (send layout, recv layout) pairs; counts are in stream ints per rank */
static int combos[3][2] = {{L_INT, L_INT}, {L_VEC, L_INT}, {L_INT, L_VEC}};

static void t_gather_scatter(void)
{
  for (int k = 0; k < nroots(); k++) {
    int root = root_at(k);
    for (int ci = 0; ci < ncounts; ci++)
      for (int cb = 0; cb < 3; cb++)
        for (int inplace = 0; inplace < 2; inplace++) {
          long m = 2 * counts[ci] / (counts[ci] > 1000 ? 2 : 1); /* stream ints per rank (even) */
          int ls = combos[cb][0], lr = combos[cb][1];
          long ks = m / width(ls), kr = m / width(lr);
          if (counts[ci] > 1000 && k > 1 && !quick) continue;
          /* gather */
          int *s = lalloc(ls, ks), *r = lalloc(lr, kr * size);
          for (long i = 0; i < m; i++) *at(ls, s, i) = V(rank, 0, i);
          if (inplace && rank == root) {
            for (long i = 0; i < m; i++) *at(lr, r, rank * m + i) = V(rank, 0, i);
            MPI_Gather(MPI_IN_PLACE, (int)ks, ltype(ls), r, (int)kr, ltype(lr), root, comm);
          } else
            MPI_Gather(s, (int)ks, ltype(ls), r, (int)kr, ltype(lr), root, comm);
          if (rank == root) {
            for (int j = 0; j < size; j++)
              for (long i = 0; i < m; i++)
                if (*at(lr, r, j * m + i) != V(j, 0, i)) {
                  FAIL("gather root=%d m=%ld %s->%s inplace=%d from %d idx %ld", root, m, lname[ls], lname[lr], inplace,
                       j, i);
                  j = size;
                  break;
                }
            if (!holes_ok(lr, r, kr * size)) FAIL("gather root=%d: holes overwritten", root);
          }
          free(s);
          free(r);
          /* scatter (send layout lr at the root, receive layout ls) */
          s = lalloc(lr, kr * size);
          r = lalloc(ls, ks);
          if (rank == root)
            for (int j = 0; j < size; j++)
              for (long i = 0; i < m; i++) *at(lr, s, j * m + i) = V(root, j, i);
          if (inplace && rank == root)
            MPI_Scatter(s, (int)kr, ltype(lr), MPI_IN_PLACE, (int)ks, ltype(ls), root, comm);
          else {
            MPI_Scatter(s, (int)kr, ltype(lr), r, (int)ks, ltype(ls), root, comm);
            for (long i = 0; i < m; i++)
              if (*at(ls, r, i) != V(root, rank, i)) {
                FAIL("scatter root=%d m=%ld %s->%s idx %ld got %d", root, m, lname[lr], lname[ls], i, *at(ls, r, i));
                break;
              }
            if (!holes_ok(ls, r, ks)) FAIL("scatter root=%d: holes overwritten", root);
          }
          if (rank == root)
            for (long i = 0; i < m * size; i++)
              if (*at(lr, s, i) != V(root, (int)(i / m), i % m)) {
                FAIL("scatter root=%d: send buffer modified", root);
                break;
              }
          free(s);
          free(r);
        }
  }
}

static void t_allgather(void)
{
  for (int ci = 0; ci < ncounts; ci++)
    for (int cb = 0; cb < 3; cb++)
      for (int inplace = 0; inplace < 2; inplace++) {
        long m = 2 * counts[ci] / (counts[ci] > 1000 ? 2 : 1);
        int ls = combos[cb][0], lr = combos[cb][1];
        long ks = m / width(ls), kr = m / width(lr);
        int *s = lalloc(ls, ks), *r = lalloc(lr, kr * size);
        for (long i = 0; i < m; i++) *at(ls, s, i) = V(rank, 0, i);
        if (inplace) {
          for (long i = 0; i < m; i++) *at(lr, r, rank * m + i) = V(rank, 0, i);
          MPI_Allgather(MPI_IN_PLACE, (int)ks, ltype(ls), r, (int)kr, ltype(lr), comm);
        } else
          MPI_Allgather(s, (int)ks, ltype(ls), r, (int)kr, ltype(lr), comm);
        for (int j = 0; j < size; j++)
          for (long i = 0; i < m; i++)
            if (*at(lr, r, j * m + i) != V(j, 0, i)) {
              FAIL("allgather m=%ld %s->%s inplace=%d from %d idx %ld got %d", m, lname[ls], lname[lr], inplace, j, i,
                   *at(lr, r, j * m + i));
              j = size;
              break;
            }
        if (!holes_ok(lr, r, kr * size)) FAIL("allgather m=%ld: holes overwritten", m);
        free(s);
        free(r);
      }
}

static void t_allgatherv(void)
{
  long bases[] = {1, 3, 500};
  for (int bi = 0; bi < 3; bi++)
    for (int l = 0; l < 2; l++)
      for (int inplace = 0; inplace < 2; inplace++) {
        long base = bases[bi];
        int *rc = malloc(size * sizeof(int)), *dp = malloc(size * sizeof(int));
        long tot = 0;
        for (int j = size - 1; j >= 0; j--) { /* reversed order, with gaps */
          rc[j] = (int)(((j * 5 + 3) % 4) * base);
          dp[j] = (int)tot;
          tot += rc[j] + 1;
        }
        int w = width(l);
        int *s = lalloc(l, rc[rank]), *r = lalloc(l, tot);
        for (long i = 0; i < (long)rc[rank] * w; i++) *at(l, s, i) = V(rank, 1, i);
        if (inplace) {
          for (long i = 0; i < (long)rc[rank] * w; i++) *at(l, r, (long)dp[rank] * w + i) = V(rank, 1, i);
          MPI_Allgatherv(MPI_IN_PLACE, rc[rank], ltype(l), r, rc, dp, ltype(l), comm);
        } else
          MPI_Allgatherv(s, rc[rank], ltype(l), r, rc, dp, ltype(l), comm);
        for (int j = 0; j < size; j++) {
          for (long i = 0; i < (long)rc[j] * w; i++)
            if (*at(l, r, (long)dp[j] * w + i) != V(j, 1, i)) {
              FAIL("allgatherv base=%ld %s inplace=%d from %d idx %ld", base, lname[l], inplace, j, i);
              j = size;
              break;
            }
          if (j < size)
            for (long i = 0; i < w; i++) /* the gap after each block */
              if (*at(l, r, (long)(dp[j] + rc[j]) * w + i) != FILL) {
                FAIL("allgatherv base=%ld: gap after block %d overwritten", base, j);
                j = size;
                break;
              }
        }
        if (!holes_ok(l, r, tot)) FAIL("allgatherv: holes overwritten");
        free(s);
        free(r);
        free(rc);
        free(dp);
      }
}

static void t_alltoall(void)
{
  for (int ci = 0; ci < ncounts; ci++)
    for (int cb = 0; cb < 2; cb++)
      for (int inplace = 0; inplace < 2; inplace++) {
        long m = 2 * counts[ci] / (counts[ci] > 1000 ? 4 : 1);
        int ls = combos[cb][0], lr = combos[cb][1];
        if (inplace) ls = lr;
        long ks = m / width(ls), kr = m / width(lr);
        int *s = lalloc(ls, ks * size), *r = lalloc(lr, kr * size);
        for (int j = 0; j < size; j++)
          for (long i = 0; i < m; i++) *at(ls, s, j * m + i) = V(rank, j, i);
        if (inplace) {
          for (long i = 0; i < m * size; i++) *at(lr, r, i) = *at(ls, s, i);
          MPI_Alltoall(MPI_IN_PLACE, (int)ks, ltype(ls), r, (int)kr, ltype(lr), comm);
        } else
          MPI_Alltoall(s, (int)ks, ltype(ls), r, (int)kr, ltype(lr), comm);
        for (int j = 0; j < size; j++)
          for (long i = 0; i < m; i++)
            if (*at(lr, r, j * m + i) != V(j, rank, i)) {
              FAIL("alltoall m=%ld %s->%s inplace=%d from %d idx %ld got %d", m, lname[ls], lname[lr], inplace, j, i,
                   *at(lr, r, j * m + i));
              j = size;
              break;
            }
        if (!holes_ok(lr, r, kr * size)) FAIL("alltoall: holes overwritten");
        free(s);
        free(r);
      }
}

static void t_alltoallv(void)
{
  long bases[] = {1, 5, 3000};
  for (int bi = 0; bi < 3; bi++)
    for (int inplace = 0; inplace < 2; inplace++) {
      long base = bases[bi];
      int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
      int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
      long st = 0, rt = 0;
      for (int j = size - 1; j >= 0; j--) {
        sc[j] = (int)(inplace ? ((rank + j) % 3) * base : ((rank + 2 * j) % 3) * base);
        sd[j] = (int)st;
        st += sc[j] + 2;
      }
      for (int j = 0; j < size; j++) {
        rc[j] = (int)(inplace ? ((rank + j) % 3) * base : ((j + 2 * rank) % 3) * base);
        rd[j] = (int)rt;
        rt += rc[j] + 1;
      }
      int *s = lalloc(L_INT, st), *r = lalloc(L_INT, rt);
      for (int j = 0; j < size; j++)
        for (long i = 0; i < sc[j]; i++) s[sd[j] + i] = V(rank, j, i);
      if (inplace) {
        for (int j = 0; j < size; j++)
          for (long i = 0; i < rc[j]; i++) r[rd[j] + i] = V(rank, j, i);
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, r, rc, rd, MPI_INT, comm);
      } else
        MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm);
      for (int j = 0; j < size; j++) {
        for (long i = 0; i < rc[j]; i++)
          if (r[rd[j] + i] != V(j, rank, i)) {
            FAIL("alltoallv base=%ld inplace=%d from %d idx %ld", base, inplace, j, i);
            j = size;
            break;
          }
        if (j < size && r[rd[j] + rc[j]] != FILL) {
          FAIL("alltoallv base=%ld: gap after block %d overwritten", base, j);
          break;
        }
      }
      free(s);
      free(r);
      free(sc);
      free(sd);
      free(rc);
      free(rd);
    }
}

static void t_reduce_scatter(void)
{
  long bases[] = {1, 3, 2000};
  for (int bi = 0; bi < 3; bi++)
    for (int oc = 0; oc < ncases; oc++)
      for (int irregular = 0; irregular < 2; irregular++)
        for (int inplace = 0; inplace < 2; inplace++) {
          long base = bases[bi];
          Case *c = &cases[oc];
          if (base > 1000 && oc != 0 && oc != 3) continue;
          int *rc = malloc(size * sizeof(int));
          long tot = 0, mine = 0;
          for (int j = 0; j < size; j++) {
            rc[j] = (int)(irregular ? ((j * 7 + 1) % 4) * base : base);
            if (j < rank) mine += rc[j];
            tot += rc[j];
          }
          unsigned char *s = cbuf(c, tot), *r = cbuf(c, tot);
          cfill(c, s, rank, 0, tot);
          if (inplace) {
            memcpy(r, s, c->ext * tot);
            if (irregular)
              MPI_Reduce_scatter(MPI_IN_PLACE, r, rc, *c->dt, c->op, comm);
            else
              MPI_Reduce_scatter_block(MPI_IN_PLACE, r, rc[0], *c->dt, c->op, comm);
          } else {
            if (irregular)
              MPI_Reduce_scatter(s, r, rc, *c->dt, c->op, comm);
            else
              MPI_Reduce_scatter_block(s, r, rc[0], *c->dt, c->op, comm);
          }
          check_reduced(irregular ? "reduce_scatter" : "reduce_scatter_block", c, r, rc[rank], mine, -1, inplace);
          free(s);
          free(r);
          free(rc);
        }
}

static void t_scan(void)
{
  long ns[] = {0, 1, 5, 1000};
  for (int ci = 0; ci < 4; ci++)
    for (int oc = 0; oc < ncases; oc++)
      for (int ex = 0; ex < 2; ex++)
        for (int inplace = 0; inplace < 2; inplace++) {
          long n = ns[ci];
          Case *c = &cases[oc];
          unsigned char *s = cbuf(c, n), *r = cbuf(c, n);
          unsigned char e[32];
          cfill(c, s, rank, 0, n);
          if (inplace) memcpy(r, s, c->ext * n);
          const void *sb = inplace ? MPI_IN_PLACE : (void *)s;
          if (ex)
            MPI_Exscan(sb, r, (int)n, *c->dt, c->op, comm);
          else
            MPI_Scan(sb, r, (int)n, *c->dt, c->op, comm);
          if (!ex || rank > 0)
            for (long i = 0; i < n; i++) {
              expect(c, i, 0, ex ? rank : rank + 1, e);
              if (!c->eq(r + i * c->ext, e)) {
                FAIL("%s op=%s count=%ld inplace=%d element %ld wrong", ex ? "exscan" : "scan", c->name, n, inplace, i);
                break;
              }
            }
          free(s);
          free(r);
        }
}

static void t_barrier(void)
{
  /* rank r arrives at its barrier (r + it) % size ms after leaving the previous
   * one: nobody may leave before the last arrival. The times go to rank 0 by
   * point-to-point messages. */
  for (int it = 0; it < 3; it++) {
    usleep(1000 * (useconds_t)((rank + it) % size));
    double t[2];
    t[0] = MPI_Wtime();
    MPI_Barrier(comm);
    t[1] = MPI_Wtime();
    if (rank == 0) {
      double last_in = t[0], first_out = t[1], o[2];
      for (int j = 1; j < size; j++) {
        MPI_Recv(o, 2, MPI_DOUBLE, j, 98, comm, MPI_STATUS_IGNORE);
        if (o[0] > last_in) last_in = o[0];
        if (o[1] < first_out) first_out = o[1];
      }
      if (first_out < last_in) FAIL("barrier: a rank left at %.9f s, before the last arrival at %.9f s", first_out, last_in);
    } else
      MPI_Send(t, 2, MPI_DOUBLE, 0, 98, comm);
  }
}

static void run_tests(const char *only)
{
  struct {
    const char *name;
    void (*f)(void);
  } tests[] = {{"barrier", t_barrier},     {"bcast", t_bcast},         {"reduce", t_reduce},
               {"allreduce", t_allreduce}, {"gather", t_gather_scatter}, {"allgather", t_allgather},
               {"allgatherv", t_allgatherv}, {"alltoall", t_alltoall}, {"alltoallv", t_alltoallv},
               {"reduce_scatter", t_reduce_scatter}, {"scan", t_scan}};
  for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++)
    if (!only || strstr(only, tests[t].name)) tests[t].f();
}

int main(int argc, char **argv)
{
  int wrank, wsize;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  counts = quick ? counts_quick : counts_full;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec_t);
  MPI_Type_commit(&vec_t);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &aff_t);
  MPI_Type_commit(&aff_t);
  MPI_Op_create(aff_user, 0, &aff_op);
  init_cases();
  const char *only = argc > 2 ? argv[2] : NULL;

  /* 1. the whole world */
  comm = MPI_COMM_WORLD;
  rank = wrank;
  size = wsize;
  run_tests(only);

  /* 2. two communicators at once (even and odd world ranks), ranks in
   * reverse order: rank translation and isolation between communicators */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half);
  comm = half;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  phase = wrank % 2 ? "odd-half" : "even-half";
  run_tests(only);
  MPI_Comm_free(&half);

  /* error counts travel by point-to-point, not by the collectives under test */
  rank = wrank;
  if (wrank == 0) {
    int total = errors, e;
    for (int j = 1; j < wsize; j++) {
      MPI_Recv(&e, 1, MPI_INT, j, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      total += e;
    }
    if (total == 0)
      printf("OK\n");
    else
      printf("FAILED %d\n", total);
    errors = total;
  } else
    MPI_Send(&errors, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
  MPI_Op_free(&aff_op);
  MPI_Type_free(&vec_t);
  MPI_Type_free(&aff_t);
  MPI_Finalize();
  return errors ? 1 : 0;
}
