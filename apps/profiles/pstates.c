/* Pstate switching: SimGrid's examples/smpi/energy/energy.c without its energy calls.
 *
 * Demonstrates:
 * - sg_host_get_nb_pstates, sg_host_get_pstate_speed, sg_host_set_pstate, sg_host_get_speed;
 * - a computation (SMPI_SAMPLE_FLOPS) timed at the selected pstate's speed.
 */
#include <mpi.h>
#include <smpi/smpi.h>
#include <simgrid/host.h>
#include <stdio.h>

int main(int argc, char* argv[])
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  unsigned long pstates = sg_host_get_nb_pstates(sg_host_self());
  printf("[%.6f] [rank %d] Pstates: %lu; Powers: %.0f", MPI_Wtime(), rank, pstates,
         sg_host_get_pstate_speed(sg_host_self(), 0));
  for (unsigned long i = 1; i < pstates; i++)
    printf(", %.0f", sg_host_get_pstate_speed(sg_host_self(), i));
  printf("\n");
  for (unsigned long i = 0; i < pstates; i++) {
    sg_host_set_pstate(sg_host_self(), i);
    printf("[%.6f] [rank %d] Current pstate: %lu; Current power: %.0f\n", MPI_Wtime(), rank,
           sg_host_get_pstate(sg_host_self()), sg_host_get_speed(sg_host_self()));
    SMPI_SAMPLE_FLOPS(1e9) {}
    printf("[%.6f] [rank %d] computed 1e9 flops\n", MPI_Wtime(), rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("[%.6f] [rank %d] done\n", MPI_Wtime(), rank);
  MPI_Finalize();
  return 0;
}
