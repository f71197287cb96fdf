/* smpi/smpi.h — SMPI extensions: explicit computation injection, sampling,
 * memory folding and shared calls. Included by mpi.h. */
#ifndef SMPI_RS_SMPI_H
#define SMPI_RS_SMPI_H

#include <stddef.h>
#include <simgrid/forward.h>

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
 * body entirely). The _TAG forms add a string (evaluated at run time) to the
 * call site, so one loop sampled in several contexts keeps separate
 * statistics. MPI calls inside a sampled body are not allowed. Needs GCC or
 * Clang (statement expressions). */
void smpi_sample_1(int global, const char *file, int line, int iters, double threshold);
void smpi_sample_count(int global, const char *file, int line);
int smpi_sample_2(int global, const char *file, int line);
void smpi_sample_3(int global, const char *file, int line);
void smpi_sample_exit(int global, const char *file, int line);
/* The site name of a tagged loop of `file` (a string that lives for the run). */
const char *smpi_sample_site(const char *file, const char *tag);
/* A sampled loop whose statistics are kept under `site` (a file name) and __LINE__. */
#define SMPI_SAMPLE_AT_SITE_(global, site, init, cond, iter, iters, thres)                                              \
  for (const char *smpi_site_ = (site),                                                                                \
                  *smpi_once_ = (smpi_sample_1(global, smpi_site_, __LINE__, iters, thres), ({                           \
                                   for (init; cond; iter)                                                              \
                                     smpi_sample_count(global, smpi_site_, __LINE__);                                  \
                                 }),                                                                                   \
                                 smpi_site_);                                                                          \
       smpi_once_; smpi_once_ = 0)                                                                                     \
    for (init; (cond) ? smpi_sample_2(global, smpi_site_, __LINE__)                                                    \
                      : (smpi_sample_exit(global, smpi_site_, __LINE__), 0);                                          \
         iter, smpi_sample_3(global, smpi_site_, __LINE__))
/* SMPI's general form (its argument order): `tag` "" is no tag. */
#define SMPI_SAMPLE_LOOP(loop_init, loop_end, loop_iter, global, iters, thres, tag)                                    \
  SMPI_SAMPLE_AT_SITE_(global, smpi_sample_site(__FILE__, (tag)), loop_init, loop_end, loop_iter, iters, thres)
#define SMPI_SAMPLE_LOCAL(init, cond, iter, iters, thres) SMPI_SAMPLE_AT_SITE_(0, __FILE__, init, cond, iter, iters, thres)
#define SMPI_SAMPLE_GLOBAL(init, cond, iter, iters, thres) SMPI_SAMPLE_AT_SITE_(1, __FILE__, init, cond, iter, iters, thres)
#define SMPI_SAMPLE_LOCAL_TAG(init, cond, iter, iters, thres, tag) SMPI_SAMPLE_LOOP(init, cond, iter, 0, iters, thres, tag)
#define SMPI_SAMPLE_GLOBAL_TAG(init, cond, iter, iters, thres, tag) SMPI_SAMPLE_LOOP(init, cond, iter, 1, iters, thres, tag)
/* Inject a delay or flops without running the block. */
#define SMPI_SAMPLE_DELAY(duration) for (smpi_execute(duration); 0;)
#define SMPI_SAMPLE_FLOPS(flops) for (smpi_execute_flops(flops); 0;)

/* SMPI_SHARED_CALL(func, input, args...): calls func(args...) once for all
 * ranks per (func, input) and returns its result (a pointer) to every rank
 * that makes the same call: for an expensive setup whose result the ranks
 * only read (e.g. loading the input file named `input`). */
int smpi_shared_known_call(const char *func, const char *input);
void *smpi_shared_get_call(const char *func, const char *input);
void *smpi_shared_set_call(const char *func, const char *input, void *data);
#define SMPI_SHARED_CALL(func, input, ...)                                                                             \
  (smpi_shared_known_call(#func, (input)) ? smpi_shared_get_call(#func, (input))                                       \
                                          : smpi_shared_set_call(#func, (input), (void *)((func)(__VA_ARGS__))))

/* MPI_CALL(type, name, args): declares function `name` and its profiling
 * twin P`name` (SMPI declares its MPI interface this way). */
#define MPI_CALL(type, name, args)                                                                                     \
  type name args;                                                                                                      \
  type P##name args

#ifdef __cplusplus
}
#endif

#endif /* SMPI_RS_SMPI_H */
