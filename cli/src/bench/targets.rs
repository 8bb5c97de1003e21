//! Where the performance targets stand in one run: each target is checked on the cases of that
//! run only (the machine is shared and noisy; a ratio from two runs would mean little).

use super::interval::{against, Interval, Verdict, COVERAGE};
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
    status_line(s, name, result.map(|(met, detail)| (if met { "met" } else { "missed" }, detail)));
}

fn status_line(s: &mut String, name: &str, result: Option<(&str, String)>) {
    let _ = match result {
        Some((status, detail)) => writeln!(s, "- {name}: {status} ({detail})"),
        None => writeln!(s, "- {name}: unmeasured"),
    };
}

/// A target `value <= bound` (or `>= bound`, with `at_least`) read with the run's noise: each
/// case's bootstrap interval is either wholly on the right side (met), wholly on the wrong one
/// (a miss this run resolves), or holds the bound (not resolved by this run). The status is
/// `missed` if any case is resolved against the target, `met` if every case is resolved for it,
/// and `unresolved` otherwise; cases without an interval count as unresolved.
fn with_noise(s: &mut String, name: &str, cases: &[(String, Option<Interval>)], bound: f64, at_least: bool) {
    if cases.is_empty() {
        return; // the plain line of the same target says it is unmeasured
    }
    let verdict = |i: Option<Interval>| {
        // `>= bound` is `-value <= -bound`.
        let v = i.map(|(lo, hi)| if at_least { against((-hi, -lo), -bound) } else { against((lo, hi), bound) });
        v.unwrap_or(Verdict::Straddles)
    };
    let listed = |which: Verdict| -> Vec<String> {
        cases
            .iter()
            .filter(|(_, i)| verdict(*i) == which)
            .map(|(label, i)| match i {
                Some((lo, hi)) => format!("{label} {lo:.3}-{hi:.3}"),
                None => format!("{label} (no interval)"),
            })
            .collect()
    };
    let (wrong, open) = (listed(Verdict::Above), listed(Verdict::Straddles));
    let status = if !wrong.is_empty() {
        "missed"
    } else if open.is_empty() {
        "met"
    } else {
        "unresolved"
    };
    let mut detail = format!(
        "{} of {} cases resolved against it, {} not resolved by this run",
        wrong.len(),
        cases.len(),
        open.len()
    );
    if !wrong.is_empty() {
        let _ = write!(detail, "; against: {}", wrong.join(", "));
    }
    if !open.is_empty() {
        let _ = write!(detail, "; not resolved: {}", open.join(", "));
    }
    status_line(s, &format!("{name}, read with this run's noise ({:.0} % bootstrap intervals)", COVERAGE * 100.0), Some((status, detail)));
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
    // The ratio of medians again, with each case's interval: which cases this run resolves above
    // the bound, and which it leaves open (a fallback is a static solve timed against a static
    // solve, whose ratio the host's noise alone can put above 1.05).
    let intervals: Vec<(String, Option<Interval>)> = cases.iter().map(|c| (label(c), c.ratio_interval())).collect();
    with_noise(&mut s, &format!("update <= {UPDATE_OVER_RECOMPUTE}x recompute on every case"), &intervals, UPDATE_OVER_RECOMPUTE, false);

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

    let pairs: Vec<(&CaseResult, f64, Option<Interval>)> = cases
        .iter()
        .filter(|c| c.size == 50_000 && c.threads == 2)
        .filter_map(|c| {
            let (x, interval) = c.speedup_over(c.one_thread(cases)?);
            Some((c, x, interval))
        })
        .collect();
    line(
        &mut s,
        "2 threads faster than 1 on the 50K batches",
        (!pairs.is_empty()).then(|| {
            let detail = pairs.iter().map(|(c, x, _)| format!("{} {} {x:.2}x", c.graph, c.batch)).collect::<Vec<_>>().join(", ");
            (pairs.iter().all(|&(_, x, _)| x > 1.0), detail)
        }),
    );
    let speedups: Vec<(String, Option<Interval>)> = pairs.iter().map(|(c, _, i)| (format!("{} {}", c.graph, c.batch), *i)).collect();
    with_noise(&mut s, "2 threads faster than 1 on the 50K batches", &speedups, 1.0, true);

    line(
        &mut s,
        &format!("workspace <= {WORKSPACE_BYTES} B/vertex shared by the K objectives"),
        cases.first().map(|c| {
            (c.workspace_bytes_per_vertex <= WORKSPACE_BYTES, format!("{:.0} B/vertex", c.workspace_bytes_per_vertex))
        }),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(batch: &'static str, update: &[f64], recompute: &[f64]) -> CaseResult {
        CaseResult {
            graph: "g".into(),
            batch,
            size: 10_000,
            threads: 1,
            update_ms: super::super::measure::median(update.to_vec()),
            recompute_ms: super::super::measure::median(recompute.to_vec()),
            update_runs_ms: update.to_vec(),
            recompute_runs_ms: recompute.to_vec(),
            ..Default::default()
        }
    }

    fn noise_line(cases: &[CaseResult]) -> String {
        let md = markdown(cases);
        md.lines().find(|l| l.contains("read with this run's noise")).expect("the noise line").to_string()
    }

    #[test]
    fn the_noise_line_separates_resolved_misses_from_open_cases() {
        let steady = [10.0, 10.1, 9.9, 10.0, 10.2, 9.8, 10.0];
        // Every run 20 % slower than its recompute: resolved above 1.05.
        let slow: Vec<f64> = steady.iter().map(|x| x * 1.2).collect();
        // Runs on both sides of 1.05: open.
        let mixed = [9.0, 12.0, 9.5, 11.5, 10.8, 9.2, 11.9];
        // Every run well below: resolved for it.
        let fast: Vec<f64> = steady.iter().map(|x| x * 0.5).collect();

        let line = noise_line(&[case("local", &fast, &steady)]);
        assert!(line.contains(": met (0 of 1 cases resolved against it, 0 not resolved"), "{line}");

        let line = noise_line(&[case("local", &fast, &steady), case("safe", &mixed, &steady)]);
        assert!(line.contains(": unresolved (0 of 2 cases resolved against it, 1 not resolved"), "{line}");
        assert!(line.contains("not resolved: g safe 10000 t=1"), "{line}");

        let line = noise_line(&[case("unsafe", &slow, &steady), case("safe", &mixed, &steady)]);
        assert!(line.contains(": missed (1 of 2 cases resolved against it, 1 not resolved"), "{line}");
        assert!(line.contains("against: g unsafe 10000 t=1 1.200-1.200"), "{line}");
    }
}
