# Sourced by scripts/test-all.sh: installs what the whole suite needs beyond a Rust toolchain,
# once, and exports where it is. A second run finds everything in place and installs nothing.
#   - system packages (cmake, pkg-config, a C/C++ compiler, python3 with venv, git): installed
#     with apt-get when missing and running as root on a Debian-like system; otherwise the
#     script stops and names the packages to install;
#   - cbindgen 0.29.4 (the header generator the drift test pins): the one on PATH if it is that
#     version, else `cargo install --locked` into $DYNG_TOOLS_DIR;
#   - a Python venv at $DYNG_VENV with scripts/requirements-test.txt (the NVRTC wheel the kernel
#     compilation check uses; maturin, pytest, numpy, scipy, networkx, Dask and networkit for the
#     Python package's tests), reinstalled only when that file changes.
# Caches live under ${XDG_CACHE_HOME:-$HOME/.cache}: dyng-tools/ and dyng-venv/.

dyng_cache="${XDG_CACHE_HOME:-$HOME/.cache}"
: "${DYNG_TOOLS_DIR:=$dyng_cache/dyng-tools}"
: "${DYNG_VENV:=$dyng_cache/dyng-venv}"
export DYNG_TOOLS_DIR DYNG_VENV
DYNG_CBINDGEN_VERSION="0.29.4"

dyng_setup_packages() {
    local missing=() pkgs=()
    command -v cmake >/dev/null || { missing+=(cmake); pkgs+=(cmake); }
    command -v pkg-config >/dev/null || { missing+=(pkg-config); pkgs+=(pkg-config); }
    command -v cc >/dev/null || { missing+=(cc); pkgs+=(gcc); }
    command -v c++ >/dev/null || { missing+=(c++); pkgs+=(g++); }
    command -v git >/dev/null || { missing+=(git); pkgs+=(git); }
    command -v python3 >/dev/null || { missing+=(python3); pkgs+=(python3); }
    # A venv needs ensurepip, which Debian ships apart (python3-venv).
    if command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        missing+=(python3-venv)
        pkgs+=(python3-venv)
    fi
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "== setup: installing ${pkgs[*]} (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
        return 0
    fi
    echo "setup: missing ${missing[*]}; install them (Debian/Ubuntu: sudo apt-get install ${pkgs[*]})" \
        "and run the suite again" >&2
    return 1
}

dyng_setup_cbindgen() {
    if cbindgen --version 2>/dev/null | grep -qx "cbindgen $DYNG_CBINDGEN_VERSION"; then
        return 0
    fi
    export PATH="$DYNG_TOOLS_DIR/bin:$PATH"
    if cbindgen --version 2>/dev/null | grep -qx "cbindgen $DYNG_CBINDGEN_VERSION"; then
        return 0
    fi
    echo "== setup: installing cbindgen $DYNG_CBINDGEN_VERSION into $DYNG_TOOLS_DIR (cargo install --locked)"
    cargo install cbindgen --version "$DYNG_CBINDGEN_VERSION" --locked --quiet --root "$DYNG_TOOLS_DIR"
}

dyng_setup_venv() {
    local req="scripts/requirements-test.txt" stamp="$DYNG_VENV/.dyng-requirements"
    if [ ! -x "$DYNG_VENV/bin/python" ]; then
        echo "== setup: creating the Python venv $DYNG_VENV"
        python3 -m venv "$DYNG_VENV"
    fi
    if ! cmp -s "$req" "$stamp"; then
        echo "== setup: installing the Python packages of $req into $DYNG_VENV"
        "$DYNG_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
        cp "$req" "$stamp"
    fi
    # The NVRTC wheel's library, for scripts/nvrtc-check.sh (which installs nothing itself then).
    DYNG_NVRTC_DIR="$("$DYNG_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    export DYNG_NVRTC_DIR
}

dyng_setup_packages
dyng_setup_cbindgen
dyng_setup_venv
