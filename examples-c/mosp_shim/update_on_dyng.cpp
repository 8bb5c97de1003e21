/*
 * sospUpdateCpu and sospFromScratchCpu on libdyng: a MOSP-style codebase replaces its
 * sospUpdateCpu.cpp by this file and links libdyng (`dyng::dyng` in CMake); everything else,
 * its header included, stays. The caller's arrays (graph, reverse graph, trees) are borrowed for
 * each call, never copied; dyng's scratch memory stays with one resources handle per calling
 * thread, created on that thread's first call (its thread count: OMP_NUM_THREADS where set, else
 * all cores). SospWorkspace::reserve allocates dyng's workspace for that handle; its own arrays
 * stay empty.
 */
#include "sospUpdateCpu.h"

#include <dyng.h>

#include <climits>
#include <cstdio>

namespace {

struct ThreadResources {
  dyng_resources_t *res;
  ~ThreadResources() { dyng_resources_free(res); }
};

void report() {
  char message[1024];
  dyng_last_error_message(message, sizeof message);
  std::fprintf(stderr, "Error: %s\n", message);
}

/* The thread's handle. Its owner is constructed only after the first dyng call, so that its
 * destructor, registered after the library's own thread-local state, runs before that state goes
 * (thread-local destructors run in the reverse order of their registration). */
const dyng_resources_t *threadResources() {
  thread_local dyng_resources_t *res = nullptr;
  if (res == nullptr) {
    if (dyng_resources_create(nullptr, &res) != DYNG_OK) {
      report();
      return nullptr;
    }
    thread_local ThreadResources owner{res};
    (void)owner;
  }
  return res;
}

dyng_csr_t descriptor(const HostCsr &g) {
  dyng_csr_t d;
  d.n = static_cast<size_t>(g.numberOfNodes);
  d.m = static_cast<size_t>(g.numberOfEdges);
  d.k = 1;
  d.row_ptr = g.rowPtr;
  d.col_ind = g.colInd;
  d.weights = g.weights;
  return d;
}

void copyStats(const dyng_update_stats_t &from, SospStats *to) {
  if (to != nullptr) {
    to->invalidated = static_cast<int>(from.invalidated);
    to->iterations = static_cast<int>(from.iterations);
    to->epochs = static_cast<int>(from.epochs);
    to->pushes = from.pushes;
    to->packedParents = from.packed_parents;
  }
}

dyng_update_stats_t freshStats() {
  dyng_update_stats_t s = dyng_update_stats_t();
  s.struct_size = sizeof s;
  return s;
}

} // namespace

/* Where the originals allocate their workspace: dyng's (in the pool of this thread's resources
 * handle) is allocated here too, so the first update does not pay for it. */
void SospWorkspace::reserve(int requested) {
  if (requested > capacity) {
    const dyng_resources_t *res = threadResources();
    if (res != nullptr && dyng_reserve_workspace(res, static_cast<size_t>(requested)) != DYNG_OK) {
      report();
    }
    capacity = requested;
  }
}

int SospWorkspace::nextGeneration() {
  generation = generation == INT_MAX ? 1 : generation + 1;
  return generation;
}

long long defaultDelta(long long numberOfEdges, int numberOfNodes, long long weightSum) {
  if (numberOfEdges <= 0 || numberOfNodes <= 0) {
    return 1;
  }
  const double averageWeight = static_cast<double>(weightSum) / static_cast<double>(numberOfEdges);
  const double averageDegree = static_cast<double>(numberOfEdges) / numberOfNodes;
  const long long delta = static_cast<long long>(32.0 * averageWeight / averageDegree);
  return delta > 1 ? delta : 1;
}

bool sospUpdateCpu(const HostCsr &out, const HostCsr &in, const HostChanges &changes, int source,
                   long long delta, long long maxWeight, SospWorkspace &workspace,
                   long long *distances, int *parent, SospStats *stats) {
  if (stats != nullptr) {
    *stats = SospStats();
  }
  if (out.numberOfNodes == 0) {
    return true;
  }
  if (delta <= 0) {
    return false;
  }
  workspace.reserve(out.numberOfNodes);
  const dyng_resources_t *res = threadResources();
  if (res == nullptr) {
    return false;
  }
  const dyng_csr_t graph = descriptor(out), reverse = descriptor(in);
  dyng_update_stats_t s = freshStats();
  if (dyng_sosp_update_arrays(res, &graph, &reverse, changes.changedFrom, changes.changedTo,
                              static_cast<size_t>(changes.numberOfChanged), changes.insertHeads,
                              static_cast<size_t>(changes.numberOfInsertHeads), source, delta,
                              maxWeight, distances, parent, &s) != DYNG_OK) {
    report();
    return false;
  }
  copyStats(s, stats);
  return true;
}

bool sospFromScratchCpu(const HostCsr &out, int source, long long delta, long long maxWeight,
                        SospWorkspace &workspace, long long *distances, int *parent,
                        SospStats *stats) {
  if (stats != nullptr) {
    *stats = SospStats();
  }
  if (out.numberOfNodes == 0) {
    return true;
  }
  if (delta <= 0 || source < 0 || source >= out.numberOfNodes) {
    return false;
  }
  workspace.reserve(out.numberOfNodes);
  const dyng_resources_t *res = threadResources();
  if (res == nullptr) {
    return false;
  }
  const dyng_csr_t graph = descriptor(out);
  dyng_update_stats_t s = freshStats();
  if (dyng_sosp_solve_arrays(res, &graph, source, delta, maxWeight, distances, parent, &s) !=
      DYNG_OK) {
    report();
    return false;
  }
  copyStats(s, stats);
  return true;
}
