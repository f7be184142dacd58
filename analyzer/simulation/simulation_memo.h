// Simulated device maps remembered by what they depend on: the module tree (names, classes,
// tensor sizes, ties, dtype) and the request. An editor's edit rarely changes the tree, and
// ranking findings simulates 7 placements per model class (placement_rank.cpp), the largest part
// of an analysis; a long-lived process (the editor server) keeps one memo between checks.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "simulation/device_map_simulation.h"

namespace devlint {

class SimulationMemo {
public:
  // simulate_device_map(tree, request).map, from the memo when the same tree and request were
  // simulated before.
  DeviceMap map_for(const ModuleTree &tree, const SimulationRequest &request);

  size_t simulations_run() const { return simulations_run_; }

private:
  static constexpr size_t kMaxEntries = 64; // a few models x 7 placements
  std::mutex mutex_;
  std::deque<std::pair<std::string, DeviceMap>> entries_; // newest last
  size_t simulations_run_ = 0;
};

// Everything simulate_device_map reads of `tree` and `request`, as text: equal texts, equal maps.
std::string simulation_fingerprint(const ModuleTree &tree, const SimulationRequest &request);

} // namespace devlint
