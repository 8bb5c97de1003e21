/*
 * A MOSP-style program in miniature: it owns its graph (CSR, K weights per edge), its reverse
 * graph and its trees, applies each batch itself and calls sospUpdateCpu per objective, exactly
 * as a codebase with sospUpdateCpu.h does. Linked with update_on_dyng.cpp, those calls run on
 * libdyng. The graph and the first batch are the thesis example; a second batch raises the weight
 * of a tree edge, and the updated trees are compared with a static solve of the final graph.
 */
#include "sospUpdateCpu.h"

#include <cstdio>
#include <vector>

namespace {

constexpr int K = 3;

struct Edge {
  int from, to;
  int w[K];
};

struct Batch {
  std::vector<Edge> inserts;
  std::vector<std::pair<int, int>> deletes;
};

/* One objective's CSR and its reverse, built from an edge list (rows in list order). */
struct Views {
  std::vector<int> rowPtr, colInd, weights, inRowPtr, inColInd, inWeights;
  HostCsr out, in;

  Views(int n, const std::vector<Edge> &edges, int k) {
    const int m = static_cast<int>(edges.size());
    rowPtr.assign(n + 1, 0);
    inRowPtr.assign(n + 1, 0);
    for (const Edge &e : edges) {
      rowPtr[e.from + 1]++;
      inRowPtr[e.to + 1]++;
    }
    for (int v = 0; v < n; v++) {
      rowPtr[v + 1] += rowPtr[v];
      inRowPtr[v + 1] += inRowPtr[v];
    }
    colInd.resize(m);
    weights.resize(m);
    inColInd.resize(m);
    inWeights.resize(m);
    std::vector<int> fill(rowPtr.begin(), rowPtr.end() - 1), inFill(inRowPtr.begin(), inRowPtr.end() - 1);
    for (const Edge &e : edges) {
      colInd[fill[e.from]] = e.to;
      weights[fill[e.from]++] = e.w[k];
      inColInd[inFill[e.to]] = e.from;
      inWeights[inFill[e.to]++] = e.w[k];
    }
    out = HostCsr{n, m, rowPtr.data(), colInd.data(), weights.data()};
    in = HostCsr{n, m, inRowPtr.data(), inColInd.data(), inWeights.data()};
  }
};

/* Deletions first (the first copy of each pair), then upserts; returns, per objective, the
 * insertions that raised an existing edge's weight. */
std::vector<std::vector<std::pair<int, int>>> apply(std::vector<Edge> &edges, const Batch &b) {
  const std::vector<Edge> before = edges;
  for (const auto &d : b.deletes) {
    for (size_t i = 0; i < edges.size(); i++) {
      if (edges[i].from == d.first && edges[i].to == d.second) {
        edges.erase(edges.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  for (const Edge &ins : b.inserts) {
    bool found = false;
    for (Edge &e : edges) {
      if (e.from == ins.from && e.to == ins.to) {
        e = ins;
        found = true;
        break;
      }
    }
    if (!found) {
      edges.push_back(ins);
    }
  }
  std::vector<std::vector<std::pair<int, int>>> raised(K);
  for (const Edge &ins : b.inserts) {
    for (const Edge &old : before) {
      if (old.from == ins.from && old.to == ins.to) {
        for (const Edge &now : edges) {
          if (now.from == ins.from && now.to == ins.to) {
            for (int k = 0; k < K; k++) {
              if (now.w[k] > old.w[k]) raised[k].push_back({ins.from, ins.to});
            }
            break;
          }
        }
        break;
      }
    }
  }
  return raised;
}

long long maxWeight(const std::vector<Edge> &a, const std::vector<Edge> &b, int k) {
  long long w = 1;
  for (const Edge &e : a) w = e.w[k] > w ? e.w[k] : w;
  for (const Edge &e : b) w = e.w[k] > w ? e.w[k] : w;
  return w;
}

void print(const char *what, int k, const std::vector<long long> &d, const std::vector<int> &p, int invalidated) {
  std::printf("%s objective %d: distances", what, k);
  for (long long x : d) std::printf(" %lld", x);
  std::printf(" | parents");
  for (int x : p) std::printf(" %d", x);
  std::printf(" | invalidated %d\n", invalidated);
}

} // namespace

int main() {
  const int n = 7, source = 0;
  std::vector<Edge> edges = {{0, 1, {2, 1, 5}},  {0, 2, {4, 1, 1}},  {1, 3, {2, 4, 2}},  {2, 1, {10, 15, 2}},
                             {2, 3, {5, 16, 3}}, {3, 4, {1, 1, 1}},  {4, 1, {4, 3, 2}},  {4, 5, {1, 2, 2}},
                             {4, 6, {5, 6, 2}},  {5, 6, {1, 1, 1}}};
  const Batch thesis = {{{3, 5, {10, 2, 12}}, {1, 5, {12, 1, 14}}}, {{1, 3}, {4, 1}}};
  const Batch raise = {{{0, 2, {9, 1, 1}}}, {}}; /* 0->2 in objective 0: 4 -> 9 */

  SospWorkspace workspace;
  workspace.reserve(n);
  std::vector<std::vector<long long>> dist(K, std::vector<long long>(n));
  std::vector<std::vector<int>> parent(K, std::vector<int>(n));
  for (int k = 0; k < K; k++) {
    Views g(n, edges, k);
    long long sum = 0;
    for (int e = 0; e < g.out.numberOfEdges; e++) sum += g.weights[e];
    if (!sospFromScratchCpu(g.out, source, defaultDelta(g.out.numberOfEdges, n, sum), maxWeight(edges, {}, k),
                            workspace, dist[k].data(), parent[k].data())) {
      return 1;
    }
  }

  bool ok = true;
  for (const Batch *b : {&thesis, &raise}) {
    const std::vector<Edge> before = edges;
    const auto raised = apply(edges, *b);
    std::vector<int> heads;
    for (const Edge &e : b->inserts) heads.push_back(e.to);
    for (int k = 0; k < K; k++) {
      std::vector<int> from, to;
      for (const auto &d : b->deletes) {
        from.push_back(d.first);
        to.push_back(d.second);
      }
      for (const auto &r : raised[k]) {
        from.push_back(r.first);
        to.push_back(r.second);
      }
      long long sum = 0;
      for (const Edge &e : before) sum += e.w[k];
      const HostChanges changes{from.data(), to.data(), static_cast<int>(from.size()), heads.data(),
                                static_cast<int>(heads.size())};
      Views g(n, edges, k);
      SospStats stats;
      if (!sospUpdateCpu(g.out, g.in, changes, source, defaultDelta(static_cast<long long>(before.size()), n, sum),
                         maxWeight(before, b->inserts, k), workspace, dist[k].data(), parent[k].data(), &stats)) {
        return 1;
      }
      if (b == &thesis) {
        print("thesis", k, dist[k], parent[k], stats.invalidated);
      } else {
        std::vector<long long> d(n);
        std::vector<int> p(n);
        sospFromScratchCpu(g.out, source, 1, maxWeight(edges, {}, k), workspace, d.data(), p.data());
        print("raised", k, dist[k], parent[k], stats.invalidated);
        ok = ok && d == dist[k] && p == parent[k];
      }
    }
  }
  std::printf("updates equal static solves: %s\n", ok ? "yes" : "no");
  return ok ? 0 : 1;
}
