#!/usr/bin/env python3
"""dyng from Python through ctypes: a graph from arrays, a MOSP result, a batch, an update, views.

Usage: python3 dyng_ctypes.py [path/to/libdyng.so]   (default: $DYNG_LIB, else libdyng.so.0.1)
Prints the thesis example's updated distances and MOSP path costs and exits non-zero on a mismatch.
"""
import ctypes as C
import os
import sys

DYNG_OK = 0
DYNG_BACKEND_SEQUENTIAL = 0
DYNG_ARRAY_DISTANCES, DYNG_ARRAY_PATH_COSTS = 0, 4
DYNG_DTYPE_INT32, DYNG_DTYPE_INT64 = 0, 1
i32p, i64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64)


class ResourcesOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("backend", C.c_uint32), ("num_threads", C.c_size_t),
                ("device", C.c_int32), ("stream", C.c_void_p), ("isolation", C.c_uint32),
                ("worker_path", C.c_char_p), ("worker_start_timeout_ms", C.c_uint32),
                ("worker_call_timeout_ms", C.c_uint32), ("profile", C.c_bool)]


class Edges(C.Structure):
    _fields_ = [("n", C.c_size_t), ("m", C.c_size_t), ("k", C.c_uint32),
                ("src", i32p), ("dst", i32p), ("weights", i32p)]


class Batch(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("num_insertions", C.c_size_t), ("ins_src", i32p),
                ("ins_dst", i32p), ("ins_weights", i32p), ("num_deletions", C.c_size_t),
                ("del_src", i32p), ("del_dst", i32p)]


class UpdateStats(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("invalidated", C.c_int64), ("affected", C.c_int64),
                ("iterations", C.c_int64), ("epochs", C.c_int64), ("pushes", C.c_int64),
                ("packed_parents", C.c_bool), ("fallback_used", C.c_bool)]


def load(path):
    lib = C.CDLL(path)
    lib.dyng_version.restype = C.c_char_p
    lib.dyng_status_string.restype = C.c_char_p
    lib.dyng_status_string.argtypes = [C.c_int32]
    lib.dyng_last_error_message.restype = C.c_size_t
    lib.dyng_last_error_message.argtypes = [C.c_char_p, C.c_size_t]
    lib.dyng_resources_options_default.restype = ResourcesOptions
    lib.dyng_resources_create.argtypes = [C.POINTER(ResourcesOptions), C.POINTER(C.c_void_p)]
    lib.dyng_graph_from_edges.argtypes = [C.c_void_p, C.POINTER(Edges), C.POINTER(C.c_void_p)]
    lib.dyng_mosp_compute.argtypes = [C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p, C.POINTER(C.c_void_p)]
    lib.dyng_update.argtypes = [C.c_void_p, C.c_void_p, C.POINTER(Batch), C.POINTER(C.c_void_p),
                                C.c_size_t, C.POINTER(UpdateStats)]
    lib.dyng_result_view.argtypes = [C.c_void_p, C.c_void_p, C.c_uint32, C.c_uint32, C.POINTER(C.c_void_p)]
    lib.dyng_view_data.argtypes = [C.c_void_p, C.POINTER(C.c_void_p), C.POINTER(C.c_size_t), C.POINTER(C.c_uint32)]
    for name in ("dyng_resources_free", "dyng_graph_free", "dyng_result_free", "dyng_view_release"):
        getattr(lib, name).argtypes = [C.c_void_p]
        getattr(lib, name).restype = None
    return lib


def check(lib, status, what):
    """Raises with dyng's status name and this thread's last error message."""
    if status != DYNG_OK:
        need = lib.dyng_last_error_message(None, 0)
        buf = C.create_string_buffer(need)
        lib.dyng_last_error_message(buf, need)
        raise RuntimeError(f"{what}: {lib.dyng_status_string(status).decode()}: {buf.value.decode()}")


def arr(ctype, values):
    return (ctype * len(values))(*values)


def view_values(lib, res, result, array, k):
    """Copies a view's elements into a Python list (the view is released afterwards)."""
    v, data, n, dtype = C.c_void_p(), C.c_void_p(), C.c_size_t(), C.c_uint32()
    check(lib, lib.dyng_result_view(res, result, array, k, C.byref(v)), "dyng_result_view")
    try:
        check(lib, lib.dyng_view_data(v, C.byref(data), C.byref(n), C.byref(dtype)), "dyng_view_data")
        ctype = C.c_int64 if dtype.value == DYNG_DTYPE_INT64 else C.c_int32
        return list(C.cast(data, C.POINTER(ctype))[: n.value])
    finally:
        lib.dyng_view_release(v)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DYNG_LIB", "libdyng.so.0.1")
    lib = load(path)
    print("dyng", lib.dyng_version().decode())
    opt = lib.dyng_resources_options_default()
    opt.backend = DYNG_BACKEND_SEQUENTIAL
    res, g, m = C.c_void_p(), C.c_void_p(), C.c_void_p()
    check(lib, lib.dyng_resources_create(C.byref(opt), C.byref(res)), "dyng_resources_create")
    try:
        src = arr(C.c_int32, [0, 0, 1, 2, 2, 3, 4, 4, 4, 5])
        dst = arr(C.c_int32, [1, 2, 3, 1, 3, 4, 1, 5, 6, 6])
        w = arr(C.c_int32, [2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3, 1, 1, 1,
                            4, 3, 2, 1, 2, 2, 5, 6, 2, 1, 1, 1])
        edges = Edges(7, 10, 3, src, dst, w)
        check(lib, lib.dyng_graph_from_edges(res, C.byref(edges), C.byref(g)), "dyng_graph_from_edges")
        check(lib, lib.dyng_mosp_compute(res, g, 0, None, C.byref(m)), "dyng_mosp_compute")
        batch = Batch(C.sizeof(Batch), 2, arr(C.c_int32, [3, 1]), arr(C.c_int32, [5, 5]),
                      arr(C.c_int32, [10, 2, 12, 12, 1, 14]), 2, arr(C.c_int32, [1, 4]), arr(C.c_int32, [3, 1]))
        stats = UpdateStats(struct_size=C.sizeof(UpdateStats))
        results = (C.c_void_p * 1)(m)
        check(lib, lib.dyng_update(res, g, C.byref(batch), results, 1, C.byref(stats)), "dyng_update")
        dist0 = view_values(lib, res, m, DYNG_ARRAY_DISTANCES, 0)
        costs = view_values(lib, res, m, DYNG_ARRAY_PATH_COSTS, 0)
        print("distances[0]:", *dist0)
        print("costs[6]:", *costs[18:21])
        print("invalidated:", stats.invalidated)
        # An error surfaces as an exception with dyng's message.
        try:
            check(lib, lib.dyng_mosp_compute(res, g, 99, None, C.byref(C.c_void_p())), "dyng_mosp_compute")
        except RuntimeError as e:
            print("caught:", e)
        ok = dist0 == [0, 2, 4, 9, 10, 11, 12] and costs[18:21] == [15, 24, 7] and stats.invalidated == 8
    finally:
        lib.dyng_result_free(m)
        lib.dyng_graph_free(g)
        lib.dyng_resources_free(res)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
