//! The worker runs as the caller, so only a trusted executable from the installation is run: a
//! worker in a folder writable by others, writable by others itself or owned by another user is
//! refused with the reason (explicit path, the C ABI). The CLI's side (`DYNG_WORKER`, the search
//! that never leaves the installation, the installed layout) is in cli/tests/cli_worker_trust.rs.

mod common;
mod worker_util;

use common::capi::last_error;
use dyng::ffi::*;
use dyng::worker::{Client, WorkerOptions};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dyng-trust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn copy_exe(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn spawn(path: &Path) -> dyng::Result<Client> {
    Client::spawn(WorkerOptions { worker_path: Some(path.to_path_buf()), ..worker_util::opts() })
}

/// The refusal of spawning the worker at `path`.
fn refusal(path: &Path) -> dyng::Error {
    match spawn(path) {
        Ok(_) => panic!("{} was run", path.display()),
        Err(e) => e,
    }
}

/// Creates worker-isolated resources for `path` through the C ABI: the status and message.
fn create(path: &Path) -> (dyng_status_t, String) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut opt = dyng_resources_options_default();
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = c.as_ptr();
    let mut res = std::ptr::null_mut();
    // SAFETY: a whole options struct with a NUL-terminated path; the handle is freed.
    let s = unsafe { dyng_resources_create(&opt, &mut res) };
    let msg = last_error();
    // SAFETY: NULL or the handle just created.
    unsafe { dyng_resources_free(res) };
    (s, msg)
}

#[test]
fn a_worker_in_a_folder_writable_by_others_is_refused() {
    let _serial = worker_util::serial();
    let dir = scratch("open");
    let worker = dir.join("open/dyng-worker");
    copy_exe(env!("CARGO_BIN_EXE_dyng-worker"), &worker);
    chmod(&dir.join("open"), 0o777);
    let e = refusal(&worker);
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("/open is writable by others (mode 0777)"), "{e}");
    let (s, msg) = create(&worker);
    assert_eq!(s, DYNG_ERR_NOT_SUPPORTED, "{msg}");
    assert!(msg.contains("writable by others") && msg.contains("must be owned by the caller or root"), "{msg}");
    // The executable itself writable by others, in a closed folder.
    chmod(&dir.join("open"), 0o755);
    chmod(&worker, 0o777);
    assert!(refusal(&worker).to_string().contains("it is writable by others (mode 0777)"));
    // Closed up, the same file runs.
    chmod(&worker, 0o755);
    let c = spawn(&worker).unwrap();
    assert_eq!(c.echo(b"trusted").unwrap().bytes(dyng::worker::kind::ECHO_BYTES).unwrap(), b"trusted");
    drop(c);
    assert_eq!(create(&worker).0, DYNG_OK);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_worker_owned_by_another_user_is_refused() {
    let _serial = worker_util::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip::skip("a_worker_owned_by_another_user_is_refused", "root", "only root can make a file of another user to refuse");
        return;
    }
    let dir = scratch("owner");
    let worker = dir.join("dyng-worker");
    copy_exe(env!("CARGO_BIN_EXE_dyng-worker"), &worker);
    std::os::unix::fs::chown(&worker, Some(65534), None).unwrap();
    let e = refusal(&worker);
    assert!(e.to_string().contains("it is owned by uid 65534, neither the caller nor root"), "{e}");
    // The CLI refuses it the same way through $DYNG_WORKER: cli/tests/cli_worker_trust.rs.
    std::fs::remove_dir_all(dir).unwrap();
}
