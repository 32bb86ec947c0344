#pragma once
// What a RunRecorder needs from a scenario, shared by the simulator and the load generator:
// the per-request SLOs that define goodput and the phases (one per step of a `steps` arrival
// process, one for `poisson`, none for a trace) that per-phase goodput is reported over.

#include <vector>

#include "report/run_recorder.h"
#include "workload/scenario.h"

namespace spillway {

/// The scenario's `slo` section.
GoodputSlo SloOf(const Scenario& scenario);

/// Phases in seconds from the start of the run, with their nominal arrival rates.
std::vector<RunRecorder::Phase> PhasesOf(const Scenario& scenario);

}  // namespace spillway
