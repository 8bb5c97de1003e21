// dyng from C++17 with small RAII wrappers: handles live in std::unique_ptr with dyng's free
// functions as deleters, and a failed call throws dyng::error carrying the status and message.
#include <dyng.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dyng {

struct error : std::runtime_error {
    dyng_status_t status;
    error(dyng_status_t s, const std::string &msg) : std::runtime_error(msg), status(s) {}
};

// Throws on any status but DYNG_OK, with this thread's last error message.
inline void check(dyng_status_t s) {
    if (s == DYNG_OK) return;
    std::string msg(dyng_last_error_message(nullptr, 0), '\0');
    dyng_last_error_message(msg.data(), msg.size());
    msg.pop_back();  // the terminator
    throw error(s, std::string(dyng_status_string(s)) + ": " + msg);
}

template <class T, void (*Free)(T *)>
struct deleter {
    void operator()(T *p) const noexcept { Free(p); }
};
using resources = std::unique_ptr<dyng_resources_t, deleter<dyng_resources_t, dyng_resources_free>>;
using graph = std::unique_ptr<dyng_graph_t, deleter<dyng_graph_t, dyng_graph_free>>;
using result = std::unique_ptr<dyng_result_t, deleter<dyng_result_t, dyng_result_free>>;
using view = std::unique_ptr<dyng_view_t, deleter<dyng_view_t, dyng_view_release>>;

inline resources make_resources(uint32_t backend) {
    auto opt = dyng_resources_options_default();
    opt.backend = backend;
    dyng_resources_t *r = nullptr;
    check(dyng_resources_create(&opt, &r));
    return resources(r);
}

// A graph from an edge list with edge-major weights.
inline graph make_graph(const resources &res, size_t n, uint32_t k, const std::vector<int32_t> &src,
                        const std::vector<int32_t> &dst, const std::vector<int32_t> &w) {
    dyng_edges_t e{n, src.size(), k, src.data(), dst.data(), w.data()};
    dyng_graph_t *g = nullptr;
    check(dyng_graph_from_edges(res.get(), &e, &g));
    return graph(g);
}

inline result mosp(const resources &res, const graph &g, int32_t source) {
    dyng_result_t *r = nullptr;
    check(dyng_mosp_compute(res.get(), g.get(), source, nullptr, &r));
    return result(r);
}

// Copies a result array into a vector (int64_t arrays: distances and path costs).
inline std::vector<int64_t> copy_i64(const resources &res, const result &r, uint32_t array, uint32_t k, size_t len) {
    std::vector<int64_t> out(len);
    check(dyng_result_copy(res.get(), r.get(), array, k, out.data(), out.size()));
    return out;
}

}  // namespace dyng

int main() {
    try {
        auto res = dyng::make_resources(DYNG_BACKEND_PARALLEL);
        auto g = dyng::make_graph(res, 7, 3, {0, 0, 1, 2, 2, 3, 4, 4, 4, 5}, {1, 2, 3, 1, 3, 4, 1, 5, 6, 6},
                                  {2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3, 1, 1, 1, 4, 3, 2, 1, 2, 2, 5, 6, 2, 1, 1, 1});
        auto m = dyng::mosp(res, g, 0);
        std::vector<int32_t> ins_src{3, 1}, ins_dst{5, 5}, ins_w{10, 2, 12, 12, 1, 14}, del_src{1, 4}, del_dst{3, 1};
        dyng_batch_t batch{sizeof(dyng_batch_t), 2, ins_src.data(), ins_dst.data(), ins_w.data(),
                           2, del_src.data(), del_dst.data()};
        dyng_result_t *list[] = {m.get()};
        dyng::check(dyng_update(res.get(), g.get(), &batch, list, 1, nullptr));
        auto costs = dyng::copy_i64(res, m, DYNG_ARRAY_PATH_COSTS, 0, 7 * 3);
        std::cout << "costs[6] = " << costs[18] << ' ' << costs[19] << ' ' << costs[20] << '\n';

        // Errors become exceptions that carry the message.
        try {
            dyng::mosp(res, g, 42);
        } catch (const dyng::error &e) {
            std::cout << "caught: " << e.what() << '\n';
        }
    } catch (const std::exception &e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
    return 0;
}
