// dyng: the persistent cooperative SOSP kernel (reference-behaviour §6.4).
//
// One cooperative launch runs a whole update (or a static solve): pack the old tree, invalidate
// the subtrees of changed tree edges by pointer jumping, pull every candidate's best in-edge, run
// near-far propagation, unpack. Every decision is taken on the device; phases are separated by
// grid-wide barriers. Every thread runs the same control flow and keeps its own copies of the loop
// counters, so all threads agree without broadcasting; thread 0 writes them to the control block.
//
// Self-contained on purpose: NVRTC compiles it at run time without any header (the NVRTC wheel
// ships no cooperative_groups.h), so the grid barrier and the warp-aggregated append are written
// with intrinsics. The Rust mirror of `Params` and `Control` is src/cuda/engine.rs; keep both
// layouts in step.
//
// Row u of the out-rows is outBounds[u * outStride] .. outBounds[u * outStride + 1] of outCol and
// outW (the in-rows likewise): stride 1 for a compact CSR (a row pointer of n + 1 entries: the
// combined graph, a caller's CSR), 2 for the (start, end) pairs of a resident graph's device
// mirror, whose rows have room to grow (src/graph/rows.rs).

typedef long long i64;
typedef unsigned long long u64;

#define PACKED_INF 0xFFFFFFFFFFFFFFFFull
#define DISTANCE_INF 2305843009213693951LL
#define INT_MAX_ 2147483647
#define INT_MIN_ (-2147483647 - 1)
#define FULL_MASK 0xFFFFFFFFu

// The control block: zeroed by the host before each launch, except `minimum` = PACKED_INF.
struct Control {
    int listCount;
    int frontierCount;
    int nearCount;
    int nextCount;
    int farCount;
    int far2Count;
    int active[3];
    int overflow;     // an input distance is negative or above the bound
    int invalidated;  // candidates that came from invalidation
    int rounds;       // pointer-jumping rounds
    int iterations;
    int epochs;
    int generation;   // the last generation used
    int notConverged; // pointer jumping did not converge: the input tree has a parent cycle
    int affected;     // vertices whose distance or parent changed
    int reserved;
    unsigned barrierCount;       // blocks arrived at the current grid barrier
    unsigned barrierGeneration;  // completed grid barriers
    i64 pushes;
    u64 minimum;
};

// Kernel parameters, passed by value. Pointers first, then 64-bit scalars, then 32-bit ones, so
// the C layout has no hidden padding and the Rust mirror is a plain #[repr(C)] struct.
struct Params {
    const int* outBounds;
    const int* outCol;
    const int* outW;
    const int* inBounds;
    const int* inTails;
    const int* inW;
    const int* changedFrom;
    const int* changedTo;
    const int* insertHeads;
    i64* dist;
    int* parent;
    u64* word;
    int* stamp;
    int* inFar;
    int* flag;
    int* ancestor;
    int* listA;
    int* listB;
    int* farA;
    int* farB;
    int* candidates;
    int* frontier;
    Control* control;
    u64 maxDistance;  // (n - 1) * maxWeight: no tree distance is larger (CUDA packing rule)
    u64 delta;
    int n;
    int source;
    int numChanged;
    int numHeads;
    int bits;         // parent field width; 0 = distance-only mode
    int fromScratch;
    int maxRounds;
    int firstGeneration;
    int outStride;    // 1: a row pointer; 2: (start, end) pairs
    int inStride;
};

__device__ __forceinline__ u64 noneField(int bits) { return (1ull << bits) - 1ull; }

__device__ __forceinline__ u64 pack(u64 d, int p, int bits) {
    if (bits == 0) return d;
    u64 field = p < 0 ? noneField(bits) : (u64)p;
    return (d << bits) | field;
}

__device__ __forceinline__ u64 distOf(u64 word, int bits) { return word >> bits; }

// Atomically takes `v` for generation `g`; true iff it was not yet taken in `g` (duplicate-free
// lists without per-list resets).
__device__ __forceinline__ bool claim(int* stamp, int v, int g) { return atomicExch(&stamp[v], g) != g; }

// Warp-aggregated list append: the converged lanes share one atomicAdd on the counter (a
// non-aggregated append was 30-55% slower in the original). The lowest active lane adds the
// group size; every lane takes base + its rank among the active lanes.
__device__ __forceinline__ int appendIndex(int* counter) {
    const unsigned active = __activemask();
    const unsigned lane = threadIdx.x & 31;
    const int leader = __ffs(active) - 1;
    const int rank = __popc(active & ((1u << lane) - 1u));
    int base = 0;
    if ((int)lane == leader) base = atomicAdd(counter, __popc(active));
    base = __shfl_sync(active, base, leader);
    return base + rank;
}

