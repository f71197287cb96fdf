/* SimGrid's helper API as SMPI programs use it (xbt/log.h, xbt/asserts.h,
 * xbt/sysdep.h, simgrid/actor.h, simgrid/host.h, simgrid/engine.h,
 * simgrid/instr.h, SMPI_SHARED_CALL, SMPI_SAMPLE_*_TAG). Builds unchanged with
 * SimGrid 3.32's smpicc (the e2e test compares the two runs line by line).
 *
 * Demonstrates:
 *  - categories: api_top (top level) > api (this file's default) > api_child,
 *    and api_smpi under SimGrid's own `smpi` category; a block-scope default
 *    category (XBT_LOG_DEFAULT_CATEGORY, XBT_LOG_EXTERNAL_DEFAULT_CATEGORY);
 *  - every priority in the default category, XBT_C* in named ones, and
 *    XBT_LOG_ISENABLED; a message longer than the headers' stack buffer;
 *  - log lines and the program's own stderr lines stay in order;
 *  - the rank as a SimGrid actor (pid, name, ppid) and its host (name, speed,
 *    cores), simgrid_get_clock before and after a barrier;
 *  - xbt_malloc0/xbt_realloc/xbt_strdup/xbt_new/xbt_free, xbt_assert that holds;
 *  - SMPI_SHARED_CALL computed once for all ranks; tagged sampling sites.
 *
 * stdout: `key=value` lines per rank, then OK on rank 0. stderr: the log lines. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/instr.h>
#include <xbt.h>

XBT_LOG_NEW_CATEGORY(api_top, "top category of this program");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(api, api_top, "main category");
XBT_LOG_NEW_SUBCATEGORY(api_child, api, "a child of api");
XBT_LOG_NEW_SUBCATEGORY(api_smpi, smpi, "a child of SimGrid's smpi category");

static int shared_runs = 0; /* per rank (privatized): how often this rank computed the shared value */

static char *compute_shared(int rank)
{
  shared_runs++;
  char *s = xbt_malloc(64);
  snprintf(s, 64, "computed-by-%d", rank);
  return s;
}

static volatile double sink;

/* A sampled loop whose site is made distinct by its tag. */
static int sampled(const char *tag)
{
  int ran = 0;
  SMPI_SAMPLE_LOCAL_TAG(int i = 0, i < 100, i++, 3, -1, tag)
  {
    double s = 0;
    for (int k = 0; k < 1000; k++)
      s += k;
    sink = s;
    ran++;
  }
  return ran;
}

static void in_child_category(int rank)
{
  XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(api_child);
  XBT_INFO("default category switched to api_child on rank %d", rank);
  XBT_DEBUG("api_child debug on rank %d", rank);
}

static void in_top_category(int rank)
{
  XBT_LOG_DEFAULT_CATEGORY(api_top);
  XBT_VERB("api_top verbose on rank %d", rank);
}

int main(int argc, char **argv)
{
  int rank, size;
  XBT_INFO("before MPI_Init");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  XBT_INFO("hello from rank %d of %d", rank, size);
  XBT_DEBUG("debug %d", rank);
  XBT_VERB("verbose %d", rank);
  XBT_WARN("warning %d", rank);
  XBT_ERROR("error %d", rank);
  XBT_CRITICAL("critical %d", rank);
  XBT_CINFO(api_child, "child info %d", rank);
  XBT_CDEBUG(api_child, "child debug %d", rank);
  XBT_CWARN(api_top, "top warning %d", rank);
  XBT_CINFO(api_smpi, "under smpi info %d", rank);
  XBT_CDEBUG(api_smpi, "under smpi debug %d", rank);
  in_child_category(rank);
  in_top_category(rank);
  fprintf(stderr, "plain stderr line of rank %d\n", rank);
  XBT_CERROR(api_child, "after the plain line %d", rank);
  char big[1100];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  XBT_INFO("long %s end", big);

  sg_actor_t me = sg_actor_self();
  sg_host_t host = sg_host_self();
  printf("rank=%d pid=%ld self_pid=%ld ppid=%ld name=%s self_name=%s\n", rank, (long)sg_actor_get_pid(me),
         (long)sg_actor_self_get_pid(), (long)sg_actor_get_ppid(me), sg_actor_get_name(me), sg_actor_self_get_name());
  printf("rank=%d host=%s self_host=%s actor_host=%s speed=%.0f cores=%d by_name=%d hosts=%lu\n", rank,
         sg_host_get_name(host), sg_host_self_get_name(), sg_host_get_name(sg_actor_get_host(me)),
         sg_host_get_speed(host), sg_host_core_count(host), sg_host_by_name(sg_host_get_name(host)) == host,
         (unsigned long)sg_host_count());
#ifdef SMPI_RS_SMPI_H
  /* The older name (not in SimGrid 3.32): only with smpi-rs. */
  xbt_assert(sg_host_speed(host) == sg_host_get_speed(host));
#endif
  printf("rank=%d enabled api.debug=%d api_child.debug=%d api_smpi.debug=%d api_top.info=%d\n", rank,
         XBT_LOG_ISENABLED(api, xbt_log_priority_debug), XBT_LOG_ISENABLED(api_child, xbt_log_priority_debug),
         XBT_LOG_ISENABLED(api_smpi, xbt_log_priority_debug), XBT_LOG_ISENABLED(api_top, xbt_log_priority_info));

  TRACE_smpi_set_category("phase1");
  double clock0 = simgrid_get_clock();
  MPI_Barrier(MPI_COMM_WORLD);
  double clock1 = simgrid_get_clock();
  TRACE_smpi_set_category("phase2");
  printf("rank=%d clock0=%.6f clock1=%.6f\n", rank, clock0, clock1);
  XBT_INFO("after the barrier");

  /* Allocation helpers. */
  int *zeros = xbt_new0(int, 8);
  int zero_sum = 0;
  for (int i = 0; i < 8; i++)
    zero_sum += zeros[i];
  zeros = xbt_realloc(zeros, 16 * sizeof(int));
  zeros[15] = 7;
  char *copy = xbt_strdup("copied");
  double *d = xbt_new(double, 4);
  d[3] = 1.5;
  xbt_assert(zero_sum == 0, "xbt_new0 gave non-zero memory");
  xbt_assert(strcmp(copy, "copied") == 0);
  printf("rank=%d xbt zero_sum=%d realloc=%d strdup=%s new=%.1f null_strdup=%d\n", rank, zero_sum, zeros[15], copy,
         d[3], xbt_strdup(NULL) == NULL);
  xbt_free(zeros);
  xbt_free(copy);
  xbt_free(d);

  /* Computed by the first rank that gets here, then shared. */
  char *shared = SMPI_SHARED_CALL(compute_shared, "input-1", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  int runs = 0;
  MPI_Allreduce(&shared_runs, &runs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank=%d shared=%s shared_runs_total=%d\n", rank, shared, runs);

  /* Two tags: two sites, each sampled on its own; the same tag again: already sampled. */
  int ran_a = sampled("a");
  int ran_b = sampled("b");
  int ran_a_again = sampled("a");
  printf("rank=%d sampled a=%d b=%d a_again=%d\n", rank, ran_a, ran_b, ran_a_again);

  MPI_Barrier(MPI_COMM_WORLD);
  XBT_INFO("done");
  MPI_Finalize();
  if (rank == 0)
    printf("OK\n");
  return 0;
}
