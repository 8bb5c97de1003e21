"""examples/python/dyng_ctypes.py: its structs are the header's, field by field (checked with a C
compiler against include/dyng.h), and it runs against the library built here."""

import ctypes
import importlib.util
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, dyng_binary, skip

EXAMPLE = ROOT / "examples" / "python" / "dyng_ctypes.py"
C_NAMES = {"ResourcesOptions": "dyng_resources_options_t", "Edges": "dyng_edges_t", "Batch": "dyng_batch_t",
           "UpdateStats": "dyng_update_stats_t", "SsspOptions": "dyng_sssp_options_t",
           "MospOptions": "dyng_mosp_options_t"}


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("dyng_ctypes", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_struct_matches_the_header(example, tmp_path):
    cc = shutil.which("cc")
    if cc is None:
        skip("cc", "no C compiler on PATH to read the header's layout")
    lines, want = [], {}
    for py_name, c_name in C_NAMES.items():
        cls = getattr(example, py_name)
        lines.append(f'printf("{c_name} %zu\\n", sizeof({c_name}));')
        want[c_name] = ctypes.sizeof(cls)
        for field, _ in cls._fields_:
            lines.append(f'printf("{c_name}.{field} %zu\\n", offsetof({c_name}, {field}));')
            want[f"{c_name}.{field}"] = getattr(cls, field).offset
    src = tmp_path / "layout.c"
    src.write_text('#include <stddef.h>\n#include <stdio.h>\n#include "dyng.h"\nint main(void) {\n'
                   + "\n".join(lines) + "\nreturn 0;\n}\n")
    subprocess.run([cc, "-I", str(ROOT / "include"), "-o", str(tmp_path / "layout"), str(src)], check=True)
    out = subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True, text=True).stdout
    got = dict(l.rsplit(" ", 1) for l in out.splitlines())
    assert {k: int(v) for k, v in got.items()} == want


def test_it_runs_against_the_library_built_here():
    lib = dyng_binary("libdyng.so")
    if lib is None:
        skip("cargo-build", "target/release/libdyng.so is missing: cargo build --release builds it")
    out = subprocess.run([sys.executable, str(EXAMPLE), str(lib)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "PASS", out.stdout + out.stderr


def test_it_reads_no_byte_outside_its_structs_under_valgrind():
    """The bug this layout check was made for: a 72-byte options struct where the library read 80
    ("Invalid read of size 8 ... 0 bytes after a block of size 72")."""
    lib = dyng_binary("libdyng.so")
    valgrind = shutil.which("valgrind")
    if lib is None or valgrind is None:
        skip("valgrind", "valgrind and target/release/libdyng.so are needed")
    # The interpreter itself (not a launcher script), with the system allocator, so that valgrind
    # sees every block; CPython's own uninitialised-value reports are not what this looks for.
    env = dict(__import__("os").environ, PYTHONMALLOC="malloc")
    out = subprocess.run([valgrind, "--leak-check=no", sys.executable, str(EXAMPLE), str(lib)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr[-3000:]
    bad = [l for l in out.stderr.splitlines() if "Invalid read" in l or "Invalid write" in l]
    assert not bad, "\n".join(bad)
