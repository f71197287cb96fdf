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

#ifdef __cplusplus
}
#endif

#endif /* SMPI_RS_SMPI_H */
