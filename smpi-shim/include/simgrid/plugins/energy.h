/* simgrid/plugins/energy.h — SimGrid's host energy plugin (smpi-rs).
 *
 * On with --cfg=plugin:host_energy (or sg_host_energy_plugin_init() at time 0). A host's
 * power comes from its properties wattage_per_state ("Idle:Epsilon:AllCores" per pstate, or
 * "Idle:AllCores") and wattage_off, in watts; energies are in joules. */
#ifndef SMPI_RS_SIMGRID_PLUGINS_ENERGY_H
#define SMPI_RS_SIMGRID_PLUGINS_ENERGY_H

#include <simgrid/forward.h>

SG_BEGIN_DECL

void sg_host_energy_plugin_init(void);
/* Brings every host's energy up to now. */
void sg_host_energy_update_all(void);
/* The energy the host consumed so far (its wattage_per_state is required). */
double sg_host_get_consumed_energy(const_sg_host_t host);
/* Idle power of pstate 0. */
double sg_host_get_idle_consumption(const_sg_host_t host);
double sg_host_get_idle_consumption_at(const_sg_host_t host, int pstate);
/* Power at an epsilon load (all cores almost idle). */
double sg_host_get_wattmin_at(const_sg_host_t host, int pstate);
/* Power with all cores fully loaded. */
double sg_host_get_wattmax_at(const_sg_host_t host, int pstate);
/* wattmax - wattmin. */
double sg_host_get_power_range_slope_at(const_sg_host_t host, int pstate);
/* The power of the host now (its wattage_per_state is required). */
double sg_host_get_current_consumption(const_sg_host_t host);

#define MSG_host_energy_plugin_init() sg_host_energy_plugin_init()
#define MSG_host_get_consumed_energy(host) sg_host_get_consumed_energy(host)
#define MSG_host_get_idle_consumption_at(host, pstate) sg_host_get_idle_consumption_at((host), (pstate))
#define MSG_host_get_wattmin_at(host, pstate) sg_host_get_wattmin_at((host), (pstate))
#define MSG_host_get_wattmax_at(host, pstate) sg_host_get_wattmax_at((host), (pstate))
#define MSG_host_get_power_range_slope_at(host, pstate) sg_host_get_power_range_slope_at((host), (pstate))
#define MSG_host_get_current_consumption(host) sg_host_get_current_consumption(host)

SG_END_DECL

#endif /* SMPI_RS_SIMGRID_PLUGINS_ENERGY_H */
