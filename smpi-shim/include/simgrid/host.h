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
/* Speed of one core, in flop/s, as the platform gives it. */
double sg_host_get_speed(const_sg_host_t host);
/* The older name of sg_host_get_speed (SimGrid before 3.32). */
double sg_host_speed(const_sg_host_t host);
int sg_host_core_count(const_sg_host_t host);

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_HOST_H */
