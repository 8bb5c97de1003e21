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

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}

fn label(c: &CaseResult) -> String {
    format!("{} {} {} t={}", c.graph, c.batch, c.size, c.threads)
}

fn ratio(c: &CaseResult) -> f64 {
    c.update_ms / c.recompute_ms
}

/// One line per target, each with the cases that decide it. Targets whose cases the run lacks
/// (a suite or `--only` without them) are said to be unmeasured.
pub fn markdown(cases: &[CaseResult]) -> String {
    let mut s = String::from("\n### Targets in this run\n\n");
    let mut line = |text: String| {
        let _ = writeln!(s, "- {text}");
    };

    let over: Vec<&CaseResult> = cases.iter().filter(|c| ratio(c) > UPDATE_OVER_RECOMPUTE).collect();
    match cases.iter().max_by(|a, b| ratio(a).total_cmp(&ratio(b))) {
        None => line("update <= 1.05x recompute: unmeasured".into()),
        Some(worst) => line(format!(
            "update <= {UPDATE_OVER_RECOMPUTE}x recompute on every case: {} ({} of {} cases above; worst {:.3}, {}){}",
            verdict(over.is_empty()),
            over.len(),
            cases.len(),
            ratio(worst),
            label(worst),
            if over.is_empty() {
                String::new()
            } else {
                format!("; above: {}", over.iter().map(|c| format!("{} {:.3}", label(c), ratio(c))).collect::<Vec<_>>().join(", "))
            }
        )),
    }

    let local: Vec<&CaseResult> = cases
        .iter()
        .filter(|c| c.batch == "local" && c.size == 10_000 && LOCAL_10K_GRAPHS.contains(&c.graph.as_str()))
        .collect();
    if local.is_empty() {
        line("local 10K update <= 0.2x recompute (usroads, grid): unmeasured".into());
    } else {
        line(format!(
            "local 10K update <= {LOCAL_10K}x recompute (usroads, grid): {} ({})",
            verdict(local.iter().all(|c| ratio(c) <= LOCAL_10K)),
            local.iter().map(|c| format!("{} {:.3}", label(c), ratio(c))).collect::<Vec<_>>().join(", ")
        ));
    }

    let grid2: Vec<&CaseResult> = cases.iter().filter(|c| c.graph == "grid1000" && c.threads == 2).collect();
    match grid2.iter().max_by(|a, b| (a.recompute_ms / a.dijkstra_ms).total_cmp(&(b.recompute_ms / b.dijkstra_ms))) {
        None => line("static >= 2x faster than Dijkstra on the grid at 2 threads: unmeasured".into()),
        Some(worst) => {
            let slowest = worst.dijkstra_ms / worst.recompute_ms;
            line(format!(
                "static >= {STATIC_OVER_DIJKSTRA}x faster than Dijkstra on the grid at 2 threads: {} (least {slowest:.2}x, on {}'s graph; {} of {} cases below)",
                verdict(slowest >= STATIC_OVER_DIJKSTRA),
                label(worst),
                grid2.iter().filter(|c| c.dijkstra_ms / c.recompute_ms < STATIC_OVER_DIJKSTRA).count(),
                grid2.len()
            ));
        }
    }

    let pairs: Vec<(&CaseResult, f64)> = cases
        .iter()
        .filter(|c| c.size == 50_000 && c.threads == 2)
        .filter_map(|c| {
            let one = cases.iter().find(|o| o.threads == 1 && o.graph == c.graph && o.batch == c.batch && o.size == c.size)?;
            Some((c, one.update_ms / c.update_ms))
        })
        .collect();
    if pairs.is_empty() {
        line("2 threads faster than 1 on the 50K batches: unmeasured".into());
    } else {
        line(format!(
            "2 threads faster than 1 on the 50K batches: {} ({})",
            verdict(pairs.iter().all(|&(_, x)| x > 1.0)),
            pairs.iter().map(|(c, x)| format!("{} {} {x:.2}x", c.graph, c.batch)).collect::<Vec<_>>().join(", ")
        ));
    }

    if let Some(c) = cases.first() {
        line(format!(
            "workspace <= {WORKSPACE_BYTES} B/vertex shared by the K objectives: {} ({:.0} B/vertex)",
            verdict(c.workspace_bytes_per_vertex <= WORKSPACE_BYTES),
            c.workspace_bytes_per_vertex
        ));
    }
    s
}
