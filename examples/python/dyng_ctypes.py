#!/usr/bin/env python3
"""dyng's C ABI from Python through ctypes: a graph from arrays, a MOSP result, a batch, an
update, views. (The `dyng` Python package, `pip install ./python`, is the way to use dyng from
Python; this example shows the C library to other languages' bindings.)

Usage: python3 dyng_ctypes.py [path/to/libdyng.so]
       (default: $DYNG_LIB, else the libdyng the loader finds, else libdyng.so.0.1)
Prints the thesis example's updated distances and MOSP path costs and exits non-zero on a mismatch.

The structs below mirror include/dyng.h. Each versioned struct starts with `struct_size`; before
use, `check_layout` compares every struct the library returns by value with the size the library
reports in it, so a struct that drifts from the header is an error here, not a short read there.
"""
import ctypes as C
import ctypes.util
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
                ("worker_call_timeout_ms", C.c_uint32), ("profile", C.c_bool), ("worker_flags", C.c_uint64)]


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


class SsspOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("delta", C.c_int64), ("fallback", C.c_uint32)]


class MospOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("k", C.c_uint32), ("preferences", C.POINTER(C.c_uint32)),
                ("num_preferences", C.c_size_t), ("delta", C.c_int64), ("fallback", C.c_uint32)]


# The structs the library returns by value from a `_default()` function, which sets struct_size.
DEFAULTS = {"dyng_resources_options_default": ResourcesOptions, "dyng_update_stats_default": UpdateStats,
            "dyng_sssp_options_default": SsspOptions, "dyng_mosp_options_default": MospOptions}


class _Returned(C.Structure):
    # Room for any of the structs above: a struct this large is returned through a caller buffer
    # (x86-64 and AArch64 alike), of which the library writes its own size only.
    _fields_ = [("struct_size", C.c_size_t), ("rest", C.c_ubyte * 504)]


def check_layout(lib):
    """Raises unless each struct above has the size the library gives it."""
    for func, cls in DEFAULTS.items():
        f = getattr(lib, func)
        f.restype = _Returned
        f.argtypes = []
        got = f().struct_size
        if got != C.sizeof(cls):
            raise RuntimeError(f"{cls.__name__} is {C.sizeof(cls)} bytes here but {got} in the library "
                               f"({func}); update its _fields_ from include/dyng.h")
        f.restype = cls


def load(path):
    lib = C.CDLL(path)
    lib.dyng_version.restype = C.c_char_p
    lib.dyng_status_string.restype = C.c_char_p
    lib.dyng_status_string.argtypes = [C.c_int32]
    lib.dyng_last_error_message.restype = C.c_size_t
    lib.dyng_last_error_message.argtypes = [C.c_char_p, C.c_size_t]
    check_layout(lib)
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
    path = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DYNG_LIB")
            or ctypes.util.find_library("dyng") or "libdyng.so.0.1")
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
        stats = lib.dyng_update_stats_default()
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
