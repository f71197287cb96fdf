/*
 * apps/hpl/hpl_main.c (main + HPCC_Defaults + fopen wrapper for the hpcc HPL 2.0 tree),
 * reused unchanged, plus:
 *   - __wrap_HPL_pdgesv (xhpl is linked with -Wl,--wrap=HPL_pdgesv): prints each rank's
 *     simulated duration of HPL_pdgesv with 9 decimals on stderr ("pdgesv_time <rank> <s>"),
 *     since HPL's own line has only 2 decimals. HPL's time is the max over ranks of the same
 *     interval (its MPI_Wtime calls are just outside ours; +2e-8 s for our two MPI_Wtime).
 *   - one line of BLAS-model statistics per rank before MPI_Finalize when BLAS_MODEL_STATS
 *     is set (see blas_model.c).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "hpl.h"
void blas_model_stats(int rank);
static void blas_model_stats_world(void)
{
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    blas_model_stats(r);
}
void __real_HPL_pdgesv(HPL_T_grid *GRID, HPL_T_palg *ALGO, HPL_T_pmat *A);
void __wrap_HPL_pdgesv(HPL_T_grid *GRID, HPL_T_palg *ALGO, HPL_T_pmat *A)
{
    double t0 = MPI_Wtime();
    __real_HPL_pdgesv(GRID, ALGO, A);
    double t1 = MPI_Wtime();
    if (getenv("HPL_NO_PDGESV_TIME") == NULL)
        fprintf(stderr, "pdgesv_time %d %.9f %.9f\n", GRID->iam, t1 - t0, t1);
}
#define MPI_Finalize() (blas_model_stats_world(), MPI_Finalize())
#include "../hpl_main.c"
