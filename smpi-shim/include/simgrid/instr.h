/* simgrid/instr.h — SimGrid's tracing API (smpi-rs): only the category of a
 * rank's next operations. Tracing itself (smpirun -trace) is not implemented
 * yet: the category is recorded, nothing is written. */
#ifndef SMPI_RS_SIMGRID_INSTR_H
#define SMPI_RS_SIMGRID_INSTR_H

#include <simgrid/forward.h>

SG_BEGIN_DECL

void TRACE_smpi_set_category(const char* category);

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_INSTR_H */