// Grid-wide barrier for a cooperative launch (all blocks are co-resident, so spinning is safe).
// Thread 0 of each block reads the barrier generation, arrives, and the last block to arrive
// resets the count and opens the next generation. The fences make every write before the barrier
// visible to every block after it (readers use __ldcg, bypassing the non-coherent L1).
__device__ __forceinline__ void gridSync(Control* c) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* generation = &c->barrierGeneration;
        const unsigned seen = *generation;
        __threadfence();
        if (atomicAdd(&c->barrierCount, 1u) == gridDim.x - 1) {
            atomicExch(&c->barrierCount, 0u);
            __threadfence();
            atomicAdd(&c->barrierGeneration, 1u);
        } else {
            while (*generation == seen) __nanosleep(32);
        }
        __threadfence();
    }
    __syncthreads();
}

// Warp minimum, then one atomicMin per warp. Must be reached by every lane of the warp.
__device__ __forceinline__ void minimumInto(u64* target, u64 value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        u64 other = __shfl_down_sync(FULL_MASK, value, offset);
        value = other < value ? other : value;
    }
    if ((threadIdx.x & 31) == 0 && value != PACKED_INF) atomicMin(target, value);
}

// Warp sum, then one atomicAdd per warp. Must be reached by every lane of the warp.
__device__ __forceinline__ void sumInto(int* target, int value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(FULL_MASK, value, offset);
    if ((threadIdx.x & 31) == 0 && value != 0) atomicAdd(target, value);
}

__device__ __forceinline__ u64 saturatingAdd(u64 a, u64 b) { return a > ~0ull - b ? ~0ull : a + b; }

// The smallest word over a list, reduced into control.minimum (INF words are ignored by the
// unsigned minimum, INF itself is never written).
__device__ void listMinimum(const int* list, int count, Control* c, unsigned tid, unsigned stride, const u64* word) {
    u64 local = PACKED_INF;
    for (unsigned i = tid; i < (unsigned)count; i += stride) {
        u64 w = __ldcg(&word[__ldcg(&list[i])]);
        local = w < local ? w : local;
    }
    minimumInto(&c->minimum, local);
}

