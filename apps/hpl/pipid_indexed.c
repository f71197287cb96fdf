/*
 * pipid_indexed.c -- HPL_pipid in linear expected time, with HPL's own output.
 *
 * HPL_pipid turns a panel's pivot vector (DPIV: row ia + i was swapped with row DPIV[i])
 * into IPID, the pairs (first row, final row) of every row the swaps move. HPL's own version
 * (src/pgesv/HPL_pipid.c) looks each row up by scanning the pairs built so far: about jb^2/2
 * comparisons per call, and every rank calls it in every step (HPL_pdlaswp*). At NB = 1024
 * that is half a million comparisons per rank and step, about a fifth of a simulated
 * Stampede run's wall time. This file answers the same lookups from a hash index, so the
 * call costs O(jb); the pairs it writes, their order and K are HPL's, write for write.
 *
 * HPL's scan returns the one position holding a row as long as rows are unique among the
 * pairs' destinations (the odd entries of IPID), and they are for every pivot vector: each
 * step composes the permutation built so far with one transposition. Should a step ever
 * leave a row at two positions, the scan's answers would depend on its order: this version
 * then throws its work away and calls HPL's own code, built from HPL's source under the name
 * HPL_pipid_quadratic (apps/hpl/build.sh), and counts the call in HPL_pipid_fallbacks.
 *
 * Built by apps/hpl/build.sh into xhpl-fast-pipid (never into xhpl: a program's own
 * function is only replaced when the user picks that binary). Checked against HPL's own
 * function by pipid_check.c (tests: hpl::indexed_pipid_gives_hpls_output).
 */
#include "hpl.h"

#include <stdlib.h>

void HPL_pipid_quadratic(HPL_T_panel *PANEL, int *K, int *IPID);

/* Calls that fell back to HPL's own code (read by pipid_check.c). */
long HPL_pipid_fallbacks = 0;

/* Row -> odd position of IPID where it was last written. Entries are never removed: a
 * lookup trusts an entry only if that position is among the first K and still holds the
 * row. Every value written is a source or a destination row of the panel, so at most 2*jb
 * distinct rows are ever recorded; the table has at least twice that many slots. */
typedef struct {
    int *row;
    int *pos; /* 0: empty slot (positions recorded are odd) */
    unsigned mask;
} row_index;

static unsigned slot_of(int row, unsigned mask) {
    return ((unsigned)row * 2654435761u) & mask;
}

/* Where `row` is among the odd entries of IPID[0..K), or 0. */
static int find_row(const row_index *t, const int *IPID, int K, int row) {
    for (unsigned s = slot_of(row, t->mask);; s = (s + 1) & t->mask) {
        if (t->pos[s] == 0) return 0;
        if (t->row[s] == row) {
            const int p = t->pos[s];
            return p < K && IPID[p] == row ? p : 0;
        }
    }
}

/* Records that odd position p of IPID[0..K) holds `row`. Returns 1 when another live
 * position holds it too (rows no longer unique). */
static int record_row(row_index *t, const int *IPID, int K, int p) {
    const int row = IPID[p];
    for (unsigned s = slot_of(row, t->mask);; s = (s + 1) & t->mask) {
        if (t->pos[s] == 0) {
            t->row[s] = row;
            t->pos[s] = p;
            return 0;
        }
        if (t->row[s] == row) {
            const int q = t->pos[s];
            if (q != p && q < K && IPID[q] == row) return 1;
            t->pos[s] = p;
            return 0;
        }
    }
}

void HPL_pipid(HPL_T_panel *PANEL, int *K, int *IPID) {
    const int jb = PANEL->jb, ia = PANEL->ia;
    const double *dpiv = PANEL->DPIV;
    /* Small panels: the scan is as cheap as the index. */
    if (jb < 32) {
        HPL_pipid_quadratic(PANEL, K, IPID);
        return;
    }
    unsigned slots = 64;
    while (slots < 4u * (unsigned)jb) slots <<= 1;
    row_index t = {malloc(slots * sizeof(int)), calloc(slots, sizeof(int)), slots - 1};
    if (t.row == NULL || t.pos == NULL) {
        free(t.row);
        free(t.pos);
        HPL_pipid_quadratic(PANEL, K, IPID);
        return;
    }

    int k = 2, clash = 0;
    int src = ia, dst = (int)(dpiv[0]);
    IPID[0] = dst;
    IPID[1] = src;
    if (src != dst) {
        IPID[2] = src;
        IPID[3] = dst;
        k = 4;
    }
    clash |= record_row(&t, IPID, k, 1);
    if (k == 4) clash |= record_row(&t, IPID, k, 3);

    for (int i = 1; i < jb && !clash; i++) {
        int written[6], n = 0, lst, off;
        src = ia + i;
        dst = (int)(dpiv[i]);
        const int fnds = find_row(&t, IPID, k, src);
        if (src == dst) {
            /* Row src stays: a new pair (src, src), or nothing if a previous swap already
             * sends some row to src. */
            if (!fnds) {
                lst = k;
                off = 2;
                IPID[lst] = src;
            } else {
                lst = fnds - 1;
                off = 0;
            }
            IPID[lst + 1] = dst;
            written[n++] = lst + 1;
        } else {
            const int fndd = find_row(&t, IPID, k, dst);
            /* The row headed for src now goes to dst ... */
            if (!fnds) {
                IPID[k] = src;
                IPID[k + 1] = dst;
                off = 2;
                written[n++] = k + 1;
            } else {
                IPID[fnds] = dst;
                off = 0;
                written[n++] = fnds;
            }
            /* ... and the row headed for dst now goes to src. */
            if (!fndd) {
                lst = k + off;
                IPID[lst] = dst;
                off += 2;
            } else {
                lst = fndd - 1;
            }
            IPID[lst + 1] = src;
            written[n++] = lst + 1;
        }
        /* HPL keeps the pair whose destination is ia + i at position 2i. */
        const int j = i << 1;
        if (lst != j) {
            int v = IPID[j];
            IPID[j] = IPID[lst];
            IPID[lst] = v;
            v = IPID[j + 1];
            IPID[j + 1] = IPID[lst + 1];
            IPID[lst + 1] = v;
            written[n++] = j + 1;
            written[n++] = lst + 1;
        }
        k += off;
        for (int w = 0; w < n && !clash; w++)
            if (written[w] < k) clash |= record_row(&t, IPID, k, written[w]);
    }
    free(t.row);
    free(t.pos);
    if (clash) {
        HPL_pipid_fallbacks++;
        HPL_pipid_quadratic(PANEL, K, IPID);
        return;
    }
    *K = k;
}
