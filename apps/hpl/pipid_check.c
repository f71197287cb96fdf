/*
 * pipid_check.c -- checks that pipid_indexed.c's HPL_pipid writes what HPL's own
 * HPL_pipid writes (K and IPID[0..K)), on pivot vectors an LU factorization gives (each
 * row swapped with itself or a row below it: near, far, or the identity of a folded
 * all-zero matrix) and on vectors none gives (rows above the panel, repeats). Built by apps/hpl/build.sh next to xhpl-fast-pipid; run under
 * smpirun with one rank (hpl.h includes mpi.h). Prints one summary line; exits 1 on the
 * first difference, naming the case.
 *
 * Usage: pipid_check [cases per shape]   (default 200)
 */
#include "hpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void HPL_pipid_quadratic(HPL_T_panel *PANEL, int *K, int *IPID);
extern long HPL_pipid_fallbacks;

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned next_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

enum shape { IDENTITY, NEAR_BELOW, FAR_BELOW, SAME_TARGETS, ANY_ROW, SHAPES };
static const char *shape_name[SHAPES] = {"identity", "near rows below", "far rows below",
                                         "few distinct rows below", "any row (not from LU)"};

/* Pivot row for row ia + i of a panel of jb rows over a trailing matrix of m rows. */
static double pivot(enum shape s, int ia, int i, int jb, int m) {
    switch (s) {
    case IDENTITY: return ia + i;
    case NEAR_BELOW: return ia + i + (int)(next_u32() % 4u);
    case FAR_BELOW: return ia + i + (int)(next_u32() % (unsigned)(m - i));
    case SAME_TARGETS: return ia + jb + (int)(next_u32() % 3u);
    default: return ia - 5 + (int)(next_u32() % (unsigned)(2 * jb + 10));
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int per_shape = argc > 1 ? atoi(argv[1]) : 200;
    const int widths[] = {1, 2, 31, 32, 33, 100, 128, 1024};
    const int nwidths = (int)(sizeof widths / sizeof widths[0]);
    long cases = 0;
    for (int s = 0; s < SHAPES; s++) {
        for (int w = 0; w < nwidths; w++) {
            const int jb = widths[w];
            for (int c = 0; c < per_shape; c++) {
                HPL_T_panel panel;
                memset(&panel, 0, sizeof panel);
                const int ia = (int)(next_u32() % 100000u), m = jb + (int)(next_u32() % 5000u);
                double *dpiv = malloc((size_t)jb * sizeof(double));
                int *want = malloc((size_t)4 * jb * sizeof(int) + 64);
                int *got = malloc((size_t)4 * jb * sizeof(int) + 64);
                for (int i = 0; i < jb; i++) dpiv[i] = pivot((enum shape)s, ia, i, jb, m);
                panel.DPIV = dpiv;
                panel.jb = jb;
                panel.ia = ia;
                int kwant = -1, kgot = -1;
                /* Stale contents differ, so output that depended on them would differ. */
                memset(want, 0x5a, (size_t)4 * jb * sizeof(int) + 64);
                memset(got, 0xa5, (size_t)4 * jb * sizeof(int) + 64);
                HPL_pipid_quadratic(&panel, &kwant, want);
                HPL_pipid(&panel, &kgot, got);
                if (kwant != kgot || memcmp(want, got, (size_t)kwant * sizeof(int)) != 0) {
                    int at = 0;
                    while (at < kwant && at < kgot && want[at] == got[at]) at++;
                    fprintf(stderr,
                            "pipid_check: DIFFERENT for %s, jb=%d ia=%d case %d: K %d (HPL) vs %d, "
                            "first difference at IPID[%d]\n",
                            shape_name[s], jb, ia, c, kwant, kgot, at);
                    return 1;
                }
                cases++;
                free(dpiv);
                free(want);
                free(got);
            }
        }
    }
    printf("pipid_check: %ld cases, K and IPID identical to HPL's HPL_pipid; %ld took the fallback "
           "to HPL's code\n",
           cases, HPL_pipid_fallbacks);
    /* Each step of HPL_pipid applies one transposition to a permutation, so rows stay
     * unique whatever the pivots and the index answers every call. */
    if (HPL_pipid_fallbacks != 0) {
        fprintf(stderr, "pipid_check: %ld calls fell back to HPL's code (a row held twice)\n",
                HPL_pipid_fallbacks);
        return 1;
    }
    MPI_Finalize();
    return 0;
}
