/*
 * The C test harness of libdyng: calls every exported function, on its success path and on every
 * error path the C surface can reach (NULL arguments, bad enums, struct sizes, freed and wrong-type
 * handles, stale results, out-of-range vertices, zero weights, wrong K), and runs read-only calls
 * concurrently from several pthreads on clones of one resources handle.
 *
 * Usage: harness TMPDIR   (a writable folder for the file-reading tests)
 * Prints one line per failed check and ends with "harness: N checks, F failed"; exit status 0 iff
 * F = 0. Built by tests/ffi_c.rs (cc crate) and by scripts/ffi-check.sh (under AddressSanitizer).
 */
#include "dyng.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;
static int failures = 0;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        checks++;                                                                   \
        if (!(cond)) {                                                              \
            failures++;                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
        }                                                                           \
    } while (0)

/* Checks that `call` returns `want`, and that a failure left a message naming something. */
#define EXPECT(call, want)                                                          \
    do {                                                                            \
        dyng_status_t got_ = (call);                                                \
        checks++;                                                                   \
        if (got_ != (want)) {                                                       \
            char msg_[512];                                                         \
            dyng_last_error_message(msg_, sizeof msg_);                             \
            failures++;                                                             \
            fprintf(stderr, "FAIL %s:%d: %s gave %s, want %s (last error: %s)\n",  \
                    __FILE__, __LINE__, #call, dyng_status_string(got_),            \
                    dyng_status_string(want), msg_);                                \
        } else if ((want) != DYNG_OK) {                                             \
            checks++;                                                               \
            if (dyng_last_error_message(NULL, 0) < 8) {                             \
                failures++;                                                         \
                fprintf(stderr, "FAIL %s:%d: %s left no message\n", __FILE__,       \
                        __LINE__, #call);                                           \
            }                                                                       \
        }                                                                           \
    } while (0)

#define OK(call) EXPECT(call, DYNG_OK)

/* True when the last error message contains `needle`. */
static int last_error_has(const char *needle) {
    char buf[1024];
    dyng_last_error_message(buf, sizeof buf);
    if (strstr(buf, needle) == NULL) {
        fprintf(stderr, "  (last error \"%s\" lacks \"%s\")\n", buf, needle);
        return 0;
    }
    return 1;
}

/* ---- The thesis example (spec/reference-behaviour.md B.1): n = 7, m = 10, K = 3. ---- */
enum { N = 7, M = 10, K = 3 };
static const int32_t ROW_PTR[N + 1] = {0, 2, 3, 5, 6, 9, 10, 10};
static const int32_t COL_IND[M] = {1, 2, 3, 1, 3, 4, 1, 5, 6, 6};
static const int32_t SRC[M] = {0, 0, 1, 2, 2, 3, 4, 4, 4, 5};
static const int32_t W_EDGE_MAJOR[M * K] = {2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3,
                                            1, 1, 1, 4, 3, 2, 1, 2, 2, 5, 6, 2, 1, 1, 1};
static int32_t w_objective_major[K * M];

static const int64_t INIT_DIST[K][N] = {
    {0, 2, 4, 4, 5, 6, 7}, {0, 1, 1, 5, 6, 8, 9}, {0, 3, 1, 4, 5, 7, 7}};
static const int32_t INIT_PARENT[K][N] = {
    {-1, 0, 0, 1, 3, 4, 5}, {-1, 0, 0, 1, 3, 4, 5}, {-1, 2, 0, 2, 3, 4, 4}};
static const int64_t UPD_DIST[K][N] = {
    {0, 2, 4, 9, 10, 11, 12}, {0, 1, 1, 17, 18, 2, 3}, {0, 3, 1, 4, 5, 7, 7}};
static const int32_t UPD_PARENT[K][N] = {
    {-1, 0, 0, 2, 3, 4, 5}, {-1, 0, 0, 2, 3, 1, 5}, {-1, 2, 0, 2, 3, 4, 4}};

static const int32_t INS_SRC[2] = {3, 1}, INS_DST[2] = {5, 5};
static const int32_t INS_W[2 * K] = {10, 2, 12, 12, 1, 14};
static const int32_t DEL_SRC[2] = {1, 4}, DEL_DST[2] = {3, 1};

static dyng_csr_t thesis_csr(void) {
    dyng_csr_t c;
    c.n = N;
    c.m = M;
    c.k = K;
    c.row_ptr = ROW_PTR;
    c.col_ind = COL_IND;
    c.weights = w_objective_major;
    return c;
}

static dyng_batch_t thesis_batch(void) {
    dyng_batch_t b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.num_insertions = 2;
    b.ins_src = INS_SRC;
    b.ins_dst = INS_DST;
    b.ins_weights = INS_W;
    b.num_deletions = 2;
    b.del_src = DEL_SRC;
    b.del_dst = DEL_DST;
    return b;
}

static dyng_graph_t *thesis_graph(const dyng_resources_t *res) {
    dyng_graph_t *g = NULL;
    dyng_csr_t c = thesis_csr();
    OK(dyng_graph_from_csr(res, &c, &g));
    return g;
}

/* Checks that view/copy of `array` objective `k` of `r` equals `want` (n int64 or int32). */
static void expect_i64(const dyng_resources_t *res, const dyng_result_t *r, uint32_t array, uint32_t k,
                       const int64_t *want, size_t n) {
    dyng_view_t *v = NULL;
    const void *data = NULL;
    size_t len = 0;
    uint32_t dtype = 99;
    int64_t copy[64];
    OK(dyng_result_view(res, r, array, k, &v));
    OK(dyng_view_data(v, &data, &len, &dtype));
    CHECK(len == n && dtype == DYNG_DTYPE_INT64);
    CHECK(len == n && memcmp(data, want, n * sizeof(int64_t)) == 0);
    dyng_view_release(v);
    OK(dyng_result_copy(res, r, array, k, copy, n));
    CHECK(memcmp(copy, want, n * sizeof(int64_t)) == 0);
}

static void expect_i32(const dyng_resources_t *res, const dyng_result_t *r, uint32_t array, uint32_t k,
                       const int32_t *want, size_t n) {
    dyng_view_t *v = NULL;
    const void *data = NULL;
    size_t len = 0;
    uint32_t dtype = 99;
    int32_t copy[64];
    OK(dyng_result_view(res, r, array, k, &v));
    OK(dyng_view_data(v, &data, &len, &dtype));
    CHECK(len == n && dtype == DYNG_DTYPE_INT32);
    CHECK(len == n && memcmp(data, want, n * sizeof(int32_t)) == 0);
    dyng_view_release(v);
    OK(dyng_result_copy(res, r, array, k, copy, n));
    CHECK(memcmp(copy, want, n * sizeof(int32_t)) == 0);
}

/* ---- Version, status strings, last error. ---- */
static void test_basics(void) {
    char want[32];
    char small[8];
    size_t need;
    int s;
    snprintf(want, sizeof want, "%d.%d.%d", DYNG_VERSION_MAJOR, DYNG_VERSION_MINOR, DYNG_VERSION_PATCH);
    CHECK(strcmp(dyng_version(), want) == 0);
    CHECK(strcmp(dyng_status_string(DYNG_OK), "DYNG_OK") == 0);
    CHECK(strcmp(dyng_status_string(DYNG_ERR_STALE_RESULT), "DYNG_ERR_STALE_RESULT") == 0);
    CHECK(strcmp(dyng_status_string(DYNG_ERR_PANIC), "DYNG_ERR_PANIC") == 0);
    CHECK(strcmp(dyng_status_string(-1), "DYNG_ERR_UNKNOWN") == 0);
    CHECK(strcmp(dyng_status_string(DYNG_ERR_RESOURCE), "DYNG_ERR_RESOURCE") == 0);
    CHECK(strcmp(dyng_status_string(DYNG_ERR_BUSY), "DYNG_ERR_BUSY") == 0);
    CHECK(strcmp(dyng_status_string(16), "DYNG_ERR_UNKNOWN") == 0);
    for (s = DYNG_OK; s <= DYNG_ERR_BUSY; s++) {
        CHECK(strncmp(dyng_status_string(s), "DYNG_", 5) == 0);
    }
    /* Status values are stable: the listed order starting at 0. */
    CHECK(DYNG_ERR_NULL_ARGUMENT == 1 && DYNG_ERR_INVALID_ARGUMENT == 2 && DYNG_ERR_STALE_RESULT == 3);
    CHECK(DYNG_ERR_IO == 4 && DYNG_ERR_CAPACITY == 5 && DYNG_ERR_NOT_SUPPORTED == 6);
    CHECK(DYNG_ERR_OUT_OF_MEMORY == 7 && DYNG_ERR_CUDA == 8 && DYNG_ERR_WORKER_LOST == 9);
    CHECK(DYNG_ERR_TIMEOUT == 10 && DYNG_ERR_PROTOCOL == 11 && DYNG_ERR_INTERNAL == 12 && DYNG_ERR_PANIC == 13);
    CHECK(DYNG_ERR_RESOURCE == 14 && DYNG_ERR_BUSY == 15);

    EXPECT(dyng_workspace_bytes(NULL, NULL), DYNG_ERR_NULL_ARGUMENT);
    need = dyng_last_error_message(NULL, 0);
    CHECK(need == strlen("dyng: dyng_workspace_bytes: argument `res` is NULL") + 1);
    CHECK(dyng_last_error_message(small, sizeof small) == need);
    CHECK(strcmp(small, "dyng: d") == 0); /* truncated, NUL-terminated */
    CHECK(dyng_last_error_message(small, 1) == need && small[0] == '\0');
}

/* ---- Resources. ---- */
static void test_resources(void) {
    dyng_resources_options_t opt = dyng_resources_options_default();
    dyng_resources_t *res = NULL, *clone = NULL, *untouched = (dyng_resources_t *)0x1;
    size_t bytes = 1;

    CHECK(opt.struct_size == sizeof opt && opt.backend == DYNG_BACKEND_PARALLEL && opt.num_threads == 0);
    CHECK(opt.isolation == DYNG_ISOLATION_IN_PROCESS && opt.stream == NULL && !opt.profile);
    CHECK(dyng_backend_available(DYNG_BACKEND_SEQUENTIAL));
    CHECK(dyng_backend_available(DYNG_BACKEND_PARALLEL));
    CHECK(!dyng_backend_available(99));

    OK(dyng_resources_create(NULL, &res));
    OK(dyng_resources_warm_up(res));
    OK(dyng_workspace_bytes(res, &bytes));
    CHECK(bytes == 0);
    OK(dyng_resources_clone(res, &clone));
    OK(dyng_release_workspaces(clone));
    dyng_resources_free(clone);
    dyng_resources_free(res);
    dyng_resources_free(NULL);

    EXPECT(dyng_resources_create(&opt, NULL), DYNG_ERR_NULL_ARGUMENT);
    opt.backend = 7;
    EXPECT(dyng_resources_create(&opt, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("backend = 7"));
    CHECK(untouched == (dyng_resources_t *)0x1); /* outputs only on success */
    opt.backend = DYNG_BACKEND_CUDA;
    if (!dyng_backend_available(DYNG_BACKEND_CUDA)) {
        EXPECT(dyng_resources_create(&opt, &res), DYNG_ERR_NOT_SUPPORTED);
        CHECK(last_error_has("CUDA"));
    }
    opt = dyng_resources_options_default();
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = "/nonexistent/dyng-worker"; /* a missing worker is reported by create */
    EXPECT(dyng_resources_create(&opt, &res), DYNG_ERR_NOT_SUPPORTED);
    CHECK(last_error_has("no dyng-worker executable"));
    opt.worker_path = NULL;
    opt.isolation = 5;
    EXPECT(dyng_resources_create(&opt, &res), DYNG_ERR_INVALID_ARGUMENT);
    opt = dyng_resources_options_default();
    opt.stream = &opt;
    EXPECT(dyng_resources_create(&opt, &res), DYNG_ERR_INVALID_ARGUMENT);
    opt = dyng_resources_options_default();
    opt.struct_size = 4;
    EXPECT(dyng_resources_create(&opt, &res), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("struct_size = 4"));
    opt = dyng_resources_options_default();
    opt.backend = DYNG_BACKEND_SEQUENTIAL;
    opt.profile = true;
    OK(dyng_resources_create(&opt, &res));
    dyng_resources_free(res);

    EXPECT(dyng_resources_clone(NULL, &clone), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_release_workspaces(NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_resources_warm_up(NULL), DYNG_ERR_NULL_ARGUMENT);
}

/* ---- Graphs from arrays, info, copy, and their error paths. ---- */
static void test_graphs(const dyng_resources_t *res) {
    dyng_graph_t *g = NULL, *h = NULL, *untouched = (dyng_graph_t *)0x1;
    dyng_graph_info_t info;
    dyng_csr_t c = thesis_csr();
    dyng_edges_t e;
    int32_t rp[N + 1], ci[M], w[K * M], bad_col[M], zero_w[K * M];

    OK(dyng_graph_from_csr(res, &c, &g));
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(dyng_graph_info(g, &info));
    CHECK(info.n == N && info.m == M && info.k == K && info.version == 0 && info.struct_size == sizeof info);
    OK(dyng_graph_copy_csr(res, g, rp, ci, w));
    CHECK(memcmp(rp, ROW_PTR, sizeof rp) == 0 && memcmp(ci, COL_IND, sizeof ci) == 0);
    CHECK(memcmp(w, w_objective_major, sizeof w) == 0);
    OK(dyng_graph_copy_csr(res, g, NULL, NULL, w)); /* NULL skips an array */

    e.n = N;
    e.m = M;
    e.k = K;
    e.src = SRC;
    e.dst = COL_IND;
    e.weights = W_EDGE_MAJOR;
    OK(dyng_graph_from_edges(res, &e, &h));
    OK(dyng_graph_copy_csr(res, h, rp, ci, w));
    CHECK(memcmp(rp, ROW_PTR, sizeof rp) == 0 && memcmp(w, w_objective_major, sizeof w) == 0);
    dyng_graph_free(h);

    /* Out-of-range head, zero weight, disagreeing m, NULL arrays, too many objectives. */
    memcpy(bad_col, COL_IND, sizeof bad_col);
    bad_col[4] = 9000;
    c.col_ind = bad_col;
    EXPECT(dyng_graph_from_csr(res, &c, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("9000"));
    c = thesis_csr();
    memcpy(zero_w, w_objective_major, sizeof zero_w);
    zero_w[M + 3] = 0;
    c.weights = zero_w;
    EXPECT(dyng_graph_from_csr(res, &c, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("weight 0 for objective 1"));
    c = thesis_csr();
    c.m = M - 1;
    EXPECT(dyng_graph_from_csr(res, &c, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    c = thesis_csr();
    c.col_ind = NULL;
    EXPECT(dyng_graph_from_csr(res, &c, &untouched), DYNG_ERR_NULL_ARGUMENT);
    c = thesis_csr();
    c.k = 65;
    EXPECT(dyng_graph_from_csr(res, &c, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    e.dst = bad_col;
    EXPECT(dyng_graph_from_edges(res, &e, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(untouched == (dyng_graph_t *)0x1);

    EXPECT(dyng_graph_from_csr(NULL, &c, &h), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_graph_from_csr(res, NULL, &h), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_graph_from_csr(res, &c, NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_graph_from_edges(res, NULL, &h), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_graph_info(NULL, &info), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_graph_info(g, NULL), DYNG_ERR_NULL_ARGUMENT);
    info.struct_size = 3;
    EXPECT(dyng_graph_info(g, &info), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_graph_copy_csr(res, NULL, rp, ci, w), DYNG_ERR_NULL_ARGUMENT);
    dyng_graph_free(g);
}

/* ---- Files: CSR text, Matrix Market, DIMACS, batch folders. ---- */
static int write_file(const char *dir, const char *name, const char *text) {
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f == NULL) return 0;
    fputs(text, f);
    fclose(f);
    return 1;
}

static void test_files(const dyng_resources_t *res, const char *tmp) {
    char path[1024], more[1024];
    const char *more_paths[1];
    dyng_graph_t *g = NULL, *untouched = (dyng_graph_t *)0x1;
    dyng_graph_info_t info;
    dyng_read_options_t ro = dyng_read_options_default();
    dyng_batch_buffer_t *bb = NULL;
    dyng_batch_t b;
    dyng_result_t *r = NULL;
    int32_t w[K * M];

    CHECK(ro.struct_size == sizeof ro && ro.k == 1 && ro.weight_min == 1 && ro.weight_max == 100);
    CHECK(write_file(tmp, "tRowPtr.txt", "0\n2\n3\n5\n6\n9\n10\n10\n"));
    CHECK(write_file(tmp, "tColInd.txt", "1\n2\n3\n1\n3\n4\n1\n5\n6\n6\n"));
    CHECK(write_file(tmp, "tValues.txt",
                     "2 1 5\n4 1 1\n2 4 2\n10 15 2\n5 16 3\n1 1 1\n4 3 2\n1 2 2\n5 6 2\n1 1 1\n"));
    CHECK(write_file(tmp, "insert.txt", "3 5 10 2 12\n1 5 12 1 14\n"));
    CHECK(write_file(tmp, "delete.txt", "1 3\n4 1\n"));
    snprintf(path, sizeof path, "%s/t", tmp);
    OK(dyng_graph_read(res, path, DYNG_FORMAT_CSR_TEXT, NULL, &g));
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(dyng_graph_info(g, &info));
    CHECK(info.n == N && info.m == M && info.k == K);
    OK(dyng_graph_copy_csr(res, g, NULL, NULL, w));
    CHECK(memcmp(w, w_objective_major, sizeof w) == 0);

    OK(dyng_batch_read(tmp, g, &bb));
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    OK(dyng_batch_buffer_get(bb, &b));
    CHECK(b.num_insertions == 2 && b.num_deletions == 2 && b.ins_weights[5] == 14 && b.del_dst[1] == 1);
    OK(dyng_sssp_compute(res, g, 0, 1, NULL, &r));
    OK(dyng_update(res, g, &b, &r, 1, NULL));
    expect_i64(res, r, DYNG_ARRAY_DISTANCES, 1, UPD_DIST[1], N);
    dyng_result_free(r);
    dyng_batch_buffer_free(bb);
    EXPECT(dyng_batch_buffer_get(NULL, &b), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_batch_read(NULL, g, &bb), DYNG_ERR_NULL_ARGUMENT);
    snprintf(path, sizeof path, "%s/no-such-folder", tmp);
    EXPECT(dyng_batch_read(path, g, &bb), DYNG_ERR_IO);
    CHECK(last_error_has("no-such-folder"));
    dyng_graph_free(g);

    /* A vertex beyond n in insert.txt: the message names path and line. */
    snprintf(path, sizeof path, "%s/t", tmp);
    OK(dyng_graph_read(res, path, DYNG_FORMAT_CSR_TEXT, NULL, &g));
    CHECK(write_file(tmp, "insert.txt", "3 5 10 2 12\n1 9000 12 1 14\n"));
    EXPECT(dyng_batch_read(tmp, g, &bb), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("insert.txt:2"));
    dyng_graph_free(g);

    /* Matrix Market: pattern symmetric 3x3 with 2 entries -> 4 directed edges, K = 2 drawn. */
    CHECK(write_file(tmp, "m.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n"));
    snprintf(path, sizeof path, "%s/m.mtx", tmp);
    ro.k = 2;
    OK(dyng_graph_read(res, path, DYNG_FORMAT_MATRIX_MARKET, &ro, &g));
    OK(dyng_graph_info(g, &info));
    CHECK(info.n == 3 && info.m == 4 && info.k == 2);
    dyng_graph_free(g);

    /* DIMACS: two objectives from two files with the same arcs. */
    CHECK(write_file(tmp, "d0.gr", "a 0 1 5\na 1 2 0\na 0 2 9\n"));
    CHECK(write_file(tmp, "d1.gr", "a 0 1 7\na 1 2 3\na 0 2 1\n"));
    snprintf(path, sizeof path, "%s/d0.gr", tmp);
    snprintf(more, sizeof more, "%s/d1.gr", tmp);
    more_paths[0] = more;
    ro = dyng_read_options_default();
    ro.more_paths = more_paths;
    ro.num_more_paths = 1;
    EXPECT(dyng_graph_read(res, path, DYNG_FORMAT_DIMACS, &ro, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("weight 0"));
    ro.zero_to_one = true;
    OK(dyng_graph_read(res, path, DYNG_FORMAT_DIMACS, &ro, &g));
    OK(dyng_graph_info(g, &info));
    CHECK(info.n == 3 && info.m == 3 && info.k == 2);
    dyng_graph_free(g);

    snprintf(path, sizeof path, "%s/missing", tmp);
    EXPECT(dyng_graph_read(res, path, DYNG_FORMAT_CSR_TEXT, NULL, &untouched), DYNG_ERR_IO);
    CHECK(last_error_has("missingRowPtr.txt"));
    EXPECT(dyng_graph_read(res, path, 3, NULL, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("format = 3"));
    EXPECT(dyng_graph_read(res, NULL, DYNG_FORMAT_CSR_TEXT, NULL, &untouched), DYNG_ERR_NULL_ARGUMENT);
    ro.num_more_paths = 1;
    ro.more_paths = NULL;
    snprintf(path, sizeof path, "%s/d0.gr", tmp);
    EXPECT(dyng_graph_read(res, path, DYNG_FORMAT_DIMACS, &ro, &untouched), DYNG_ERR_NULL_ARGUMENT);
    CHECK(untouched == (dyng_graph_t *)0x1);
}

/* ---- SSSP, MOSP, update, views, snapshots, stale results, paths. ---- */
/* `iterations`: the update's rounds, as the backend counts them (the sequential reference the
 * original's near-far rounds; one member of the parallel engine the distances its bucket queue
 * expanded). */
static void test_results(const dyng_resources_t *res, int64_t iterations) {
    dyng_graph_t *g = thesis_graph(res), *other = thesis_graph(res);
    dyng_result_t *s0 = NULL, *s2 = NULL, *m = NULL, *old = NULL, *foreign = NULL, *adopted = NULL;
    dyng_result_t *untouched = (dyng_result_t *)0x1;
    dyng_result_t *list[3];
    dyng_update_stats_t stats[3];
    dyng_result_info_t ri;
    dyng_view_t *before = NULL;
    dyng_sssp_options_t so = dyng_sssp_options_default();
    dyng_mosp_options_t mo = dyng_mosp_options_default();
    dyng_batch_t b = thesis_batch(), bad;
    dyng_graph_info_t gi;
    const void *data = NULL;
    size_t len = 0;
    uint32_t dtype = 0;
    int32_t path[8], bad_src[2] = {3, 9000}, zero_w[2 * K] = {10, 2, 12, 12, 0, 14};
    int64_t wrong_dist[N];
    const uint32_t prefs[3] = {4, 1, 4}, two_prefs[2] = {1, 1};
    static const int64_t COMBINED[N] = {0, 11, 10, 20, 30, 23, 34};
    static const int32_t MOSP_TREE[N] = {-1, 0, 0, 2, 3, 1, 5};
    static const int64_t COSTS[N * K] = {0, 0, 0, 2, 1, 5, 4, 1, 1, 9, 17, 4, 10, 18, 5, 14, 2, 19, 15, 3, 20};
    int j;

    CHECK(so.struct_size == sizeof so && so.delta == 0);
    CHECK(mo.struct_size == sizeof mo && mo.k == 0 && mo.preferences == NULL);
    OK(dyng_sssp_compute(res, g, 0, 0, NULL, &s0));
    OK(dyng_sssp_compute(res, g, 0, 2, &so, &s2));
    OK(dyng_sssp_compute(res, g, 0, 1, NULL, &old));
    OK(dyng_sssp_compute(res, other, 0, 1, NULL, &foreign));
    mo.preferences = prefs;
    mo.num_preferences = 3;
    OK(dyng_mosp_compute(res, g, 0, &mo, &m));
    for (j = 0; j < K; j++) {
        expect_i64(res, m, DYNG_ARRAY_DISTANCES, (uint32_t)j, INIT_DIST[j], N);
        expect_i32(res, m, DYNG_ARRAY_PARENTS, (uint32_t)j, INIT_PARENT[j], N);
    }
    expect_i64(res, s0, DYNG_ARRAY_DISTANCES, 0, INIT_DIST[0], N);
    expect_i32(res, s2, DYNG_ARRAY_PARENTS, 2, INIT_PARENT[2], N);
    OK(dyng_result_view(res, s0, DYNG_ARRAY_DISTANCES, 0, &before));

    /* Adopt a tree from arrays; a wrong distance is refused. */
    OK(dyng_sssp_from_arrays(res, g, 0, 1, INIT_DIST[1], INIT_PARENT[1], false, &adopted));
    memcpy(wrong_dist, INIT_DIST[1], sizeof wrong_dist);
    wrong_dist[4] = 3;
    EXPECT(dyng_sssp_from_arrays(res, g, 0, 1, wrong_dist, INIT_PARENT[1], true, &untouched),
           DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_sssp_from_arrays(res, g, 0, 1, NULL, INIT_PARENT[1], true, &untouched), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_sssp_from_arrays(res, g, 7, 1, INIT_DIST[1], INIT_PARENT[1], true, &untouched),
           DYNG_ERR_INVALID_ARGUMENT);

    /* Invalid batches leave graph and results unchanged (validate, then commit). */
    list[0] = s0;
    list[1] = m;
    list[2] = adopted;
    bad = b;
    bad.ins_src = bad_src;
    EXPECT(dyng_update(res, g, &bad, list, 3, NULL), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("vertex 9000"));
    bad = b;
    bad.ins_weights = zero_w;
    EXPECT(dyng_update(res, g, &bad, list, 3, NULL), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("weight 0"));
    bad = b;
    bad.struct_size = 0;
    EXPECT(dyng_update(res, g, &bad, list, 3, NULL), DYNG_ERR_INVALID_ARGUMENT);
    bad = b;
    bad.del_src = NULL;
    EXPECT(dyng_update(res, g, &bad, list, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    list[2] = s0;
    EXPECT(dyng_update(res, g, &b, list, 3, NULL), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("repeats"));
    list[2] = foreign;
    EXPECT(dyng_update(res, g, &b, list, 3, NULL), DYNG_ERR_STALE_RESULT);
    list[2] = NULL;
    EXPECT(dyng_update(res, g, &b, list, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    list[2] = adopted;
    memset(stats, 0, sizeof stats);
    stats[0].struct_size = stats[1].struct_size = sizeof stats[0];
    stats[2].struct_size = 8;
    EXPECT(dyng_update(res, g, &b, list, 3, stats), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_update(NULL, g, &b, list, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_update(res, NULL, &b, list, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_update(res, g, NULL, list, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_update(res, g, &b, NULL, 3, NULL), DYNG_ERR_NULL_ARGUMENT);
    memset(&gi, 0, sizeof gi);
    gi.struct_size = sizeof gi;
    OK(dyng_graph_info(g, &gi));
    CHECK(gi.version == 0 && gi.m == M);
    expect_i64(res, s0, DYNG_ARRAY_DISTANCES, 0, INIT_DIST[0], N);

    /* The real update: one apply, three results. */
    stats[2].struct_size = sizeof stats[0];
    OK(dyng_update(res, g, &b, list, 3, stats));
    OK(dyng_graph_info(g, &gi));
    CHECK(gi.version == 1 && gi.m == M);
    CHECK(stats[0].invalidated == 4 && stats[0].iterations == iterations && stats[0].pushes == 4);
    CHECK(stats[0].packed_parents && !stats[0].fallback_used);
    CHECK(stats[1].invalidated == 8 && stats[2].invalidated == 4);
    expect_i64(res, s0, DYNG_ARRAY_DISTANCES, 0, UPD_DIST[0], N);
    expect_i32(res, s0, DYNG_ARRAY_PARENTS, 0, UPD_PARENT[0], N);
    expect_i64(res, adopted, DYNG_ARRAY_DISTANCES, 1, UPD_DIST[1], N);
    for (j = 0; j < K; j++) {
        expect_i64(res, m, DYNG_ARRAY_DISTANCES, (uint32_t)j, UPD_DIST[j], N);
        expect_i32(res, m, DYNG_ARRAY_PARENTS, (uint32_t)j, UPD_PARENT[j], N);
    }
    expect_i64(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0, COMBINED, N);
    expect_i32(res, m, DYNG_ARRAY_COMBINED_PARENTS, 0, MOSP_TREE, N);
    expect_i64(res, m, DYNG_ARRAY_PATH_COSTS, 0, COSTS, N * K);

    /* The view taken before the update still shows the old distances. */
    OK(dyng_view_data(before, &data, &len, &dtype));
    CHECK(len == N && memcmp(data, INIT_DIST[0], sizeof INIT_DIST[0]) == 0);
    dyng_view_release(before);

    /* Results left out of the update are stale now. */
    list[0] = old;
    EXPECT(dyng_update(res, g, &b, list, 1, NULL), DYNG_ERR_STALE_RESULT);
    CHECK(last_error_has("version 0"));
    list[0] = s2; /* also not updated */
    EXPECT(dyng_update(res, g, &b, list, 1, NULL), DYNG_ERR_STALE_RESULT);

    /* Info. */
    memset(&ri, 0, sizeof ri);
    ri.struct_size = sizeof ri;
    OK(dyng_result_info(m, &ri));
    CHECK(ri.kind == DYNG_RESULT_MOSP && ri.k == K && ri.graph_k == K && ri.n == N && ri.source == 0);
    CHECK(ri.graph_version == 1 && ri.last_stats.invalidated == 8);
    OK(dyng_result_info(s2, &ri));
    CHECK(ri.kind == DYNG_RESULT_SSSP && ri.objective == 2 && ri.k == 1 && ri.graph_version == 0);
    EXPECT(dyng_result_info(NULL, &ri), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_result_info(m, NULL), DYNG_ERR_NULL_ARGUMENT);

    /* Paths: in the MOSP tree, 6 <- 5 <- 1 <- 0. */
    OK(dyng_result_path(m, DYNG_TREE_COMBINED, 6, NULL, 0, &len));
    CHECK(len == 4);
    OK(dyng_result_path(m, DYNG_TREE_COMBINED, 6, path, 8, &len));
    CHECK(len == 4 && path[0] == 0 && path[1] == 1 && path[2] == 5 && path[3] == 6);
    EXPECT(dyng_result_path(m, DYNG_TREE_COMBINED, 6, path, 2, &len), DYNG_ERR_CAPACITY);
    OK(dyng_result_path(s0, 0, 3, path, 8, &len));
    CHECK(len == 3 && path[1] == 2);
    EXPECT(dyng_result_path(s0, 1, 3, path, 8, &len), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_path(m, 3, 3, path, 8, &len), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_path(s0, 0, 7, path, 8, &len), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("target 7 is outside [0, n = 7)"));
    EXPECT(dyng_result_path(s0, 0, -2, path, 8, &len), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_path(s0, 0, 3, path, 8, NULL), DYNG_ERR_NULL_ARGUMENT);

    /* Views and copies: wrong arrays, objectives, lengths. */
    EXPECT(dyng_result_view(res, s0, 9, 0, &before), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_view(res, s0, DYNG_ARRAY_DISTANCES, 1, &before), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_view(res, s0, DYNG_ARRAY_PATH_COSTS, 0, &before), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_view(res, m, DYNG_ARRAY_PATH_COSTS, 1, &before), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_view(res, m, DYNG_ARRAY_DISTANCES, 3, &before), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_view(res, m, DYNG_ARRAY_DISTANCES, 0, NULL), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_result_view(NULL, m, DYNG_ARRAY_DISTANCES, 0, &before), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_result_copy(res, s0, DYNG_ARRAY_DISTANCES, 0, wrong_dist, N - 1), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_copy(res, s0, DYNG_ARRAY_DISTANCES, 0, NULL, N), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_view_data(NULL, &data, &len, &dtype), DYNG_ERR_NULL_ARGUMENT);

    /* Compute errors: source, objective, delta, K, preferences. */
    EXPECT(dyng_sssp_compute(res, g, 7, 0, NULL, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("source 7 is outside [0, n = 7)"));
    EXPECT(dyng_sssp_compute(res, g, -1, 0, NULL, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_sssp_compute(res, g, 0, 3, NULL, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("objective 3"));
    so.delta = -5;
    EXPECT(dyng_sssp_compute(res, g, 0, 0, &so, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_sssp_compute(NULL, g, 0, 0, NULL, &untouched), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_sssp_compute(res, g, 0, 0, NULL, NULL), DYNG_ERR_NULL_ARGUMENT);
    mo = dyng_mosp_options_default();
    mo.k = 5;
    EXPECT(dyng_mosp_compute(res, g, 0, &mo, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("K = 5"));
    mo.k = 0;
    mo.preferences = two_prefs;
    mo.num_preferences = 2;
    EXPECT(dyng_mosp_compute(res, g, 0, &mo, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    mo.num_preferences = 0;
    EXPECT(dyng_mosp_compute(res, g, 0, &mo, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    mo = dyng_mosp_options_default();
    mo.k = 2;
    dyng_result_free(s2);
    s2 = NULL;
    OK(dyng_mosp_compute(res, g, 0, &mo, &s2));
    OK(dyng_result_info(s2, &ri));
    CHECK(ri.kind == DYNG_RESULT_MOSP && ri.k == 2 && ri.graph_k == K && ri.graph_version == 1);
    CHECK(untouched == (dyng_result_t *)0x1);

    dyng_result_free(s0);
    dyng_result_free(s2);
    dyng_result_free(m);
    dyng_result_free(old);
    dyng_result_free(foreign);
    dyng_result_free(adopted);
    dyng_graph_free(g);
    dyng_graph_free(other);
}

/* ---- A MOSP result from trees the program holds (dyng_mosp_from_trees). ---- */
static void test_mosp_from_trees(const dyng_resources_t *res) {
    dyng_graph_t *g = thesis_graph(res);
    dyng_result_t *trees[K], *m = NULL, *mosp_as_tree = NULL;
    dyng_result_t *untouched = (dyng_result_t *)0x1;
    const dyng_result_t *ctrees[K], *swapped[K];
    dyng_batch_t b = thesis_batch();
    const uint32_t prefs[3] = {4, 1, 4}, two_prefs[2] = {1, 1};
    static const int64_t COMBINED[N] = {0, 11, 10, 20, 30, 23, 34};
    static const int32_t MOSP_TREE[N] = {-1, 0, 0, 2, 3, 1, 5};
    static const int64_t COSTS[N * K] = {0, 0, 0, 2, 1, 5, 4, 1, 1, 9, 17, 4, 10, 18, 5, 14, 2, 19, 15, 3, 20};
    int j;

    for (j = 0; j < K; j++) {
        OK(dyng_sssp_from_arrays(res, g, 0, (uint32_t)j, INIT_DIST[j], INIT_PARENT[j], false, &trees[j]));
        ctrees[j] = trees[j];
    }
    swapped[0] = trees[1];
    swapped[1] = trees[0];
    swapped[2] = trees[2];
    OK(dyng_mosp_compute(res, g, 0, NULL, &mosp_as_tree));
    EXPECT(dyng_mosp_from_trees(res, g, 0, NULL, K, prefs, 3, &untouched), DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_mosp_from_trees(res, g, 0, ctrees, 0, prefs, 3, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_mosp_from_trees(res, g, 0, swapped, K, prefs, 3, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("objective"));
    EXPECT(dyng_mosp_from_trees(res, g, 0, ctrees, K, two_prefs, 2, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    swapped[0] = mosp_as_tree;
    EXPECT(dyng_mosp_from_trees(res, g, 0, swapped, K, NULL, 0, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_mosp_from_trees(res, g, 3, ctrees, K, prefs, 3, &untouched), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(untouched == (dyng_result_t *)0x1);
    OK(dyng_mosp_from_trees(res, g, 0, ctrees, K, prefs, 3, &m));
    OK(dyng_update(res, g, &b, &m, 1, NULL));
    expect_i64(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0, COMBINED, N);
    expect_i32(res, m, DYNG_ARRAY_COMBINED_PARENTS, 0, MOSP_TREE, N);
    expect_i64(res, m, DYNG_ARRAY_PATH_COSTS, 0, COSTS, N * K);
    /* The adopted trees were copied: they are now stale for the updated graph. */
    EXPECT(dyng_update(res, g, &b, &trees[0], 1, NULL), DYNG_ERR_STALE_RESULT);

    for (j = 0; j < K; j++) dyng_result_free(trees[j]);
    dyng_result_free(m);
    dyng_result_free(mosp_as_tree);
    dyng_graph_free(g);
}

/* ---- The drop-in per-objective update on caller-owned arrays. ---- */
static void test_sosp_arrays(const dyng_resources_t *res) {
    dyng_graph_t *g = thesis_graph(res);
    dyng_batch_t b = thesis_batch();
    int32_t rp[N + 1], ci[M], w[K * M];
    /* The thesis batch deletes 1->3 and 4->1; its two insertions are new edges, so no insertion is
     * a changed edge (only raised weights of existing edges are). */
    int changed_src[2] = {1, 4}, changed_dst[2] = {3, 1};
    long long dist[N];
    int parent[N];
    dyng_update_stats_t st;
    dyng_csr_t one;
    int j, v;

    /* Apply the batch with dyng to get the updated graph, as a MOSP-style caller would itself. */
    OK(dyng_update(res, g, &b, NULL, 0, NULL));
    OK(dyng_graph_copy_csr(res, g, rp, ci, w));
    for (j = 0; j < K; j++) {
        one.n = N;
        one.m = M;
        one.k = 1;
        one.row_ptr = rp;
        one.col_ind = ci;
        one.weights = w + j * M;
        for (v = 0; v < N; v++) dist[v] = INIT_DIST[j][v];
        memcpy(parent, INIT_PARENT[j], sizeof parent);
        st = dyng_update_stats_default();
        CHECK(st.struct_size == sizeof st && st.invalidated == 0 && st.pushes == 0 && !st.fallback_used);
        OK(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, &st));
        for (v = 0; v < N; v++) CHECK(dist[v] == UPD_DIST[j][v]);
        CHECK(memcmp(parent, UPD_PARENT[j], sizeof parent) == 0);
        CHECK(st.invalidated == (j < 2 ? 4 : 0));
    }
    /* Errors leave the arrays as they were. */
    for (v = 0; v < N; v++) dist[v] = INIT_DIST[0][v];
    memcpy(parent, INIT_PARENT[0], sizeof parent);
    one.weights = w;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 7, 0, 16, dist, parent, NULL),
           DYNG_ERR_INVALID_ARGUMENT);
    changed_dst[1] = 70;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_INVALID_ARGUMENT);
    for (v = 0; v < N; v++) CHECK(dist[v] == INIT_DIST[0][v] && parent[v] == INIT_PARENT[0][v]);
    changed_dst[1] = 1;
    one.k = 3;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("K = 3"));
    one.k = 1;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, NULL, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_sosp_update_arrays(res, NULL, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_NULL_ARGUMENT);
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, NULL, parent, NULL),
           DYNG_ERR_NULL_ARGUMENT);
    /* A distance above (n - 1) * max_weight is refused, as the originals refuse it, also where the
     * vertex is invalidated (golden errors/e14). */
    for (v = 0; v < N; v++) dist[v] = INIT_DIST[0][v];
    dist[3] = 6 * 16 + 1;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("exceeds (n - 1) * maxWeight"));
    /* A parent out of range is an error, not a crash. */
    for (v = 0; v < N; v++) dist[v] = INIT_DIST[0][v];
    parent[3] = N;
    EXPECT(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL),
           DYNG_ERR_INVALID_ARGUMENT);
    parent[3] = INIT_PARENT[0][3];
    /* A workspace reserved ahead is the one the calls use: none is allocated by them. */
    {
        size_t before = 0, after = 0;
        OK(dyng_release_workspaces(res));
        OK(dyng_reserve_workspace(res, 1000));
        OK(dyng_workspace_bytes(res, &before));
        CHECK(before >= 38 * 1000);
        OK(dyng_sosp_update_arrays(res, &one, NULL, changed_src, changed_dst, 2, INS_DST, 2, 0, 0, 16, dist, parent, NULL));
        OK(dyng_workspace_bytes(res, &after));
        CHECK(after == before);
        for (v = 0; v < N; v++) dist[v] = INIT_DIST[0][v];
        memcpy(parent, INIT_PARENT[0], sizeof parent);
    }
    /* The static solve on the same arrays gives the updated tree of objective 0. */
    one.weights = w;
    OK(dyng_sosp_solve_arrays(res, &one, 0, 0, 0, dist, parent, NULL));
    for (v = 0; v < N; v++) CHECK(dist[v] == UPD_DIST[0][v] && parent[v] == UPD_PARENT[0][v]);
    dyng_graph_free(g);
}

/* ---- Handles: freed, double-freed and wrong-type handles are reported, never used. ---- */
static void test_handles(const dyng_resources_t *res) {
    dyng_graph_t *g = thesis_graph(res);
    dyng_result_t *r = NULL;
    dyng_view_t *v = NULL;
    dyng_resources_t *clone = NULL;
    dyng_graph_info_t info;
    size_t bytes;
    int32_t rp[N + 1];
    char msg[256];

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(dyng_sssp_compute(res, g, 0, 0, NULL, &r));
    OK(dyng_result_view(res, r, DYNG_ARRAY_PARENTS, 0, &v));

    /* Wrong handle types. */
    EXPECT(dyng_graph_info((const dyng_graph_t *)r, &info), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("not a live dyng_graph_t"));
    EXPECT(dyng_workspace_bytes((const dyng_resources_t *)g, &bytes), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_result_info((const dyng_result_t *)v, NULL), DYNG_ERR_INVALID_ARGUMENT);
    EXPECT(dyng_graph_copy_csr(res, (const dyng_graph_t *)v, rp, NULL, NULL), DYNG_ERR_INVALID_ARGUMENT);
    dyng_graph_free((dyng_graph_t *)r); /* refused: r stays alive */
    OK(dyng_result_path(r, 0, 3, NULL, 0, &bytes));

    /* Freed handles. The result's view outlives the result. */
    dyng_result_free(r);
    EXPECT(dyng_result_path(r, 0, 3, NULL, 0, &bytes), DYNG_ERR_INVALID_ARGUMENT);
    CHECK(last_error_has("already freed"));
    dyng_result_free(r); /* double free: reported, no crash */
    dyng_last_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "already freed") != NULL);
    dyng_view_release(v);
    dyng_view_release(v);
    dyng_graph_free(g);
    EXPECT(dyng_graph_info(g, &info), DYNG_ERR_INVALID_ARGUMENT);
    dyng_graph_free(g);

    OK(dyng_resources_clone(res, &clone));
    dyng_resources_free(clone);
    EXPECT(dyng_workspace_bytes(clone, &bytes), DYNG_ERR_INVALID_ARGUMENT);
    dyng_resources_free(clone);
    OK(dyng_workspace_bytes(res, &bytes)); /* the original lives on */
}

/* ---- Concurrent read-only calls from several threads on clones of one resources handle. ---- */
enum { THREADS = 4, ROUNDS = 25 };

struct shared {
    const dyng_resources_t *res;
    const dyng_graph_t *g;
    const dyng_result_t *m;
    int failures;
};

static void *reader(void *arg) {
    struct shared *sh = (struct shared *)arg;
    dyng_resources_t *mine = NULL;
    int round, j, bad = 0;
    if (dyng_resources_clone(sh->res, &mine) != DYNG_OK) {
        sh->failures++;
        return NULL;
    }
    for (round = 0; round < ROUNDS; round++) {
        for (j = 0; j < K; j++) {
            dyng_result_t *r = NULL;
            dyng_view_t *v = NULL;
            const void *data = NULL;
            size_t len = 0;
            uint32_t dtype = 0;
            int64_t copy[N];
            if (dyng_sssp_compute(mine, sh->g, 0, (uint32_t)j, NULL, &r) != DYNG_OK) bad++;
            if (dyng_result_copy(mine, r, DYNG_ARRAY_DISTANCES, (uint32_t)j, copy, N) != DYNG_OK) bad++;
            if (memcmp(copy, INIT_DIST[j], sizeof copy) != 0) bad++;
            if (dyng_result_view(mine, sh->m, DYNG_ARRAY_PARENTS, (uint32_t)j, &v) != DYNG_OK) bad++;
            if (dyng_view_data(v, &data, &len, &dtype) != DYNG_OK) bad++;
            if (len != N || memcmp(data, INIT_PARENT[j], N * sizeof(int32_t)) != 0) bad++;
            /* Errors on this thread set this thread's message only. */
            if (dyng_sssp_compute(mine, sh->g, 100 + j, 0, NULL, &r) != DYNG_ERR_INVALID_ARGUMENT) bad++;
            dyng_view_release(v);
            dyng_result_free(r);
        }
    }
    dyng_resources_free(mine);
    if (bad) {
        fprintf(stderr, "FAIL reader thread: %d bad results\n", bad);
        sh->failures += bad; /* each thread adds after its own work; joined before reading */
    }
    return NULL;
}

static void test_threads(void) {
    dyng_resources_options_t opt = dyng_resources_options_default();
    dyng_resources_t *res = NULL;
    pthread_t t[THREADS];
    struct shared sh[THREADS];
    dyng_result_t *m = NULL;
    dyng_graph_t *g;
    size_t bytes = 0;
    int i;

    opt.num_threads = 2;
    OK(dyng_resources_create(&opt, &res));
    g = thesis_graph(res);
    OK(dyng_mosp_compute(res, g, 0, NULL, &m));
    for (i = 0; i < THREADS; i++) {
        sh[i].res = res;
        sh[i].g = g;
        sh[i].m = m;
        sh[i].failures = 0;
        CHECK(pthread_create(&t[i], NULL, reader, &sh[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECK(sh[i].failures == 0);
    }
    OK(dyng_workspace_bytes(res, &bytes));
    CHECK(bytes > 0); /* the clones returned their workspaces to the shared pool */
    OK(dyng_release_workspaces(res));
    OK(dyng_workspace_bytes(res, &bytes));
    CHECK(bytes == 0);
    dyng_result_free(m);
    dyng_graph_free(g);
    dyng_resources_free(res);
}

int main(int argc, char **argv) {
    dyng_resources_options_t opt = dyng_resources_options_default();
    dyng_resources_t *seq = NULL, *par = NULL;
    int e, j;
    if (argc < 2) {
        fprintf(stderr, "usage: %s TMPDIR\n", argv[0]);
        return 2;
    }
    for (e = 0; e < M; e++)
        for (j = 0; j < K; j++) w_objective_major[j * M + e] = W_EDGE_MAJOR[e * K + j];

    test_basics();
    test_resources();
    opt.backend = DYNG_BACKEND_SEQUENTIAL;
    OK(dyng_resources_create(&opt, &seq));
    opt.backend = DYNG_BACKEND_PARALLEL;
    opt.num_threads = 3;
    OK(dyng_resources_create(&opt, &par));
    test_graphs(seq);
    test_files(seq, argv[1]);
    test_results(seq, 1);
    test_results(par, 5);
    test_mosp_from_trees(seq);
    test_mosp_from_trees(par);
    test_sosp_arrays(seq);
    test_sosp_arrays(par);
    test_handles(seq);
    test_threads();
    dyng_resources_free(seq);
    dyng_resources_free(par);

    printf("harness: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
