//! Where the performance targets stand in one run: each target is checked on the cases of that
//! run only (the machine is shared and noisy; a ratio from two runs would mean little).

use super::measure::CaseResult;
use std::fmt::Write as _;

/// Update at most this times the recompute, on every batch.
const UPDATE_OVER_RECOMPUTE: f64 = 1.05;
/// Update at most this share of the recompute on the local 10K batches of these graphs.
const LOCAL_10K: f64 = 0.2;
const LOCAL_10K_GRAPHS: [&str; 2] = ["usroads", "grid1000"];
/// Static solve at least this much faster than the binary-heap Dijkstra on the grid at 2 threads.
const STATIC_OVER_DIJKSTRA: f64 = 2.0;
/// Workspace bytes per vertex, shared by the K objectives.
const WORKSPACE_BYTES: f64 = 38.0;

fn label(c: &CaseResult) -> String {
    format!("{} {} {} t={}", c.graph, c.batch, c.size, c.threads)
}

/// The "update <= 1.05x recompute on every case" line for one way of taking the ratio.
fn update_over_recompute(s: &mut String, cases: &[CaseResult], how: &str, ratio: fn(&CaseResult) -> f64) {
    let over: Vec<&CaseResult> = cases.iter().filter(|c| ratio(c) > UPDATE_OVER_RECOMPUTE).collect();
    let worst = cases.iter().max_by(|a, b| ratio(a).total_cmp(&ratio(b)));
    line(
        s,
        &format!("update <= {UPDATE_OVER_RECOMPUTE}x recompute on every case, {how}"),
        worst.map(|worst| {
            let above = if over.is_empty() {
                String::new()
            } else {
                format!("; above: {}", over.iter().map(|c| format!("{} {:.3}", label(c), ratio(c))).collect::<Vec<_>>().join(", "))
            };
            let detail = format!("{} of {} cases above; worst {:.3}, {}{above}", over.len(), cases.len(), ratio(worst), label(worst));
            (over.is_empty(), detail)
        }),
    );
}

/// `- NAME: met (DETAIL)`, `- NAME: missed (DETAIL)`, or `- NAME: unmeasured` when the run has
/// none of the target's cases.
fn line(s: &mut String, name: &str, result: Option<(bool, String)>) {
    let _ = match result {
        Some((met, detail)) => writeln!(s, "- {name}: {} ({detail})", if met { "met" } else { "missed" }),
        None => writeln!(s, "- {name}: unmeasured"),
    };
}

/// One line per target, each with the cases that decide it. Targets whose cases the run lacks
/// (a suite or `--only` without them) are said to be unmeasured.
pub fn markdown(cases: &[CaseResult]) -> String {
    let mut s = String::from("\n### Targets in this run\n\n");

    // Both statistics, each on its own line: the ratio of the medians (the JSON's
    // `update_over_recompute`, as the shape has it) and the median of the runs' own
    // ratios, which a slow phase of the host moves less (see `CaseResult::paired_ratio`).
    update_over_recompute(&mut s, cases, "ratio of medians", CaseResult::ratio);
    update_over_recompute(&mut s, cases, "median of paired runs", CaseResult::paired_ratio);

    let local: Vec<&CaseResult> = cases
        .iter()
        .filter(|c| c.batch == "local" && c.size == 10_000 && LOCAL_10K_GRAPHS.contains(&c.graph.as_str()))
        .collect();
    line(
        &mut s,
        &format!("local 10K update <= {LOCAL_10K}x recompute (usroads, grid)"),
        (!local.is_empty()).then(|| {
            let detail = local.iter().map(|c| format!("{} {:.3}", label(c), c.ratio())).collect::<Vec<_>>().join(", ");
            (local.iter().all(|c| c.ratio() <= LOCAL_10K), detail)
        }),
    );

    let grid2: Vec<&CaseResult> = cases.iter().filter(|c| c.graph == "grid1000" && c.threads == 2).collect();
    let speedup = |c: &CaseResult| c.dijkstra_ms / c.recompute_ms;
    line(
        &mut s,
        &format!("static >= {STATIC_OVER_DIJKSTRA}x faster than Dijkstra on the grid at 2 threads"),
        grid2.iter().min_by(|a, b| speedup(a).total_cmp(&speedup(b))).map(|worst| {
            let below = grid2.iter().filter(|c| speedup(c) < STATIC_OVER_DIJKSTRA).count();
            let detail = format!("least {:.2}x, on {}'s graph; {below} of {} cases below", speedup(worst), label(worst), grid2.len());
            (speedup(worst) >= STATIC_OVER_DIJKSTRA, detail)
        }),
    );

    let pairs: Vec<(&CaseResult, f64)> = cases
        .iter()
        .filter(|c| c.size == 50_000 && c.threads == 2)
        .filter_map(|c| {
            let one = c.one_thread(cases)?;
            Some((c, one.update_ms / c.update_ms))
        })
        .collect();
    line(
        &mut s,
        "2 threads faster than 1 on the 50K batches",
        (!pairs.is_empty()).then(|| {
            let detail = pairs.iter().map(|(c, x)| format!("{} {} {x:.2}x", c.graph, c.batch)).collect::<Vec<_>>().join(", ");
            (pairs.iter().all(|&(_, x)| x > 1.0), detail)
        }),
    );

    line(
        &mut s,
        &format!("workspace <= {WORKSPACE_BYTES} B/vertex shared by the K objectives"),
        cases.first().map(|c| {
            (c.workspace_bytes_per_vertex <= WORKSPACE_BYTES, format!("{:.0} B/vertex", c.workspace_bytes_per_vertex))
        }),
    );
    s
}
