/* energy_load.c — the host energy plugin under load (SimGrid's simgrid/plugins/energy.h).
 *
 * Demonstrates:
 * - computations of different lengths per rank (smpi_execute_flops, SMPI_SAMPLE_FLOPS), several
 *   ranks on one multi-core host, so its load goes through 1/4, 2/4, ... of its cores;
 * - idle time between computations (a barrier, a message across a slow link), idle hosts;
 * - the energy and power read mid-run (sg_host_get_consumed_energy,
 *   sg_host_get_current_consumption, sg_host_energy_update_all) and a profile's values.
 *
 * Usage: energy_load [unit_flops] [mode]
 *   unit_flops  the work unit (default 1e8 flops)
 *   mode        "" (default): read the energy of the rank's host;
 *               "quiet": read nothing (for hosts without wattage_per_state);
 *               "init": sg_host_energy_plugin_init() first, then as the default;
 *               "late": read nothing, sg_host_energy_plugin_init() after the first computation
 *                       (refused).
 * Prints on stderr: "[<time>] [rank <r>] <step> <host>: energy <J> J, power <W> W" lines.
 * Run with --cfg=smpi/simulate-computation:no (and --cfg=plugin:host_energy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include <simgrid/host.h>
#include <simgrid/plugins/energy.h>

static int rank;
static int quiet;

static void report(const char* step)
{
  if (quiet)
    return;
  sg_host_t me = sg_host_self();
  /* Read the power first: reading the energy updates the host's account. */
  double power  = sg_host_get_current_consumption(me);
  double energy = sg_host_get_consumed_energy(me);
  fprintf(stderr, "[%.6f] [rank %d] %s %s: energy %.6f J, power %.6f W\n", MPI_Wtime(), rank, step,
          sg_host_get_name(me), energy, power);
}

int main(int argc, char* argv[])
{
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double unit      = argc > 1 ? atof(argv[1]) : 1e8;
  const char* mode = argc > 2 ? argv[2] : "";
  quiet            = strcmp(mode, "quiet") == 0 || strcmp(mode, "late") == 0;
  if (strcmp(mode, "init") == 0)
    sg_host_energy_plugin_init();

  if (rank == 0 && !quiet) {
    sg_host_t me = sg_host_self();
    fprintf(stderr, "[rank 0] %s: idle %.6f W, pstate 0: idle %.6f, epsilon %.6f, all cores %.6f, slope %.6f W\n",
            sg_host_get_name(me), sg_host_get_idle_consumption(me), sg_host_get_idle_consumption_at(me, 0),
            sg_host_get_wattmin_at(me, 0), sg_host_get_wattmax_at(me, 0), sg_host_get_power_range_slope_at(me, 0));
  }

  /* Phase 1: 1, 2 or 3 units per rank, all at once. */
  smpi_execute_flops(unit * (rank % 3 + 1));
  report("computed");
  if (strcmp(mode, "late") == 0)
    sg_host_energy_plugin_init();
  MPI_Barrier(MPI_COMM_WORLD);
  report("barrier");

  /* Phase 2: a message from rank 0 to the last rank while the odd ranks compute half a unit. */
  static char buf[1000000];
  if (size > 1 && rank == 0)
    MPI_Send(buf, sizeof buf, MPI_CHAR, size - 1, 0, MPI_COMM_WORLD);
  else if (size > 1 && rank == size - 1)
    MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank % 2) {
    SMPI_SAMPLE_FLOPS(unit / 2) {
    }
  }
  report("phase2");

  /* Phase 3: rank 1 computes 2 units; rank 0 (maybe on the same host) reads after half a unit. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1)
    smpi_execute_flops(2 * unit);
  if (rank == 0) {
    smpi_execute_flops(unit / 2);
    report("during");
  }
  if (!quiet)
    sg_host_energy_update_all();
  MPI_Barrier(MPI_COMM_WORLD);
  report("end");
  MPI_Finalize();
  return 0;
}
