/* smpi/smpi.h — SMPI extensions: explicit computation injection, sampling
 * and memory folding. Included by mpi.h. */
#ifndef SMPI_RS_SMPI_H
#define SMPI_RS_SMPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Inject computation: wall seconds scaled by smpi/host-speed, seconds of the
 * simulated host, or flops. */
void smpi_execute(double seconds);
void smpi_execute_benched(double seconds);
void smpi_execute_flops(double flops);
void smpi_execute_flops_benched(double flops);
/* Simulated sleep. */
void smpi_sleep_seconds(double seconds);

/* Memory folding: the contents of folded memory are garbage (shared by every
 * rank); use it only for data that does not drive control flow. */
void *smpi_shared_malloc(size_t size, const char *file, int line);
void *smpi_shared_malloc_partial(size_t size, size_t *shared_block_offsets, int nb_shared_blocks);
void smpi_shared_free(void *ptr);
#define SMPI_SHARED_MALLOC(size) smpi_shared_malloc(size, __FILE__, __LINE__)
/* offsets = {start0, stop0, start1, stop1, ...}: shared [start, stop) byte ranges */
#define SMPI_PARTIAL_SHARED_MALLOC(size, offsets, n) smpi_shared_malloc_partial(size, offsets, n)
#define SMPI_SHARED_FREE(ptr) smpi_shared_free(ptr)

/* Sampling: SMPI_SAMPLE_LOCAL(init, cond, iter, iters, thres) { body } runs
 * the loop header once alone to count the iterations N, then runs and times
 * the body until `iters` iterations were measured (or, with thres > 0, until
 * the relative standard error of the mean is below thres after >= 2), leaves
 * the loop and injects mean x (iterations not run). LOCAL keeps statistics per
 * rank and call site; GLOBAL per call site for all ranks (later ranks skip the
 * body entirely). MPI calls inside a sampled body are not allowed. Needs GCC
 * or Clang (statement expressions). */
void smpi_sample_1(int global, const char *file, int line, int iters, double threshold);
void smpi_sample_count(int global, const char *file, int line);
int smpi_sample_2(int global, const char *file, int line);
void smpi_sample_3(int global, const char *file, int line);
void smpi_sample_exit(int global, const char *file, int line);
#define SMPI_SAMPLE_LOOP(global, init, cond, iter, iters, thres)                                              \
  for (int smpi_once_ = (smpi_sample_1(global, __FILE__, __LINE__, iters, thres), ({                          \
                           for (init; cond; iter)                                                             \
                             smpi_sample_count(global, __FILE__, __LINE__);                                   \
                         }),                                                                                  \
                         1);                                                                                  \
       smpi_once_; smpi_once_ = 0)                                                                            \
    for (init; (cond) ? smpi_sample_2(global, __FILE__, __LINE__) : (smpi_sample_exit(global, __FILE__, __LINE__), 0); \
         iter, smpi_sample_3(global, __FILE__, __LINE__))
#define SMPI_SAMPLE_LOCAL(init, cond, iter, iters, thres) SMPI_SAMPLE_LOOP(0, init, cond, iter, iters, thres)
#define SMPI_SAMPLE_GLOBAL(init, cond, iter, iters, thres) SMPI_SAMPLE_LOOP(1, init, cond, iter, iters, thres)
/* Inject a delay or flops without running the block. */
#define SMPI_SAMPLE_DELAY(duration) for (smpi_execute(duration); 0;)
#define SMPI_SAMPLE_FLOPS(flops) for (smpi_execute_flops(flops); 0;)

#ifdef __cplusplus
}
#endif

#endif /* SMPI_RS_SMPI_H */
