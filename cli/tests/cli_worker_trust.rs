//! `dyng mosp --isolation worker` runs only a trusted worker from the installation: one owned by
//! another user is refused through `$DYNG_WORKER` as the library refuses it (tests/worker_trust.rs),
//! the search never leaves the installation (a program in `victim/bin/` used to run
//! `victim/dyng-worker`), and the installed layout (`bin/dyng-worker`, a link to
//! `lib/dyng/dyng-worker`) is found.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dyng-cli-trust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn copy_exe(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `dyng mosp --isolation worker` on `case` by the program at `exe`; `worker`: `$DYNG_WORKER`.
fn run_cli(exe: &Path, case: &common::Case, out: &Path, worker: Option<&Path>) -> std::process::Output {
    let mut cmd = common::mosp_command(exe, case, out);
    cmd.args(["--isolation", "worker"]);
    match worker {
        Some(w) => cmd.env("DYNG_WORKER", w),
        None => cmd.env_remove("DYNG_WORKER"),
    };
    cmd.output().unwrap()
}

#[test]
fn a_worker_owned_by_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip::skip("cli_worker_trust::a_worker_owned_by_another_user_is_refused", "root", "only root can make a file of another user to refuse");
        return;
    }
    let dir = scratch("owner");
    let worker = dir.join("dyng-worker");
    copy_exe(&support::worker(), &worker);
    std::os::unix::fs::chown(&worker, Some(65534), None).unwrap();
    // Through $DYNG_WORKER, as the drop-in CLI finds it (on a golden case: it reads its inputs
    // before it looks for the worker).
    let case = &common::cases(&common::local_golden().join("small"))[0];
    let o2 = run_cli(Path::new(env!("CARGO_BIN_EXE_dyng")), case, &dir.join("out"), Some(&worker));
    let err2 = String::from_utf8_lossy(&o2.stderr);
    assert_eq!(o2.status.code(), Some(1), "{err2}");
    assert!(err2.contains("owned by uid 65534"), "{err2}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_search_never_leaves_the_installation() {
    let worker = support::worker();
    let case = common::cases(&common::local_golden().join("small")).into_iter().find(|c| !c.is_error()).unwrap();
    let victim = scratch("victim");
    copy_exe(Path::new(env!("CARGO_BIN_EXE_dyng")), &victim.join("bin/dyng"));
    // A worker one folder above the program's: not the installation's, so never run.
    copy_exe(&worker, &victim.join("dyng-worker"));
    let o = run_cli(&victim.join("bin/dyng"), &case, &victim.join("out"), None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "the planted worker ran: {err}");
    let bin = victim.join("bin");
    let want = format!(
        "no dyng-worker executable found (tried {} (missing), {} (missing))",
        bin.join("dyng/dyng-worker").display(),
        bin.join("dyng-worker").display()
    );
    assert!(err.contains(&want), "{err}");
    // The installed layout is found: bin/dyng-worker, a link to lib/dyng/dyng-worker.
    copy_exe(&worker, &victim.join("lib/dyng/dyng-worker"));
    std::os::unix::fs::symlink("../lib/dyng/dyng-worker", bin.join("dyng-worker")).unwrap();
    let o = run_cli(&victim.join("bin/dyng"), &case, &victim.join("out"), None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(victim.join("out/combinedGraph/mospCosts.txt").exists());
    std::fs::remove_dir_all(victim).unwrap();
}
