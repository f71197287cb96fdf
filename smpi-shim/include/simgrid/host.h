/* simgrid/host.h — the simulated hosts of the platform (smpi-rs). */
#ifndef SMPI_RS_SIMGRID_HOST_H
#define SMPI_RS_SIMGRID_HOST_H

#include <stddef.h>
#include <simgrid/forward.h>

SG_BEGIN_DECL

/* The calling rank's host (NULL outside of any rank). */
sg_host_t sg_host_self(void);
const char* sg_host_self_get_name(void);
/* NULL when the platform has no host of that name. */
sg_host_t sg_host_by_name(const char* name);
size_t sg_host_count(void);

const char* sg_host_get_name(const_sg_host_t host);
/* Peak speed of one core in the current pstate, in flop/s (a speed profile's
   scale is not included: see sg_host_get_available_speed). */
double sg_host_get_speed(const_sg_host_t host);
/* The fraction of its peak speed a speed profile gives the host now (1 without one). */
double sg_host_get_available_speed(const_sg_host_t host);
/* Pstates: the speeds given as speed="100Mf,50Mf,20Mf" in the platform. */
unsigned long sg_host_get_nb_pstates(const_sg_host_t host);
unsigned long sg_host_get_pstate(const_sg_host_t host);
void sg_host_set_pstate(sg_host_t host, unsigned long pstate);
double sg_host_get_pstate_speed(const_sg_host_t host, unsigned long pstate_index);
/* The older name of sg_host_get_speed (SimGrid before 3.32). */
double sg_host_speed(const_sg_host_t host);
int sg_host_core_count(const_sg_host_t host);

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_HOST_H */
