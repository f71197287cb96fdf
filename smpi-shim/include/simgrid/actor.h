/* simgrid/actor.h — the calling rank as a SimGrid actor (smpi-rs). As in SMPI,
 * rank r is the actor named "r", with pid r + 1 and parent pid 0. */
#ifndef SMPI_RS_SIMGRID_ACTOR_H
#define SMPI_RS_SIMGRID_ACTOR_H

#include <simgrid/forward.h>

SG_BEGIN_DECL

/* The calling rank's actor (NULL outside of any rank). */
sg_actor_t sg_actor_self(void);
aid_t sg_actor_self_get_pid(void);
aid_t sg_actor_self_get_ppid(void);
const char* sg_actor_self_get_name(void);

aid_t sg_actor_get_pid(const_sg_actor_t actor);
aid_t sg_actor_get_ppid(const_sg_actor_t actor);
const char* sg_actor_get_name(const_sg_actor_t actor);
sg_host_t sg_actor_get_host(const_sg_actor_t actor);

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_ACTOR_H */
