/*
 * Standalone `main` for the HPL 2.0 tree shipped inside HPCC (Debian's `hpcc` source package).
 *
 * HPCC turned HPL's `main` (testing/ptest/HPL_pddriver.c) into
 *     int HPL_main(int ARGC, char **ARGV, HPL_RuntimeData *rdata, int *failure);
 * with MPI_Init/MPI_Finalize commented out, and its HPL_pdinfo.c
 *   - reads the parameters from the hard-wired file "hpccinf.txt" (same first 31 lines as
 *     HPL.dat: HPL ignores the PTRANS lines that follow in a real hpccinf.txt),
 *   - reads the output file name (line 3) and device (line 4) but then overrides them with
 *     `fid = 8; strcpy(file, "hpccoutf.txt")`, i.e. always appends to "hpccoutf.txt",
 *   - calls HPCC_Defaults() (defined in HPCC's src/io.c) when the input file cannot be read.
 * Its Makefiles only build libhpl.a; HPCC's own main is in src/hpcc.c.
 *
 * This file provides, without touching any HPL source:
 *   - main(): MPI_Init, HPL_main, MPI_Finalize; exit status 1 if a test failed or was skipped;
 *   - HPCC_Defaults(): reports the unreadable input file and aborts (HPCC would instead pick
 *     a problem size from the memory size, which is not what we want in a simulator);
 *   - __wrap_fopen(): the xhpl shared object is linked with -Wl,--wrap=fopen, so the two
 *     fopen() calls of HPL_pdinfo.c come here first:
 *       * "hpccinf.txt" is redirected to "HPL.dat" when HPL.dat exists in the working
 *         directory (so the same HPL.dat works for netlib HPL 2.3 and for this build); a real
 *         hpccinf.txt is used when there is no HPL.dat. $HPL_DAT overrides the file name.
 *         Lines 3 and 4 (output file name, device) are remembered.
 *       * "hpccoutf.txt" is redirected like netlib HPL does it: device 6 -> stdout,
 *         7 -> stderr, anything else -> the file named on line 3 (opened for writing).
 *     Every other fopen() goes to the real one.
 */
#include "hpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int HPL_main(int ARGC, char **ARGV, HPL_RuntimeData *rdata, int *failure);

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

/* Only rank 0 opens files in HPL_pdinfo; with smpirun's privatization every rank has its
 * own copy of these anyway. */
static char hpl_input_name[4096];
static char hpl_output_name[HPL_LINE_MAX];
static int hpl_output_device = 6; /* stdout unless the input file says otherwise */

static void remember_output(const char *input)
{
    char line[HPL_LINE_MAX], word[HPL_LINE_MAX];
    FILE *f = __real_fopen(input, "r");
    int i;
    if (f == NULL) return;
    for (i = 0; i < 4; i++) {
        if (fgets(line, (int)sizeof line, f) == NULL) break;
        if (i < 2) continue;
        word[0] = '\0';
        if (sscanf(line, "%s", word) != 1) continue;
        if (i == 2) {
            strncpy(hpl_output_name, word, sizeof hpl_output_name - 1);
            hpl_output_name[sizeof hpl_output_name - 1] = '\0';
        } else {
            hpl_output_device = atoi(word);
        }
    }
    fclose(f);
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
    if (path != NULL && strcmp(path, "hpccinf.txt") == 0) {
        const char *name = getenv("HPL_DAT");
        if (name == NULL || name[0] == '\0')
            name = access("HPL.dat", R_OK) == 0 ? "HPL.dat" : "hpccinf.txt";
        strncpy(hpl_input_name, name, sizeof hpl_input_name - 1);
        remember_output(name);
        return __real_fopen(name, mode);
    }
    if (path != NULL && strcmp(path, "hpccoutf.txt") == 0) {
        if (hpl_output_device == 6) return stdout;
        if (hpl_output_device == 7) return stderr;
        if (hpl_output_name[0] != '\0') return __real_fopen(hpl_output_name, "w");
        return __real_fopen(path, mode);
    }
    return __real_fopen(path, mode);
}

int HPCC_Defaults(HPL_T_test *TEST, int *NS, int *N, int *NBS, int *NB, HPL_T_ORDER *PMAPPIN,
                  int *NPQS, int *P, int *Q, int *NPFS, HPL_T_FACT *PF, int *NBMS, int *NBM,
                  int *NDVS, int *NDV, int *NRFS, HPL_T_FACT *RF, int *NTPS, HPL_T_TOP *TP,
                  int *NDHS, int *DH, HPL_T_SWAP *FSWAP, int *TSWAP, int *L1NOTRAN,
                  int *UNOTRAN, int *EQUIL, int *ALIGN, MPI_Comm comm)
{
    int rank = 0;
    (void)TEST; (void)NS; (void)N; (void)NBS; (void)NB; (void)PMAPPIN; (void)NPQS; (void)P;
    (void)Q; (void)NPFS; (void)PF; (void)NBMS; (void)NBM; (void)NDVS; (void)NDV; (void)NRFS;
    (void)RF; (void)NTPS; (void)TP; (void)NDHS; (void)DH; (void)FSWAP; (void)TSWAP;
    (void)L1NOTRAN; (void)UNOTRAN; (void)EQUIL; (void)ALIGN;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        fprintf(stderr,
                "xhpl: cannot read the HPL input file '%s' (missing or illegal values; see "
                "the HPL_pdinfo warnings above).\n"
                "xhpl: write an HPL.dat in the working directory (apps/hpl/gen_dat.sh).\n",
                hpl_input_name[0] ? hpl_input_name : "HPL.dat");
    MPI_Abort(comm, 1);
    return 1;
}

int main(int argc, char **argv)
{
    HPL_RuntimeData rdata;
    int failure = 0;

    MPI_Init(&argc, &argv);
    memset(&rdata, 0, sizeof rdata);
    HPL_main(argc, argv, &rdata, &failure);
    fflush(stdout);
    MPI_Finalize();
    return failure ? 1 : 0;
}
