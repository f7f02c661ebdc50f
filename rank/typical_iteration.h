// The traced iteration a rank writes (runtime/protocol/traced_iteration.h): every rank's measured
// iteration times gathered, so that all of them keep the same one, the iteration nearest the run's
// median; the others' events dropped from the recorder.
#pragma once

#include <c10/core/Device.h>

#include <optional>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/sample_log.h"
#include "runtime/protocol/trace_recorder.h"
#include "runtime/protocol/traced_iteration.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

// Nothing, and no collective, where the run traces nothing; every rank of `world` calls it
// otherwise (its samples: the measured iterations, in order).
std::optional<TracedIteration> keep_typical_iteration(Communicator& world,
                                                      const WorkerConfig& config,
                                                      const SampleLog& log, TraceRecorder& trace,
                                                      c10::Device device);

}  // namespace runtime
