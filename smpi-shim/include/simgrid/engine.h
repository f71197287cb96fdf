/* simgrid/engine.h — the simulation engine seen from a rank (smpi-rs). */
#ifndef SMPI_RS_SIMGRID_ENGINE_H
#define SMPI_RS_SIMGRID_ENGINE_H

#include <simgrid/forward.h>

SG_BEGIN_DECL

/* The simulated time now, in seconds. Unlike MPI_Wtime, it injects no
 * computation time and costs nothing. */
double simgrid_get_clock(void);

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_ENGINE_H */
