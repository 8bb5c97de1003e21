//! Every K the library accepts works the same through `dyng mosp --isolation worker` as in
//! process (tests/worker_wide.rs checks the Rust client and the C ABI): K = 40 gives the same
//! files either way.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;
#[path = "../../tests/common/streams.rs"]
mod streams;

use streams::{batch, wide_grid};
use std::path::Path;

fn prefs(k: usize) -> Vec<u32> {
    (0..k).map(|j| 1 + (j % 2) as u32).collect()
}

#[test]
fn dyng_mosp_through_the_worker_takes_every_k() {
    let dir = std::env::temp_dir().join(format!("dyng-wide-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let k = 40;
    let g = wide_grid(6, k, 9);
    let case = common::write_mosp_case(&dir, &g, &batch(&g, 8, 8, 77), &prefs(k));
    let worker = support::worker();
    let run = |isolation: &str| {
        let out = dir.join(format!("out-{isolation}"));
        let o = common::mosp_command(Path::new(env!("CARGO_BIN_EXE_dyng")), &case, &out)
            .args(["--backend", "sequential", "--isolation", isolation])
            .env("DYNG_WORKER", &worker)
            .output()
            .unwrap();
        assert!(o.status.success(), "--isolation {isolation}: {}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (a, b) = (run("in-process"), run("worker"));
    for rel in ["combinedGraph/distancesCsr.txt", "combinedGraph/SSSPTreeCsr.txt", "combinedGraph/mospCosts.txt", "obj39/SSSPTreeUpdated.txt", "obj0/distancesUpdated.txt"] {
        assert_eq!(std::fs::read(a.join(rel)).unwrap(), std::fs::read(b.join(rel)).unwrap(), "{rel}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
