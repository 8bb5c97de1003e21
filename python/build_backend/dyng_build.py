"""The PEP 517 backend of the dyng package: maturin, plus the `dyng-worker` executable.

Worker isolation (`dyng.Resources(isolation="worker")`) runs a `dyng-worker` process, which the
library takes only from where its installation put it, here next to the extension module:
`dyng/dyng-worker` in the installed package (src/worker/locate.rs). maturin builds one Rust
artifact per wheel, so this backend builds the worker with cargo, in the workspace's target
folder (where the library's own builds leave it already), and adds it to the wheel maturin
built, with its RECORD entry; an editable install finds it in the package's source folder. The
extension is built in a target folder of its own (`_own_target_folder`).
"""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import maturin
from maturin import *  # noqa: F401,F403  (the hooks not overridden here)

PACKAGE = Path(__file__).resolve().parent.parent
IN_WHEEL = "dyng/dyng-worker"


def _build_worker():
    """Builds dyng-worker (release) and returns the path cargo wrote it to."""
    cmd = [
        os.environ.get("CARGO", "cargo"), "build", "--release", "--locked", "--bin", "dyng-worker",
        "--manifest-path", str(PACKAGE.parent / "Cargo.toml"), "--message-format=json-render-diagnostics",
    ]
    print("dyng: building the worker:", " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"dyng: building dyng-worker failed (cargo exit {out.returncode}; its errors are above)")
    exe = None
    for line in out.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "dyng-worker":
            exe = msg.get("executable") or exe
    if not exe:
        raise RuntimeError("dyng: cargo reported no dyng-worker executable")
    return Path(exe)


def _worker_bytes(exe):
    """The worker without its debug information (as `scripts/install.sh` installs it)."""
    if not shutil.which("strip"):
        return exe.read_bytes()
    tmp = PACKAGE / "build_backend" / ".dyng-worker.stripped"
    try:
        subprocess.run(["strip", "--strip-debug", "-o", str(tmp), str(exe)], check=True)
        return tmp.read_bytes()
    finally:
        tmp.unlink(missing_ok=True)


def _add_to_wheel(wheel, data):
    """Adds `data` as an executable `dyng/dyng-worker` to the wheel file, and to its RECORD."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = wheel.with_name(wheel.name + ".tmp")
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        record = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        for item in zin.infolist():
            if item.filename not in (record, IN_WHEEL):
                zout.writestr(item, zin.read(item.filename))
        info = zipfile.ZipInfo(IN_WHEEL, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o100755 << 16  # a regular file, rwxr-xr-x: pip keeps the mode
        info.compress_type = zipfile.ZIP_DEFLATED
        zout.writestr(info, data)
        lines = [l for l in zin.read(record).decode().splitlines() if l and not l.startswith(IN_WHEEL + ",")]
        lines.insert(len(lines) - 1 if lines and lines[-1].startswith(record + ",") else len(lines),
                     f"{IN_WHEEL},sha256={digest},{len(data)}")
        zout.writestr(record, "\n".join(lines) + "\n")
    os.replace(tmp, wheel)


def _own_target_folder():
    """Gives maturin a target folder of its own (`<target>/python`): the extension unifies the
    features of the library's dependencies with PyO3's, and the library's unit (its .so and .a
    have no hash in their names) would otherwise be rebuilt at every switch between the two."""
    base = Path(os.environ.get("CARGO_TARGET_DIR") or PACKAGE.parent / "target")
    os.environ["CARGO_TARGET_DIR"] = str(base / "python")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    data = _worker_bytes(_build_worker())
    _own_target_folder()
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    _add_to_wheel(Path(wheel_directory) / name, data)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    data = _worker_bytes(_build_worker())
    target = PACKAGE / "python" / "dyng" / "dyng-worker"
    tmp = target.with_name(".dyng-worker.tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, target)
    _own_target_folder()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
