/*
 * dyng from C, the basics: a graph from CSR arrays, an SSSP tree, a batch, one update, a view.
 * The graph is the thesis example (n = 7, K = 3); the tree is objective 0's from vertex 0.
 * Prints the distances before and after the batch, and the update's counters.
 * With --worker the engines run in a dyng-worker process (DYNG_ISOLATION_WORKER), found beside
 * the installed library: the same calls, the same output.
 */
#include <dyng.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the failing call's status and message, then exits. */
static void check(dyng_status_t s, const char *what) {
    if (s != DYNG_OK) {
        char msg[512];
        dyng_last_error_message(msg, sizeof msg);
        fprintf(stderr, "%s failed: %s: %s\n", what, dyng_status_string(s), msg);
        exit(1);
    }
}

static void print_distances(const char *label, const dyng_view_t *v) {
    const void *data;
    size_t len, i;
    uint32_t dtype;
    check(dyng_view_data(v, &data, &len, &dtype), "dyng_view_data");
    printf("%s:", label);
    for (i = 0; i < len; i++) printf(" %lld", (long long)((const int64_t *)data)[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    /* Objective-major weights: all of objective 0, then objective 1, then objective 2. */
    static const int32_t row_ptr[] = {0, 2, 3, 5, 6, 9, 10, 10};
    static const int32_t col_ind[] = {1, 2, 3, 1, 3, 4, 1, 5, 6, 6};
    static const int32_t weights[] = {2, 4, 2, 10, 5, 1, 4, 1, 5, 1,   /* objective 0 */
                                      1, 1, 4, 15, 16, 1, 3, 2, 6, 1,  /* objective 1 */
                                      5, 1, 2, 2, 3, 1, 2, 2, 2, 1};   /* objective 2 */
    static const int32_t ins_src[] = {3, 1}, ins_dst[] = {5, 5};
    static const int32_t ins_w[] = {10, 2, 12, 12, 1, 14}; /* edge-major: K per insertion */
    static const int32_t del_src[] = {1, 4}, del_dst[] = {3, 1};
    dyng_resources_options_t ropt = dyng_resources_options_default();
    dyng_resources_t *res;
    dyng_graph_t *g;
    dyng_result_t *tree;
    dyng_view_t *before, *after;
    dyng_csr_t csr = {7, 10, 3, row_ptr, col_ind, weights};
    dyng_batch_t batch = {sizeof(dyng_batch_t), 2, ins_src, ins_dst, ins_w, 2, del_src, del_dst};
    dyng_update_stats_t stats = dyng_update_stats_default();

    printf("dyng %s\n", dyng_version());
    ropt.backend = DYNG_BACKEND_SEQUENTIAL;
    if (argc > 1 && strcmp(argv[1], "--worker") == 0) {
        ropt.isolation = DYNG_ISOLATION_WORKER;
        printf("isolation: worker\n");
    }
    check(dyng_resources_create(&ropt, &res), "dyng_resources_create");
    check(dyng_graph_from_csr(res, &csr, &g), "dyng_graph_from_csr");
    check(dyng_sssp_compute(res, g, 0, 0, NULL, &tree), "dyng_sssp_compute");
    check(dyng_result_view(res, tree, DYNG_ARRAY_DISTANCES, 0, &before), "dyng_result_view");
    check(dyng_update(res, g, &batch, &tree, 1, &stats), "dyng_update");
    check(dyng_result_view(res, tree, DYNG_ARRAY_DISTANCES, 0, &after), "dyng_result_view");
    print_distances("before", before); /* a view is a snapshot: still the old tree */
    print_distances("after", after);
    printf("invalidated %lld affected %lld\n", (long long)stats.invalidated, (long long)stats.affected);

    dyng_view_release(before);
    dyng_view_release(after);
    dyng_result_free(tree);
    dyng_graph_free(g);
    dyng_resources_free(res);
    printf("ok\n");
    return 0;
}
