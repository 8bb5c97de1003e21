/*
 * MOSP from files: reads a graph in the MOSP CSR text format (PREFIX RowPtr.txt, ColInd.txt,
 * Values.txt), computes the MOSP result from vertex 0 with K = 3 objectives, reads a batch folder
 * (insert.txt, delete.txt), updates, and prints the MOSP path costs of the listed vertices.
 *
 * Usage: mosp_files GRAPH_PREFIX BATCH_DIR VERTEX...
 *   e.g. mosp_files usroads-k3/graph/graph usroads-k3/safe10k/changes 1 1000 100000
 */
#include <dyng.h>

#include <stdio.h>
#include <stdlib.h>

static void check(dyng_status_t s, const char *what) {
    if (s != DYNG_OK) {
        char msg[512];
        dyng_last_error_message(msg, sizeof msg);
        fprintf(stderr, "%s failed: %s: %s\n", what, dyng_status_string(s), msg);
        exit(1);
    }
}

int main(int argc, char **argv) {
    dyng_resources_t *res;
    dyng_graph_t *g;
    dyng_result_t *mosp;
    dyng_batch_buffer_t *buffer;
    dyng_batch_t batch = {sizeof(dyng_batch_t), 0, NULL, NULL, NULL, 0, NULL, NULL};
    dyng_graph_info_t info = {sizeof(dyng_graph_info_t), 0, 0, 0, 0};
    dyng_mosp_options_t mopt = dyng_mosp_options_default();
    dyng_update_stats_t stats = dyng_update_stats_default();
    dyng_view_t *costs;
    const void *data;
    size_t len;
    uint32_t dtype;
    int i, j;

    if (argc < 4) {
        fprintf(stderr, "usage: %s GRAPH_PREFIX BATCH_DIR VERTEX...\n", argv[0]);
        return 2;
    }
    check(dyng_resources_create(NULL, &res), "dyng_resources_create");
    check(dyng_graph_read(res, argv[1], DYNG_FORMAT_CSR_TEXT, NULL, &g), "dyng_graph_read");
    check(dyng_graph_info(g, &info), "dyng_graph_info");
    printf("graph: n = %zu, m = %zu, K = %u\n", info.n, info.m, info.k);

    mopt.k = 3;
    check(dyng_mosp_compute(res, g, 0, &mopt, &mosp), "dyng_mosp_compute");
    check(dyng_batch_read(argv[2], g, &buffer), "dyng_batch_read");
    check(dyng_batch_buffer_get(buffer, &batch), "dyng_batch_buffer_get");
    printf("batch: %zu insertions, %zu deletions\n", batch.num_insertions, batch.num_deletions);
    check(dyng_update(res, g, &batch, &mosp, 1, &stats), "dyng_update");
    check(dyng_graph_info(g, &info), "dyng_graph_info");
    printf("updated: m = %zu, version %llu, invalidated %lld\n", info.m,
           (unsigned long long)info.version, (long long)stats.invalidated);

    /* Path costs are n x KG, vertex-major: vertex v's costs are data[v*KG .. v*KG+KG). */
    check(dyng_result_view(res, mosp, DYNG_ARRAY_PATH_COSTS, 0, &costs), "dyng_result_view");
    check(dyng_view_data(costs, &data, &len, &dtype), "dyng_view_data");
    for (i = 3; i < argc; i++) {
        long v = strtol(argv[i], NULL, 10);
        if (v < 0 || (size_t)v >= info.n) {
            fprintf(stderr, "vertex %s is outside [0, %zu)\n", argv[i], info.n);
            return 2;
        }
        printf("costs[%ld] =", v);
        for (j = 0; j < (int)info.k; j++) printf(" %lld", (long long)((const int64_t *)data)[v * info.k + j]);
        printf("\n");
    }
    dyng_view_release(costs);
    dyng_batch_buffer_free(buffer);
    dyng_result_free(mosp);
    dyng_graph_free(g);
    dyng_resources_free(res);
    return 0;
}
