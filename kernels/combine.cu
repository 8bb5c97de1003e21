// dyng: the combined graph of K trees on the device (reference-behaviour §5.2, §6.6).
//
// Edge (p, v) exists iff p is v's parent in at least one tree; it is counted at its first
// occurrence k and weighs base - term_k - sum(term_j, j > k, parent_j[v] == p). Two passes: count
// (degrees, edge count, weight sum), then, after the host's scan of the degrees, fill.
// Self-contained: NVRTC compiles it with only its bundled headers.

typedef long long i64;
typedef unsigned long long u64;

#define FULL_MASK 0xFFFFFFFFu

// The weight of edge (parents[k][v], v) if k is its first occurrence, else -1.
__device__ __forceinline__ i64 firstOccurrenceWeight(const int* parents, int n, int numTrees, const i64* terms,
                                                     i64 base, int v, int k) {
    const int p = parents[(i64)k * n + v];
    if (p < 0) return -1;
    for (int j = 0; j < k; ++j)
        if (parents[(i64)j * n + v] == p) return -1;
    i64 weight = base - terms[k];
    for (int j = k + 1; j < numTrees; ++j)
        if (parents[(i64)j * n + v] == p) weight -= terms[j];
    return weight;
}

extern "C" __global__ void countEdgesKernel(const int* parents, int n, int numTrees, const i64* terms, i64 base,
                                           int source, int* degree, u64* sums) {
    u64 edges = 0, weightSum = 0;
    // Every lane leaves the loop before the warp reduction below (block size: a multiple of 32).
    const int stride = gridDim.x * blockDim.x;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        if (v == source) continue;
        for (int k = 0; k < numTrees; ++k) {
            const i64 w = firstOccurrenceWeight(parents, n, numTrees, terms, base, v, k);
            if (w < 0) continue;
            atomicAdd(&degree[parents[(i64)k * n + v]], 1);
            edges += 1;
            weightSum += (u64)w;
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        edges += __shfl_down_sync(FULL_MASK, edges, offset);
        weightSum += __shfl_down_sync(FULL_MASK, weightSum, offset);
    }
    if ((threadIdx.x & 31) == 0 && edges != 0) {
        atomicAdd(&sums[0], edges);
        atomicAdd(&sums[1], weightSum);
    }
}

extern "C" __global__ void fillEdgesKernel(const int* parents, int n, int numTrees, const i64* terms, i64 base,
                                          int source, int* cursor, int* colInd, int* weights) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        if (v == source) continue;
        for (int k = 0; k < numTrees; ++k) {
            const i64 w = firstOccurrenceWeight(parents, n, numTrees, terms, base, v, k);
            if (w < 0) continue;
            const int slot = atomicAdd(&cursor[parents[(i64)k * n + v]], 1);
            colInd[slot] = v;
            weights[slot] = (int)w;
        }
    }
}
