#!/usr/bin/env python3
"""Finds and probes the CUDA libraries dyng loads at run time (standard library only).

usage:
  cudalibs.py nvrtc    print the path of a loadable NVRTC 13 library (libnvrtc.so.13)
  cudalibs.py driver   load libcuda.so.1, initialise it and describe every device; print the
                       folder to add to LD_LIBRARY_PATH (empty when the loader finds it already)

Human-readable findings go to stderr, the one machine-readable line to stdout. Exit status 0 when
the library is usable, 1 otherwise (the message says what is missing).
"""

import ctypes
import glob
import os
import site
import subprocess
import sys

NVRTC = "libnvrtc.so.13"
DRIVER = "libcuda.so.1"
# Where the wheel `nvidia-cuda-nvrtc` puts the library (CUDA 13 layout, then the older one).
WHEEL_DIRS = ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib")
DRIVER_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64",
               "/usr/local/nvidia/lib", "/usr/lib/wsl/lib", "/usr/local/cuda/compat")


def say(msg):
    print(msg, file=sys.stderr)


def ldconfig_paths(name):
    """Paths of `name` in the loader cache (empty when ldconfig is absent)."""
    for ldconfig in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        return [line.split("=>")[-1].strip() for line in out.splitlines()
                if line.strip().startswith(name + " ")]
    return []


def nvrtc_candidates():
    """NVRTC files in the order they are preferred."""
    if os.environ.get("DYNG_NVRTC_LIB"):
        yield os.environ["DYNG_NVRTC_LIB"]
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # some virtual environments lack getsitepackages
        pass
    roots += [os.environ.get("DYNG_NVRTC_DIR", ""),
              os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "dyng-nvrtc")]
    for root in roots:
        for sub in WHEEL_DIRS:
            if root:
                yield os.path.join(root, sub, NVRTC)
    homes = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    homes += sorted(glob.glob("/usr/local/cuda-13*"), reverse=True)
    for home in homes:
        if home:
            yield os.path.join(home, "lib64", NVRTC)
            yield os.path.join(home, "targets/x86_64-linux/lib", NVRTC)
    yield from ldconfig_paths(NVRTC)


def find_nvrtc():
    tried = []
    for path in nvrtc_candidates():
        if path in tried:
            continue
        tried.append(path)
        if not os.path.isfile(path):
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            major, minor = ctypes.c_int(), ctypes.c_int()
            rc = lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        except OSError as e:
            say("note: %s does not load: %s" % (path, e))
            continue
        if rc != 0 or major.value < 13:
            say("note: %s is NVRTC %d.%d (rc %d); dyng's kernels need 13" % (path, major.value, minor.value, rc))
            continue
        say("NVRTC %d.%d: %s" % (major.value, minor.value, path))
        print(path)
        return 0
    say("no NVRTC 13 library: none of these loads: %s. Install the CUDA 13 toolkit or the wheel "
        "nvidia-cuda-nvrtc, or set DYNG_NVRTC_LIB." % ", ".join(tried))
    return 1


def error_name(lib, rc):
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return "CUresult %d" % rc


def load_driver():
    """(library, folder to add to the loader path or '') or raises OSError naming every try."""
    try:
        return ctypes.CDLL(DRIVER), ""
    except OSError as first:
        reasons = [str(first)]
    for d in list(DRIVER_DIRS) + [os.path.dirname(p) for p in ldconfig_paths(DRIVER)]:
        path = os.path.join(d, DRIVER)
        if os.path.isfile(path):
            try:
                return ctypes.CDLL(path), d
            except OSError as e:
                reasons.append(str(e))
    say("searched for %s in the loader path, %s" % (DRIVER, ", ".join(DRIVER_DIRS)))
    raise OSError("%s cannot be loaded (%s)" % (DRIVER, "; ".join(reasons)))


def driver():
    try:
        lib, folder = load_driver()
    except OSError as e:
        say("no CUDA driver: %s" % e)
        return 1
    rc = lib.cuInit(0)
    if rc != 0:
        say("no CUDA driver: %s loads but cuInit fails: %s" % (DRIVER, error_name(lib, rc)))
        return 1
    version, count = ctypes.c_int(), ctypes.c_int()
    lib.cuDriverGetVersion(ctypes.byref(version))
    rc = lib.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value == 0:
        say("no CUDA device: the driver (CUDA %d.%d) reports %d device(s) (%s)"
            % (version.value // 1000, version.value % 1000 // 10, count.value, error_name(lib, rc)))
        return 1
    say("CUDA driver %d.%d (%s%s), %d device(s)" % (version.value // 1000, version.value % 1000 // 10,
        DRIVER, " from " + folder if folder else "", count.value))
    ok = True
    for i in range(count.value):
        dev = ctypes.c_int()
        lib.cuDeviceGet(ctypes.byref(dev), i)
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, dev)
        attr = {}
        # compute capability major/minor, multiprocessors, cooperative launch
        for key, code in (("major", 75), ("minor", 76), ("sms", 16), ("coop", 95)):
            v = ctypes.c_int()
            lib.cuDeviceGetAttribute(ctypes.byref(v), code, dev)
            attr[key] = v.value
        mem = ctypes.c_size_t()
        lib.cuDeviceTotalMem_v2(ctypes.byref(mem), dev)
        say("device %d: %s, sm_%d%d, %d multiprocessors, %.1f GiB, cooperative launch %s"
            % (i, name.value.decode(errors="replace"), attr["major"], attr["minor"], attr["sms"],
               mem.value / 2**30, "yes" if attr["coop"] else "NO"))
        ok = ok and (i > 0 or attr["coop"] == 1)
    if not ok:
        say("device 0 cannot launch cooperative kernels, which dyng's update kernel needs")
        return 1
    print(folder)
    return 0


def main(argv):
    if len(argv) != 2 or argv[1] not in ("nvrtc", "driver"):
        say(__doc__)
        return 2
    return find_nvrtc() if argv[1] == "nvrtc" else driver()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