// Near/far split of `list`: below the threshold -> near (claimed for `gen`); otherwise to the far
// pile. With `refile` (the far re-split) vertices stay flagged and go to `farOut` directly.
__device__ void split(const Params& p, const int* list, int count, u64 threshold, int gen, int* near, int* nearCount,
                      int* farOut, int* farOutCount, bool refile, unsigned tid, unsigned stride) {
    for (unsigned i = tid; i < (unsigned)count; i += stride) {
        int v = __ldcg(&list[i]);
        u64 w = __ldcg(&p.word[v]);
        bool isNear = w != PACKED_INF && distOf(w, p.bits) < threshold;
        if (isNear) {
            if (refile) p.inFar[v] = 0;
            if (claim(p.stamp, v, gen)) near[appendIndex(nearCount)] = v;
        } else if (refile || atomicExch(&p.inFar[v], 1) == 0) {
            farOut[appendIndex(farOutCount)] = v;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) sospPersistentKernel(Params p) {
    Control* c = p.control;
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned stride = gridDim.x * blockDim.x;
    const unsigned n = (unsigned)p.n;
    const int bits = p.bits;
    int gen = p.firstGeneration;

    if (p.fromScratch) {
        for (unsigned v = tid; v < n; v += stride) p.word[v] = (int)v == p.source ? pack(0, -1, bits) : PACKED_INF;
        if (tid == 0) {
            p.frontier[0] = p.source;
            c->frontierCount = 1;
        }
        gridSync(c);
    } else {
        // P1: pack the old tree; roots are heads of changed edges that were their tree edge.
        int overflow = 0;
        for (unsigned v = tid; v < n; v += stride) {
            i64 d = p.dist[v];
            int par = p.parent[v];
            u64 w;
            if (d >= DISTANCE_INF / 2) {
                w = PACKED_INF;
            } else if (d < 0 || (u64)d > p.maxDistance) {
                overflow = 1;
                w = PACKED_INF;
            } else {
                w = pack((u64)d, par, bits);
            }
            p.word[v] = w;
            p.ancestor[v] = par;
        }
        if (overflow) atomicExch(&c->overflow, 1);
        for (unsigned i = tid; i < (unsigned)p.numChanged; i += stride) {
            int to = p.changedTo[i];
            if (p.parent[to] == p.changedFrom[i]) p.flag[to] = 1;
        }
        gridSync(c);
        // Every thread sees the same flag after the barrier, so all leave together.
        if (__ldcg(&c->overflow)) return;

        // P2: pointer jumping. Invariant: flag 1 => a root is among v and its ancestors;
        // flag 0 => no root strictly between v and ancestor[v]. Three `active` slots let thread 0
        // clear the next round's slot while others still read this round's, without a barrier.
        if (p.numChanged > 0) {
            bool converged = false;
            for (int round = 0; round < p.maxRounds; ++round) {
                if (tid == 0) {
                    c->active[(round + 1) % 3] = 0;
                    c->rounds = round + 1;
                }
                bool jumping = false;
                for (unsigned v = tid; v < n; v += stride) {
                    int a = __ldcg(&p.ancestor[v]);
                    if (a < 0 || __ldcg(&p.flag[v])) continue;
                    if (__ldcg(&p.flag[a])) {
                        p.flag[v] = 1;
                    } else {
                        int aa = __ldcg(&p.ancestor[a]);
                        p.ancestor[v] = aa;
                        jumping |= aa >= 0;
                    }
                }
                if (__any_sync(FULL_MASK, jumping) && (threadIdx.x & 31) == 0) atomicExch(&c->active[round % 3], 1);
                gridSync(c);
                if (__ldcg(&c->active[round % 3]) == 0) {
                    converged = true;
                    break;
                }
            }
            // A parent cycle without a root keeps jumping forever: report it like the host's walk.
            if (!converged) {
                if (tid == 0) c->notConverged = 1;
                return;
            }
        }

        // P3: invalidated vertices lose their word and become the first candidates.
        ++gen;
        for (unsigned v = tid; v < n; v += stride) {
            if (__ldcg(&p.flag[v])) {
                p.flag[v] = 0;
                p.word[v] = PACKED_INF;
                p.stamp[v] = gen;
                p.candidates[appendIndex(&c->listCount)] = (int)v;
            }
        }
        gridSync(c);
        // Read before anyone appends insertion heads (hence the second barrier).
        const int invalidated = __ldcg(&c->listCount);
        gridSync(c);
        if (tid == 0) c->invalidated = invalidated;
        for (unsigned i = tid; i < (unsigned)p.numHeads; i += stride) {
            int v = p.insertHeads[i];
            if (v != p.source && claim(p.stamp, v, gen)) p.candidates[appendIndex(&c->listCount)] = v;
        }
        gridSync(c);

        // P4: pull. Every candidate takes its best in-edge; a strict distance decrease puts it on
        // the frontier. Candidates above maxDistance can never be shortest and would not fit.
        ++gen;
        const int listCount = __ldcg(&c->listCount);
        for (unsigned i = tid; i < (unsigned)listCount; i += stride) {
            int v = __ldcg(&p.candidates[i]);
            u64 cur = __ldcg(&p.word[v]);
            u64 best = cur;
            const int* row = p.inBounds + (i64)v * p.inStride;
            for (int e = row[0]; e < row[1]; ++e) {
                int u = p.inTails[e];
                u64 wu = __ldcg(&p.word[u]);
                if (wu == PACKED_INF) continue;
                u64 nd = distOf(wu, bits) + (u64)p.inW[e];
                if (nd > p.maxDistance) continue;
                u64 cand = pack(nd, u, bits);
                best = cand < best ? cand : best;
            }
            if (best < cur) {
                u64 old = atomicMin(&p.word[v], best);
                if (distOf(best, bits) < distOf(old, bits) && claim(p.stamp, v, gen))
                    p.frontier[appendIndex(&c->frontierCount)] = v;
            }
        }
        gridSync(c);
    }

    // Near-far propagation.
    int iterations = 0, epochs = 0;
    i64 pushes = 0;
    const int frontierCount = __ldcg(&c->frontierCount);
    if (frontierCount > 0) {
        // N1: threshold from the frontier's smallest distance.
        listMinimum(p.frontier, frontierCount, c, tid, stride, p.word);
        gridSync(c);
        u64 mn = __ldcg(&c->minimum);
        u64 threshold = saturatingAdd(mn == PACKED_INF ? 0 : distOf(mn, bits), p.delta);
        // N2: initial split.
        int* near = p.listA;
        int* next = p.listB;
        int* far = p.farA;
        int* far2 = p.farB;
        ++gen;
        split(p, p.frontier, frontierCount, threshold, gen, near, &c->nearCount, far, &c->farCount, false, tid, stride);
        gridSync(c);
        if (tid == 0) c->minimum = PACKED_INF;
        gridSync(c);
        // N3.
        for (;;) {
            const int nearCount = __ldcg(&c->nearCount);
            if (nearCount > 0) {
                ++gen;
                ++iterations;
                pushes += nearCount;
                for (unsigned i = tid; i < (unsigned)nearCount; i += stride) {
                    int u = __ldcg(&near[i]);
                    u64 wu = __ldcg(&p.word[u]);
                    if (wu == PACKED_INF) continue;
                    u64 du = distOf(wu, bits);
                    const int* row = p.outBounds + (i64)u * p.outStride;
                    for (int e = row[0]; e < row[1]; ++e) {
                        int x = p.outCol[e];
                        if (x == p.source) continue;
                        u64 nd = du + (u64)p.outW[e];
                        if (nd > p.maxDistance) continue;
                        u64 cand = pack(nd, u, bits);
                        if (cand >= __ldcg(&p.word[x])) continue;
                        u64 old = atomicMin(&p.word[x], cand);
                        if (nd < distOf(old, bits)) {
                            if (nd < threshold) {
                                if (claim(p.stamp, x, gen)) next[appendIndex(&c->nextCount)] = x;
                            } else if (atomicExch(&p.inFar[x], 1) == 0) {
                                far[appendIndex(&c->farCount)] = x;
                            }
                        }
                    }
                }
                gridSync(c);
                if (tid == 0) {
                    c->nearCount = __ldcg(&c->nextCount);
                    c->nextCount = 0;
                }
                gridSync(c);
                int* t = near;
                near = next;
                next = t;
                continue;
            }
            const int farCount = __ldcg(&c->farCount);
            if (farCount == 0) break;
            ++epochs;
            listMinimum(far, farCount, c, tid, stride, p.word);
            gridSync(c);
            mn = __ldcg(&c->minimum);
            u64 farMin = mn == PACKED_INF ? 0 : distOf(mn, bits);
            threshold = saturatingAdd(threshold > farMin ? threshold : farMin, p.delta);
            ++gen;
            split(p, far, farCount, threshold, gen, near, &c->nearCount, far2, &c->far2Count, true, tid, stride);
            gridSync(c);
            if (tid == 0) {
                c->farCount = __ldcg(&c->far2Count);
                c->far2Count = 0;
                c->minimum = PACKED_INF;
            }
            gridSync(c);
            int* t = far;
            far = far2;
            far2 = t;
        }
    }

    // Unpack, counting the vertices whose distance or parent changed.
    int changed = 0;
    if (bits > 0) {
        const u64 none = noneField(bits);
        for (unsigned v = tid; v < n; v += stride) {
            u64 w = __ldcg(&p.word[v]);
            i64 d = w == PACKED_INF ? DISTANCE_INF : (i64)distOf(w, bits);
            int par = (w == PACKED_INF || (w & none) == none) ? -1 : (int)(w & none);
            if (p.dist[v] != d || p.parent[v] != par) ++changed;
            p.dist[v] = d;
            p.parent[v] = par;
        }
        sumInto(&c->affected, changed);
    } else {
        // Distance-only mode: parents are the lowest tight in-neighbours. The old parent waits in
        // `ancestor` (free after P2) so that changes can still be counted.
        for (unsigned v = tid; v < n; v += stride) {
            u64 w = __ldcg(&p.word[v]);
            i64 d = w == PACKED_INF ? DISTANCE_INF : (i64)w;
            if (p.dist[v] != d) {
                ++changed;
                p.ancestor[v] = INT_MIN_;
            } else {
                p.ancestor[v] = p.parent[v];
            }
            p.dist[v] = d;
            p.parent[v] = (w == PACKED_INF || (int)v == p.source) ? -1 : INT_MAX_;
        }
        gridSync(c);
        for (unsigned u = tid; u < n; u += stride) {
            u64 wu = __ldcg(&p.word[u]);
            if (wu == PACKED_INF) continue;
            const int* row = p.outBounds + (i64)u * p.outStride;
            for (int e = row[0]; e < row[1]; ++e) {
                int x = p.outCol[e];
                if (x != p.source && wu + (u64)p.outW[e] == __ldcg(&p.word[x])) atomicMin(&p.parent[x], (int)u);
            }
        }
        gridSync(c);
        for (unsigned v = tid; v < n; v += stride) {
            int old = __ldcg(&p.ancestor[v]);
            if (old != INT_MIN_ && old != __ldcg(&p.parent[v])) ++changed;
        }
        sumInto(&c->affected, changed);
    }

    if (tid == 0) {
        c->iterations = iterations;
        c->epochs = epochs;
        c->pushes = pushes;
        c->generation = gen;
    }
}
