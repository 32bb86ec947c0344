#pragma once
// What a RunRecorder needs from a scenario, shared by the simulator and the load generator:
// the per-request SLOs that define goodput and the phases (one per step of a `steps` arrival
// process, one for `poisson`, none for a trace) that per-phase goodput is reported over.

#include <vector>

#include "core/types.h"
#include "report/run_recorder.h"
#include "workload/scenario.h"

namespace spillway {

/// The scenario's `slo` section.
GoodputSlo SloOf(const Scenario& scenario);

/// Phases in seconds from the start of the run, with their nominal arrival rates. With
/// `until_s` (the load generator's --duration-limit-s) the phases are cut there: a phase that
/// starts at or after it is left out, one that spans it ends at it.
std::vector<RunRecorder::Phase> PhasesOf(const Scenario& scenario, Seconds until_s = kNever);

}  // namespace spillway
