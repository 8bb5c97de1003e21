//! `dyng mosp` on a full disk: a run that fails while writing its outputs leaves `--out` as the
//! previous run left it (it used to exit 1 with new `obj0`/`obj1` files, a truncated
//! `obj2/SSSPTreeUpdated.txt` and the previous combined graph). The test re-executes its role
//! inside `unshare -Urm` (a private user and mount namespace) with a 2 MiB tmpfs to fill; where
//! namespaces are unavailable it says so and returns, and the rule is still checked with an
//! injected write failure by the unit test in `src/io/outputs.rs`.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::Case;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(case: &Case, out: &Path) -> std::process::Output {
    common::mosp_command(Path::new(env!("CARGO_BIN_EXE_dyng")), case, out).output().unwrap()
}

/// Every file under `dir` (relative path -> bytes).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn free_bytes(path: &Path) -> u64 {
    let p = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY (test): statvfs fills the zeroed struct it is given.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(p.as_ptr(), &mut st), 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

/// The role, inside the namespace: `DYNG_TEST_MNT` is a 2 MiB tmpfs.
#[test]
#[ignore = "run by a_full_disk_leaves_the_previous_outputs in a private mount namespace"]
fn role_full_disk() {
    let Some(mnt) = std::env::var_os("DYNG_TEST_MNT").map(PathBuf::from) else { return };
    // Two cases with K = 3 on grids of 20^2 and 60^2 vertices: the second run's files need more
    // room than the first's free, so an in-place rewrite runs out of room too.
    let scratch = std::env::temp_dir().join(format!("dyng-full-disk-{}", std::process::id()));
    let case = |side: usize| {
        let t = dyng::io::generators::graphgen::grid(side, side, 3, 1, 50, side as u32).unwrap();
        let g = dyng::Csr::from_arrays(t.n, 3, t.row_ptr, t.col_ind, &t.weights, dyng::WeightLayout::EdgeMajor).unwrap();
        let mut b = dyng::Batch::new(3);
        for v in 0..20 {
            b.insert(v, (v * 7 + 3) % t.n as i32, &[1, 2, 3]);
        }
        common::write_mosp_case(&scratch.join(format!("case{side}")), &g, &b, &[])
    };
    let (a, b) = (case(20), case(60));
    assert!(run(&b, &scratch.join("want")).status.success());
    let want = tree(&scratch.join("want"));
    let pages = |t: &BTreeMap<PathBuf, Vec<u8>>| t.values().map(|v| (v.len() as u64).div_ceil(4096).max(1)).sum::<u64>();
    let out = mnt.join("out");
    let o = run(&a, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = tree(&out);
    assert_eq!(before.len(), 9, "K = 3: 9 output files");
    // Room for half of what the larger run adds.
    let (pa, pb) = (pages(&before), pages(&want));
    assert!(pb >= pa + 8, "{pa} and {pb} pages");
    let filler = mnt.join("filler");
    let keep = (pb - pa) / 2 * 4096;
    std::fs::write(&filler, vec![7u8; (free_bytes(&mnt) - keep) as usize]).unwrap();
    let o = run(&b, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(tree(&out), before, "--out changed after a failed run: {err}");
    // With room again the run replaces everything.
    std::fs::remove_file(&filler).unwrap();
    assert!(run(&b, &out).status.success());
    assert_eq!(tree(&out), want);
    std::fs::remove_dir_all(&scratch).ok();
    println!("role full_disk done");
}

#[test]
fn a_full_disk_leaves_the_previous_outputs() {
    if !Command::new("unshare").args(["-Urm", "true"]).status().is_ok_and(|s| s.success()) {
        common::skip::skip(
            "a_full_disk_leaves_the_previous_outputs",
            "namespaces",
            "user and mount namespaces are unavailable (`unshare -Urm true` failed); the unit test \
             a_failed_write_leaves_the_folder_as_it_was still checks the rule with an injected failure",
        );
        return;
    }
    let mnt = std::env::temp_dir().join(format!("dyng-tmpfs-{}", std::process::id()));
    std::fs::create_dir_all(&mnt).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = "mount -t tmpfs -o size=2m tmpfs \"$DYNG_TEST_MNT\" && exec \"$0\" --exact role_full_disk --ignored --test-threads=1 --nocapture";
    let out = Command::new("unshare").args(["-Urm", "sh", "-c", script]).arg(&exe).env("DYNG_TEST_MNT", &mnt).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir(&mnt);
    assert!(out.status.success() && stdout.contains("role full_disk done"), "{}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
}
