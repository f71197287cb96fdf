/* simgrid/forward.h — the opaque handle types of SimGrid's C API (smpi-rs).
 * A program only passes them back to the sg_* functions. */
#ifndef SMPI_RS_SIMGRID_FORWARD_H
#define SMPI_RS_SIMGRID_FORWARD_H

#include <xbt/base.h>

typedef struct s4u_Actor s4u_Actor;
typedef struct s4u_Host s4u_Host;

typedef s4u_Actor* sg_actor_t;
typedef const s4u_Actor* const_sg_actor_t;
typedef s4u_Host* sg_host_t;
typedef const s4u_Host* const_sg_host_t;

/* Actor identifiers (pids): SMPI's rank r is actor r + 1. */
typedef long aid_t;

#endif /* SMPI_RS_SIMGRID_FORWARD_H */
