//! `dyng mosp --cache` never uses a damaged cache: every single-byte flip in its arrays used to
//! be read as a valid graph in some cases (3 of 300 flips: exit 0, other outputs, `--validate`
//! PASS). The damaged cache is rebuilt from the text with a warning, and the outputs are those of
//! a run without a cache.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::Path;

fn run(case: &common::Case, out: &str, cache: bool) -> std::process::Output {
    let mut cmd = common::mosp_command(Path::new(env!("CARGO_BIN_EXE_dyng")), case, &case.dir.join(out));
    cmd.arg("--validate");
    if cache {
        cmd.arg("--cache").arg(case.dir.join("graph.bin"));
    }
    cmd.output().unwrap()
}

fn read_out(dir: &Path) -> Vec<Vec<u8>> {
    ["obj0/distancesUpdated.txt", "obj1/SSSPTreeUpdated.txt", "combinedGraph/mospCosts.txt", "combinedGraph/distancesCsr.txt"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect()
}

#[test]
fn a_damaged_cache_is_rebuilt_not_used() {
    let dir = std::env::temp_dir().join(format!("dyng-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let t = dyng::io::generators::graphgen::grid(12, 12, 2, 1, 9, 3).unwrap();
    let g = dyng::Csr::from_arrays(t.n, 2, t.row_ptr, t.col_ind, &t.weights, dyng::WeightLayout::EdgeMajor).unwrap();
    let mut b = dyng::Batch::new(2);
    b.insert(0, 77, &[1, 1]);
    b.delete(1, 2);
    let case = common::write_mosp_case(&dir, &g, &b, &[]);
    assert!(run(&case, "plain", false).status.success());
    let want = read_out(&dir.join("plain"));
    assert!(run(&case, "first", true).status.success());
    let good = std::fs::read(dir.join("graph.bin")).unwrap();
    // Flip a low bit in 40 weights spread over the weight array (the last quarter of the file,
    // before the trailer); each flip keeps the weight valid, so only the checksum tells.
    let trailer = 8 + 3 * 24 + 8;
    let weights_end = good.len() - trailer;
    let weights_start = weights_end - g.m() * 2 * 4;
    for i in 0..40 {
        let at = weights_start + (i * (g.m() * 2) / 40) * 4;
        let mut bad = good.clone();
        bad[at] ^= if bad[at] > 1 { 0x01 } else { 0x02 };
        std::fs::write(dir.join("graph.bin"), &bad).unwrap();
        let o = run(&case, "again", true);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("is damaged and was not used"), "flip at {at}: {err}");
        assert_eq!(read_out(&dir.join("again")), want, "flip at {at}: the outputs differ from a run without a cache");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
