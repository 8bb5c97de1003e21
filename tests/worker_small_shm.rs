//! T19 (spec 17.4): replies far larger than `/dev/shm`. The test re-executes its role inside
//! `unshare -Urm` (an unprivileged user and mount namespace) with a 64 MiB tmpfs mounted on
//! `/dev/shm`. Blocks are memfds, which never live in `/dev/shm` (spec 16), so an ECHO and a VIEW
//! of more than 64 MiB still work there; the role first shows that a named file of that size
//! does not fit, so the namespace really constrains `/dev/shm`. This guards against any
//! regression to named shared-memory blocks.
//!
//! Where the kernel or its policy forbids unprivileged user namespaces (`unshare -Urm true`
//! fails), the test prints a notice and returns: a legitimate skip, since the property cannot
//! be set up there, not a pass of it.

#[path = "common/skip.rs"]
mod skip;
mod worker_util;

use dyng::worker::{kind, Client};
use dyng::{Graph, Resources, SsspOptions, SsspResult};
use std::process::Command;
use worker_util::*;

const SHM_MIB: u64 = 64;

/// Bytes of the filesystem mounted on `path`.
fn fs_bytes(path: &str) -> u64 {
    let p = std::ffi::CString::new(path).unwrap();
    // SAFETY (test): statvfs fills the zeroed struct it is given.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(p.as_ptr(), &mut st), 0, "statvfs {path}");
        st.f_blocks as u64 * st.f_frsize as u64
    }
}

/// The role, inside the namespace: `/dev/shm` is the small tmpfs; an 80 MiB ECHO and a VIEW of
/// an SSSP result's DIST and PARENT (12 bytes per vertex on a 2400 x 2400 grid: 69 MB) pass
/// through the worker, byte-equal to what went in or to the in-process result.
#[test]
#[ignore]
fn role_small_shm() {
    if !is_role("small_shm") {
        return;
    }
    let limit = SHM_MIB << 20;
    assert_eq!(fs_bytes("/dev/shm"), limit, "/dev/shm is not the namespace's small tmpfs");
    let named = "/dev/shm/dyng-t19-probe";
    let fits = std::fs::write(named, vec![1u8; (limit + (1 << 20)) as usize]);
    let _ = std::fs::remove_file(named);
    assert!(fits.is_err(), "a named file larger than /dev/shm fitted: the namespace does not constrain it");

    let c = Client::spawn(opts()).unwrap();
    let payload: Vec<u8> = (0..80usize << 20).map(|i| (i % 251) as u8).collect();
    let v = c.echo(&payload).unwrap();
    assert_eq!(v.bytes(kind::ECHO_BYTES).unwrap(), &payload[..], "echo");
    drop(v);
    drop(payload);

    let g = grid(2400, 2400, 1, 23);
    let expect = SsspResult::compute(&Resources::new(&Default::default()).unwrap(), &Graph::new(g.clone()), 0, 0, &SsspOptions::default()).unwrap();
    c.load_graph(&g).unwrap();
    drop(g);
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let v = c.view(r.id, 0, 0).unwrap();
    let (dist, parent) = (v.i64s(kind::DIST).unwrap(), v.i32s(kind::PARENT).unwrap());
    assert!((dist.len() * 12) as u64 > limit, "the view must exceed /dev/shm");
    assert!(dist == expect.distances() && parent == expect.parents(), "view differs from in-process");
    println!("role small_shm done");
}

#[test]
fn replies_larger_than_dev_shm_work_in_a_private_mount_namespace() {
    if !Command::new("unshare").args(["-Urm", "true"]).status().is_ok_and(|s| s.success()) {
        skip::skip("worker_small_shm (T19)", "namespaces", "unprivileged user and mount namespaces are unavailable (`unshare -Urm true` failed)");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let script = format!("mount -t tmpfs -o size={SHM_MIB}m tmpfs /dev/shm && exec \"$0\" --exact role_small_shm --ignored --test-threads=1 --nocapture");
    let out = Command::new("unshare").args(["-Urm", "sh", "-c", &script]).arg(&exe).env("DYNG_TEST_ROLE", "small_shm").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("role small_shm done"),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
