/*
 * A program that keeps its own graph (one CSR per objective) and its own tree arrays, and applies
 * each batch itself, only calls dyng for the per-objective update (dyng_sosp_update_arrays, the
 * drop-in entry point of docs/c-api.md, with a MOSP-style code's `long long` distances and `int`
 * ids). Here the initial trees come from dyng_sssp_compute + dyng_result_copy; the batch is
 * applied by hand below. (examples-c/mosp_shim goes one step further: a MOSP-style codebase's own
 * update function on these calls.)
 */
#include <dyng.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 7, M = 10, K = 3, MAX_M = 16 };

static void check(dyng_status_t s, const char *what) {
    if (s != DYNG_OK) {
        char msg[512];
        dyng_last_error_message(msg, sizeof msg);
        fprintf(stderr, "%s failed: %s: %s\n", what, dyng_status_string(s), msg);
        exit(1);
    }
}

/* The caller's own graph: an edge list per objective, rebuilt into CSR after each batch. */
struct edges {
    int m;
    int32_t src[MAX_M], dst[MAX_M], w[K][MAX_M];
};

/* Counting sort by tail; edges keep their list order within a row. */
static void to_csr(const struct edges *e, int objective, int32_t *row_ptr, int32_t *col, int32_t *w) {
    int32_t fill[N];
    int i;
    memset(row_ptr, 0, (N + 1) * sizeof *row_ptr);
    for (i = 0; i < e->m; i++) row_ptr[e->src[i] + 1]++;
    for (i = 0; i < N; i++) row_ptr[i + 1] += row_ptr[i];
    memcpy(fill, row_ptr, sizeof fill);
    for (i = 0; i < e->m; i++) {
        int slot = fill[e->src[i]]++;
        col[slot] = e->dst[i];
        w[slot] = e->w[objective][i];
    }
}

int main(void) {
    struct edges e = {M,
                      {0, 0, 1, 2, 2, 3, 4, 4, 4, 5},
                      {1, 2, 3, 1, 3, 4, 1, 5, 6, 6},
                      {{2, 4, 2, 10, 5, 1, 4, 1, 5, 1}, {1, 1, 4, 15, 16, 1, 3, 2, 6, 1}, {5, 1, 2, 2, 3, 1, 2, 2, 2, 1}}};
    /* The batch: delete 1->3 and 4->1; insert 3->5 (10 2 12) and 1->5 (12 1 14). */
    const int32_t del_src[2] = {1, 4}, del_dst[2] = {3, 1};
    const int ins_src[2] = {3, 1}, ins_dst[2] = {5, 5}, ins_w[2][K] = {{10, 2, 12}, {12, 1, 14}};
    int changed_src[4], changed_dst[4], num_changed = 0;
    int32_t row_ptr[N + 1], col[MAX_M], w[MAX_M];
    long long dist[K][N], max_weight[K] = {0, 0, 0};
    int parent[K][N];
    dyng_resources_t *res;
    int i, j, v;

    check(dyng_resources_create(NULL, &res), "dyng_resources_create");
    /* Initial trees, one objective at a time, on a single-objective graph the caller owns. */
    for (j = 0; j < K; j++) {
        dyng_graph_t *g;
        dyng_result_t *r;
        dyng_csr_t one;
        to_csr(&e, j, row_ptr, col, w);
        one.n = N;
        one.m = (size_t)e.m;
        one.k = 1;
        one.row_ptr = row_ptr;
        one.col_ind = col;
        one.weights = w;
        check(dyng_graph_from_csr(res, &one, &g), "dyng_graph_from_csr");
        check(dyng_sssp_compute(res, g, 0, 0, NULL, &r), "dyng_sssp_compute");
        check(dyng_result_copy(res, r, DYNG_ARRAY_DISTANCES, 0, dist[j], N), "dyng_result_copy");
        check(dyng_result_copy(res, r, DYNG_ARRAY_PARENTS, 0, parent[j], N), "dyng_result_copy");
        dyng_result_free(r);
        dyng_graph_free(g);
        /* The largest weight before and after the batch: the original edges and the insertions. */
        for (i = 0; i < e.m; i++)
            if (e.w[j][i] > max_weight[j]) max_weight[j] = e.w[j][i];
        for (i = 0; i < 2; i++)
            if (ins_w[i][j] > max_weight[j]) max_weight[j] = ins_w[i][j];
    }

    /* Apply the batch to our own edge list: deletions first, then insertions (new edges). */
    for (i = 0; i < 2; i++) {
        int k2;
        for (k2 = 0; k2 < e.m; k2++) {
            if (e.src[k2] == del_src[i] && e.dst[k2] == del_dst[i]) {
                memmove(&e.src[k2], &e.src[k2 + 1], (size_t)(e.m - k2 - 1) * sizeof(int32_t));
                memmove(&e.dst[k2], &e.dst[k2 + 1], (size_t)(e.m - k2 - 1) * sizeof(int32_t));
                for (j = 0; j < K; j++) memmove(&e.w[j][k2], &e.w[j][k2 + 1], (size_t)(e.m - k2 - 1) * sizeof(int32_t));
                e.m--;
                break;
            }
        }
        /* Changed edges: every deletion, and every insertion that raised an existing edge's weight
         * in this objective (none here: both insertions are new edges). */
        changed_src[num_changed] = del_src[i];
        changed_dst[num_changed] = del_dst[i];
        num_changed++;
    }
    for (i = 0; i < 2; i++) {
        e.src[e.m] = ins_src[i];
        e.dst[e.m] = ins_dst[i];
        for (j = 0; j < K; j++) e.w[j][e.m] = ins_w[i][j];
        e.m++;
    }

    /* The per-objective update on our arrays (delta 0 = the default; no reverse graph: dyng
     * builds it for the call). */
    for (j = 0; j < K; j++) {
        dyng_csr_t one;
        dyng_update_stats_t st = dyng_update_stats_default();
        to_csr(&e, j, row_ptr, col, w);
        one.n = N;
        one.m = (size_t)e.m;
        one.k = 1;
        one.row_ptr = row_ptr;
        one.col_ind = col;
        one.weights = w;
        check(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, (size_t)num_changed, ins_dst, 2, 0, 0,
                                      max_weight[j], dist[j], parent[j], &st),
              "dyng_sosp_update_arrays");
        printf("objective %d: distances", j);
        for (v = 0; v < N; v++) printf(" %lld", dist[j][v]);
        printf(" | parents");
        for (v = 0; v < N; v++) printf(" %d", parent[j][v]);
        printf(" | invalidated %lld\n", (long long)st.invalidated);
    }
    dyng_resources_free(res);
    return 0;
}
