/*
 * The per-objective interface of MOSP-style codebases (MOSP-OpenMP's sospUpdateCpu.h), as its
 * contract reads: one objective's CSR views, the changes of a batch as that objective sees them,
 * the counters, the scratch workspace, and the update and static-solve calls. A codebase with
 * this interface keeps its own header; update_on_dyng.cpp compiles against either.
 */
#ifndef SOSP_UPDATE_CPU_H
#define SOSP_UPDATE_CPU_H

#include <vector>

/* A CSR graph with one weight per edge: row u is colInd[rowPtr[u] .. rowPtr[u + 1]). For the
 * reverse graph, colInd holds the tails of the edges into each vertex. */
struct HostCsr {
  int numberOfNodes = 0;
  int numberOfEdges = 0;
  const int *rowPtr = nullptr;
  const int *colInd = nullptr;
  const int *weights = nullptr;
};

/* The batch as one objective sees it. changedFrom/To: every deletion, then every insertion that
 * raised this objective's weight of an edge the graph had; insertHeads: the heads of all
 * insertions. */
struct HostChanges {
  const int *changedFrom = nullptr;
  const int *changedTo = nullptr;
  int numberOfChanged = 0;
  const int *insertHeads = nullptr;
  int numberOfInsertHeads = 0;
};

/* Counters of one update or solve. */
struct SospStats {
  int invalidated = 0;       /* vertices whose tree path held a changed tree edge */
  int iterations = 0;        /* push rounds */
  int epochs = 0;            /* far-pile threshold raises */
  long long pushes = 0;      /* vertex expansions */
  bool packedParents = true; /* false: distance-only words, parents recovered */
};

/* Scratch space for graphs of up to `capacity` vertices, reserved once and reused. */
struct SospWorkspace {
  void reserve(int capacity);
  int nextGeneration();

  int capacity = 0;
  int generation = 0;
  std::vector<unsigned long long> packed;
  std::vector<int> stamp;
  std::vector<char> inFar;
  std::vector<char> state;
  std::vector<int> nearA, nearB, far, far2, candidates, frontier;
};

/* 32 x average weight / average out-degree, at least 1 (1 without edges or vertices). */
long long defaultDelta(long long numberOfEdges, int numberOfNodes, long long weightSum);

/* distances/parent: the canonical tree of the old graph in, of the graph `out` (whose reverse is
 * `in`) out; maxWeight: the objective's largest weight before and after the batch; delta > 0.
 * Returns false (with a message on stderr) on invalid input. */
bool sospUpdateCpu(const HostCsr &out, const HostCsr &in, const HostChanges &changes, int source,
                   long long delta, long long maxWeight, SospWorkspace &workspace,
                   long long *distances, int *parent, SospStats *stats = nullptr);

/* The canonical tree of `out` from `source`. */
bool sospFromScratchCpu(const HostCsr &out, int source, long long delta, long long maxWeight,
                        SospWorkspace &workspace, long long *distances, int *parent,
                        SospStats *stats = nullptr);

#endif /* SOSP_UPDATE_CPU_H */
