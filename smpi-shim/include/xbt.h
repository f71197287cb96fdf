/* xbt.h — SimGrid's toolbox (smpi-rs): the parts this project implements,
 * allocation (xbt/sysdep.h), logging (xbt/log.h) and assertions
 * (xbt/asserts.h). SimGrid's dynar, dict, config and str modules are not
 * provided. */
#ifndef SMPI_RS_XBT_H
#define SMPI_RS_XBT_H

#include <xbt/asserts.h>
#include <xbt/base.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

#endif /* SMPI_RS_XBT_H */
