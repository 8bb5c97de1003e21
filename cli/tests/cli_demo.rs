//! `dyng demo` (the README's main job) end to end: the live-traffic stream is repaired by the
//! update, the random batch is recomputed by the adaptive policy with its reason and a measured
//! forced repair beside it, every result equals a recompute, and the labels say what the
//! weights are. Timings are printed, never asserted.

use std::process::Command;

#[test]
fn demo_tells_the_traffic_stream_and_the_random_batch_apart() {
    let o = Command::new(env!("CARGO_BIN_EXE_dyng")).args(["demo", "--traffic-batches", "2"]).output().expect("run dyng demo");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("K = 3 objectives with seeded random weights in [1, 100], source 531"), "{stdout}");
    assert!(!stdout.contains("distance, time, fuel"), "the random weights carry no such labels: {stdout}");

    let traffic: Vec<&str> = stdout.lines().filter(|l| l.trim_start().starts_with("batch ")).collect();
    assert_eq!(traffic.len(), 2, "{stdout}");
    for l in &traffic {
        assert!(l.contains("30 slowed") && l.contains("1 closed: update ") && l.contains(", 3 trees repaired "), "{l}");
        assert!(l.contains(" vertices), recompute ") && l.contains("paths changed for "), "{l}");
    }
    assert!(stdout.contains("results identical to the recompute: yes"), "{stdout}");

    let random = stdout.lines().find(|l| l.contains("3 of 3 trees recomputed by the adaptive policy")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(random.contains(", recompute ") && random.contains("paths changed for "), "{random}");
    assert!(stdout.contains("Why: such a batch changes shortest paths almost everywhere"), "{stdout}");
    assert!(stdout.contains("With the policy off the repair took "), "{stdout}");
    assert!(stdout.contains("Every update's result equals the recompute's (trees, MOSP tree, path costs): yes"), "{stdout}");
    // Off a terminal no progress output is drawn, so nothing shares a line with a result.
    assert!(!stdout.contains('\r') && !stderr.contains('\r'), "{stdout:?} {stderr:?}");
}
