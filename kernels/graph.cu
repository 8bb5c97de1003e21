// dyng: device graph kernels: the upload of a caller's CSR with its reverse built on the device
// (reference-behaviour §6.2), the scatter that brings a resident graph's device mirror up to date,
// and the exclusive scan shared with the combined graph (§6.6).
//
// The reverse CSR is filled with atomic cursors, so the order of tails inside an in-row is not
// deterministic; every consumer is order-insensitive (a minimum over packed words).
// Self-contained: NVRTC compiles it with only its bundled headers (no CUB).

typedef long long i64;

#define SCAN_THREADS 1024

// One thread per (edge, objective) element: edge-major input -> objective-major columns.
extern "C" __global__ void splitWeightsKernel(const int* edgeMajor, int* outWeights, int m, int k) {
    const i64 total = (i64)m * k;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        const i64 e = i / k;
        const i64 j = i % k;
        outWeights[j * m + e] = edgeMajor[i];
    }
}

// One thread per edge: count the in-degree of its head (cursor zeroed by the host first).
extern "C" __global__ void inDegreeKernel(const int* colInd, int* cursor, int m) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < m; e += gridDim.x * blockDim.x)
        atomicAdd(&cursor[colInd[e]], 1);
}

// Exclusive prefix sum of `count` ints, in place allowed (in == out). One block of SCAN_THREADS
// threads; each thread owns one contiguous chunk. Simple rather than fast: it runs once per upload
// and once per combined graph, next to kernels that touch every edge.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS) exclusiveScanKernel(const int* in, int* out, int count) {
    __shared__ int partial[SCAN_THREADS];
    const int t = threadIdx.x;
    const int chunk = (count + SCAN_THREADS - 1) / SCAN_THREADS;
    const i64 begin = (i64)t * chunk;
    const i64 end = begin + chunk < count ? begin + chunk : count;
    int sum = 0;
    for (i64 i = begin; i < end; ++i) sum += in[i];
    partial[t] = sum;
    __syncthreads();
    // Hillis-Steele inclusive scan of the chunk sums.
    for (int offset = 1; offset < SCAN_THREADS; offset <<= 1) {
        int add = t >= offset ? partial[t - offset] : 0;
        __syncthreads();
        partial[t] += add;
        __syncthreads();
    }
    int running = partial[t] - sum;
    for (i64 i = begin; i < end; ++i) {
        const int x = in[i];  // read before the write: `in` may alias `out`
        out[i] = running;
        running += x;
    }
}

// One thread per tail u: every out-edge (u -> v, e) takes slot cursor[v]++ in the reverse CSR and
// copies its k column weights.
extern "C" __global__ void fillReverseKernel(const int* rowPtr, const int* colInd, const int* outWeights, int* cursor,
                                             int* inColInd, int* inWeights, int n, int m, int k) {
    for (int u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) {
        for (int e = rowPtr[u]; e < rowPtr[u + 1]; ++e) {
            const int slot = atomicAdd(&cursor[colInd[e]], 1);
            inColInd[slot] = u;
            for (int j = 0; j < k; ++j) inWeights[(i64)j * m + slot] = outWeights[(i64)j * m + e];
        }
    }
}

// Brings a device mirror of a resident graph's rows up to date (src/graph/mirror.rs, whose tests
// hold this kernel's host twin). `staged` holds, in ints: the ids of r rows, their (start, end)
// pairs (2r), the exclusive prefix sums of their lengths (r + 1), their heads (s), then each of the
// k columns' weights (s each). Column j of the mirror starts at weights + j * columnLen. Each
// staged slot finds its row by a binary search of the sums (empty rows share their sum). The rows'
// slots are disjoint and nothing is read from the mirror, so the writes may land in any order.
extern "C" __global__ void scatterRowsKernel(const int* staged, int r, int s, int k, int* bounds, int* heads,
                                             int* weights, i64 columnLen) {
    const int* ids = staged;
    const int* pairs = ids + r;
    const int* offsets = pairs + 2 * (i64)r;
    const int* stagedHeads = offsets + r + 1;
    const int* stagedWeights = stagedHeads + s;
    const i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = tid; i < r; i += stride) {
        const i64 u = ids[i];
        bounds[2 * u] = pairs[2 * i];
        bounds[2 * u + 1] = pairs[2 * i + 1];
    }
    for (i64 i = tid; i < s; i += stride) {
        int lo = 0, hi = r;
        while (lo + 1 < hi) {
            const int mid = (lo + hi) >> 1;
            if (offsets[mid] <= i) lo = mid; else hi = mid;
        }
        const i64 dst = pairs[2 * lo] + (i - offsets[lo]);
        heads[dst] = stagedHeads[i];
        for (int j = 0; j < k; ++j) weights[j * columnLen + dst] = stagedWeights[(i64)j * s + i];
    }
}
