//! The bench outputs: JSON (machine-readable), a Markdown table with the ratios, an SVG chart.

use super::interval::{Interval, MIN_RUNS};
use super::latency::Latency;
use super::machine::Host;
use super::measure::CaseResult;
use super::stream::StreamResult;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The machine the run was taken on, as the JSON records it.
#[derive(Serialize)]
struct MachineJson {
    cpu: String,
    cores: usize,
    memory_bytes: u64,
    dyng_version: &'static str,
    core_round_trip_ns: [f64; 2],
    core_round_trip_worst_us: [f64; 2],
}

fn machine_json(host: &Host) -> MachineJson {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .unwrap_or(0);
    MachineJson {
        cpu,
        cores,
        memory_bytes: mem_kb * 1024,
        dyng_version: env!("CARGO_PKG_VERSION"),
        core_round_trip_ns: host.round_trip_ns,
        core_round_trip_worst_us: host.worst_us,
    }
}

/// One case in the JSON: its measurements, the ratios taken from them and every run's times.
/// Times that could not be taken (NaN) are written as `null`.
#[derive(Serialize)]
struct CaseJson<'a> {
    graph: &'a str,
    n: usize,
    m: usize,
    k: usize,
    source: usize,
    batch: &'a str,
    size: usize,
    inserts: usize,
    deletes: usize,
    threads: usize,
    update_ms: f64,
    apply_ms: f64,
    recompute_ms: f64,
    dijkstra_ms: f64,
    mosp_ms: f64,
    mosp_compute_ms: f64,
    mosp_recompute_ms: f64,
    update_over_recompute: f64,
    /// `[lo, hi]`, or `null` where the run has too few runs for an interval.
    update_over_recompute_ci90: Option<Interval>,
    update_over_recompute_paired: f64,
    update_runs_ms: &'a [f64],
    recompute_runs_ms: &'a [f64],
    recompute_over_dijkstra: f64,
    affected: i64,
    invalidated: i64,
    fallback_used: bool,
    workspace_bytes_per_vertex: f64,
    combine_bytes_per_vertex: f64,
    graph_bytes_per_vertex: f64,
    result_bytes_per_vertex: f64,
    peak_rss_bytes: u64,
}

impl<'a> CaseJson<'a> {
    fn of(c: &'a CaseResult) -> Self {
        CaseJson {
            graph: &c.graph,
            n: c.n,
            m: c.m,
            k: c.k,
            source: c.source,
            batch: c.batch,
            size: c.size,
            inserts: c.inserts,
            deletes: c.deletes,
            threads: c.threads,
            update_ms: c.update_ms,
            apply_ms: c.apply_ms,
            recompute_ms: c.recompute_ms,
            dijkstra_ms: c.dijkstra_ms,
            mosp_ms: c.mosp_ms,
            mosp_compute_ms: c.mosp_compute_ms,
            mosp_recompute_ms: c.mosp_recompute_ms,
            update_over_recompute: c.ratio(),
            update_over_recompute_ci90: c.ratio_interval(),
            update_over_recompute_paired: c.paired_ratio(),
            update_runs_ms: &c.update_runs_ms,
            recompute_runs_ms: &c.recompute_runs_ms,
            recompute_over_dijkstra: c.recompute_ms / c.dijkstra_ms,
            affected: c.affected,
            invalidated: c.invalidated,
            fallback_used: c.fallback_used,
            workspace_bytes_per_vertex: c.workspace_bytes_per_vertex,
            combine_bytes_per_vertex: c.combine_bytes_per_vertex,
            graph_bytes_per_vertex: c.graph_bytes_per_vertex,
            result_bytes_per_vertex: c.result_bytes_per_vertex,
            peak_rss_bytes: c.peak_rss_bytes,
        }
    }
}

/// One stream in the JSON (medians over its batches).
#[derive(Serialize)]
struct StreamJson<'a> {
    graph: &'a str,
    k: usize,
    batch: &'static str,
    size: usize,
    batches: usize,
    threads: usize,
    mosp_ms: f64,
    mosp_recompute_ms: f64,
    mosp_over_recompute: f64,
    apply_ms: f64,
    prepare_ms: f64,
    trees_ms: f64,
    combine_ms: f64,
    costs_ms: f64,
    trees_recomputed: usize,
    combined_in_place: usize,
}

impl<'a> StreamJson<'a> {
    fn of(t: &'a StreamResult) -> Self {
        StreamJson {
            graph: &t.graph,
            k: t.k,
            batch: "local",
            size: t.size,
            batches: t.batches,
            threads: t.threads,
            mosp_ms: t.mosp_ms,
            mosp_recompute_ms: t.mosp_recompute_ms,
            mosp_over_recompute: t.mosp_ms / t.mosp_recompute_ms,
            apply_ms: t.apply_ms,
            prepare_ms: t.prepare_ms,
            trees_ms: t.trees_ms,
            combine_ms: t.combine_ms,
            costs_ms: t.costs_ms,
            trees_recomputed: t.trees_recomputed,
            combined_in_place: t.combined_in_place,
        }
    }
}

#[derive(Serialize)]
struct ReportJson<'a> {
    suite: &'a str,
    machine: MachineJson,
    cases: Vec<CaseJson<'a>>,
    streams: Vec<StreamJson<'a>>,
    /// The latency suite's results (`dyng bench latency`, and the small section of `quick`).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<serde_json::Value>,
}

/// `lo-hi` for the Markdown table (empty where no interval could be taken).
fn interval_md(i: Option<Interval>) -> String {
    i.map_or(String::new(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"))
}

/// One case as a line of the run's log (stderr), printed as soon as the case is measured.
pub fn case_line(c: &CaseResult) -> String {
    let interval = c.ratio_interval().map_or(format!("no interval below {MIN_RUNS} runs"), |(lo, hi)| format!("90% interval {lo:.3}-{hi:.3}"));
    format!(
        "{} {} {} t={}: update {:.2} ms, recompute {:.2} ms, update/recompute {:.3} ({interval}, {} runs){}",
        c.graph,
        c.batch,
        c.size,
        c.threads,
        c.update_ms,
        c.recompute_ms,
        c.ratio(),
        c.update_runs_ms.len(),
        if c.fallback_used { ", recomputed by the adaptive policy" } else { "" }
    )
}

/// One stream as a line of the run's log.
pub fn stream_line(t: &StreamResult) -> String {
    format!(
        "{} stream of {} local {} batches t={}: MOSP update {:.2} ms, MOSP recompute {:.2} ms, update/recompute {:.3}",
        t.graph,
        t.batches,
        t.size,
        t.threads,
        t.mosp_ms,
        t.mosp_recompute_ms,
        t.mosp_ms / t.mosp_recompute_ms
    )
}

/// The whole run as JSON (serde_json: strings escaped, non-finite numbers as `null`).
pub fn json(suite: &str, cases: &[CaseResult], streams: &[StreamResult], latency: Option<&Latency>, host: &Host) -> dyng::Result<String> {
    let report = ReportJson {
        suite,
        machine: machine_json(host),
        cases: cases.iter().map(CaseJson::of).collect(),
        streams: streams.iter().map(StreamJson::of).collect(),
        latency: latency.map(|l| super::latency_report::json_value(&l.graphs, &l.cases)),
    };
    let mut s = serde_json::to_string_pretty(&report)
        .map_err(|e| dyng::Error::Internal(format!("bench JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// The streams' table: the MOSP update in a service's steady state against a MOSP recompute.
fn streams_markdown(s: &mut String, streams: &[StreamResult]) {
    if streams.is_empty() {
        return;
    }
    s.push_str(
        "\n### Streams (steady state)\n\nOne MOSP result updated by a stream of local batches, each drawn from the current \
         state (seeds 1, 2, ...); medians over the stream, in ms. The recompute is what a program without the update does: \
         the batch applied to its own copy of the graph (through the same pool), then a MOSP result computed from scratch \
         (both timed; the update's time includes its apply too).\n\n",
    );
    s.push_str("| graph | size | thr | batches | MOSP update | MOSP recompute | update/recompute | apply | prepare | K trees | combine | path costs | trees recomputed | combined graph changed in place |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for t in streams {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} of {} | {} of {} |",
            t.graph, t.size, t.threads, t.batches, t.mosp_ms, t.mosp_recompute_ms, t.mosp_ms / t.mosp_recompute_ms,
            t.apply_ms, t.prepare_ms, t.trees_ms, t.combine_ms, t.costs_ms, t.trees_recomputed, t.batches, t.combined_in_place, t.batches
        );
    }
}

pub fn markdown(suite: &str, cases: &[CaseResult], streams: &[StreamResult], latency: Option<&Latency>, host: &Host) -> String {
    let mut s = format!(
        "## dyng bench `{suite}`\n\nTimes are medians in ms; ratios are from the same run: `update/recompute` is the ratio of the two medians, \
         `90% interval` its bootstrap interval over the runs (how far this run's noise leaves it uncertain), \
         `paired` the median of each run's own ratio (its update and recompute timed back to back). `invalidated` is, where the adaptive \
         update recomputed before walking the tree (`Fallback::Adaptive`), its sample's estimate or, where the shortcut rule \
         decided before the sample, the distinct roots: both lower bounds.\n\n"
    );
    s.push_str("| graph | batch | size | thr | update/obj | recompute | dijkstra | update/recompute | 90% interval | paired | recompute/dijkstra | 1thr/this (update) | MOSP e2e | MOSP recompute | invalidated | affected | fallback |\n");
    s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for c in cases {
        let speedup = c.one_thread(cases).map_or("".into(), |o| format!("{:.2}x", c.speedup_over(o).0));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.3} | {} | {:.3} | {:.3} | {} | {:.2} | {:.2} | {} | {} | {} |",
            c.graph, c.batch, c.size, c.threads, c.update_ms, c.recompute_ms, c.dijkstra_ms,
            c.ratio(), interval_md(c.ratio_interval()), c.paired_ratio(), c.recompute_ms / c.dijkstra_ms, speedup, c.mosp_ms, c.mosp_recompute_ms,
            c.invalidated, c.affected, c.fallback_used
        );
    }
    if let Some(c) = cases.first() {
        let _ = write!(
            s,
            "\nMemory: workspace {:.0} B/vertex (shared by the K objectives), combine scratch {:.1} B/vertex, resident graph {:.1} B/vertex (rows with room to grow, in-rows), MOSP result {:.1} B/vertex; peak RSS {:.1} MiB.\n",
            c.workspace_bytes_per_vertex,
            c.combine_bytes_per_vertex,
            c.graph_bytes_per_vertex,
            c.result_bytes_per_vertex,
            cases.iter().map(|c| c.peak_rss_bytes).max().unwrap_or(0) as f64 / (1 << 20) as f64
        );
    }
    let _ = writeln!(
        s,
        "\nHost: core-to-core round trip {:.0} ns before the cases and {:.0} ns after (worst single round trip {:.0} and {:.0} us); \
         2-thread figures move with it on a shared VM (docs/performance.md).",
        host.round_trip_ns[0], host.round_trip_ns[1], host.worst_us[0], host.worst_us[1]
    );
    streams_markdown(&mut s, streams);
    if !cases.is_empty() {
        s.push_str(&super::targets::markdown(cases));
    }
    if let Some(l) = latency {
        s.push_str(&super::latency_report::markdown(&l.graphs, &l.cases));
    }
    s
}

/// `s` as XML character data or attribute text.
pub(super) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A horizontal bar chart of update/recompute per case (1.0 = as slow as recomputing).
pub fn svg(suite: &str, cases: &[CaseResult]) -> String {
    let row = 22;
    let (left, width) = (300, 420);
    let height = 60 + row * cases.len();
    let max = cases.iter().map(CaseResult::ratio).fold(1.2f64, f64::max);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
<text x=\"10\" y=\"20\" font-size=\"14\">dyng bench {}: update time / recompute time (lower is better)</text>\n",
        left + width + 80,
        xml(suite)
    );
    let x1 = left as f64 + width as f64 / max;
    let _ = writeln!(s, "<line x1=\"{x1:.1}\" y1=\"30\" x2=\"{x1:.1}\" y2=\"{}\" stroke=\"#c00\" stroke-dasharray=\"4\"/>", height - 10);
    for (i, c) in cases.iter().enumerate() {
        let y = 40 + i * row;
        let r = c.ratio();
        let w = width as f64 * r / max;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{}\">{}</text><rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"#3a7\"/><text x=\"{:.1}\" y=\"{}\">{r:.3}</text>",
            y + 14, xml(&format!("{} {} {} t={}", c.graph, c.batch, c.size, c.threads)), row - 6, left as f64 + w + 4.0, y + 14
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Writes `<suite>.json`, `.md` and `.svg` (the cases' chart, or the latency chart of a suite of
/// latency cases only), and `<suite>-latency.svg` beside the cases' chart.
pub fn write_all(dir: &Path, suite: &str, cases: &[CaseResult], streams: &[StreamResult], latency: Option<&Latency>, host: &Host) -> dyng::Result<Vec<PathBuf>> {
    let latency_svg = latency.map(|l| super::latency_report::svg(&l.graphs, &l.cases));
    let mut files = vec![
        (dir.join(format!("{suite}.json")), json(suite, cases, streams, latency, host)?),
        (dir.join(format!("{suite}.md")), markdown(suite, cases, streams, latency, host)),
    ];
    match (cases.is_empty(), latency_svg) {
        (true, Some(l)) => files.push((dir.join(format!("{suite}.svg")), l)),
        (_, l) => {
            files.push((dir.join(format!("{suite}.svg")), svg(suite, cases)));
            files.extend(l.map(|l| (dir.join(format!("{suite}-latency.svg")), l)));
        }
    }
    let mut written = Vec::new();
    for (p, text) in files {
        std::fs::write(&p, text).map_err(|e| dyng::Error::io(&p, e))?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(graph: &str) -> CaseResult {
        CaseResult {
            graph: graph.into(),
            batch: "safe",
            size: 10,
            threads: 1,
            update_ms: 1.0,
            recompute_ms: 0.0,
            update_runs_ms: vec![1.0],
            recompute_runs_ms: vec![0.0],
            ..Default::default()
        }
    }

    #[test]
    fn svg_labels_are_escaped() {
        let svg = svg("q<&>", &[case("a<b&\"c'")]);
        assert!(svg.contains(">a&lt;b&amp;&quot;c&apos; safe 10 t=1</text>"), "{svg}");
        assert!(svg.contains("dyng bench q&lt;&amp;&gt;: "), "{svg}");
        assert!(!svg.contains("a<b") && !svg.contains("q<&>"), "{svg}");
    }

    #[test]
    fn json_parses_back_with_strings_escaped_and_non_finite_numbers_null() {
        let host = Host { round_trip_ns: [1.0, 2.0], worst_us: [3.0, f64::NAN] };
        let text = json("quick", &[case("g \"1\"\n\\")], &[], None, &host).expect("json");
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["cases"][0]["graph"], "g \"1\"\n\\");
        // update 1 ms over a recompute of 0 ms: an infinite ratio, written as null.
        assert!(v["cases"][0]["update_over_recompute"].is_null(), "{text}");
        assert!(v["cases"][0]["update_over_recompute_ci90"].is_null(), "{text}");
        assert_eq!(v["cases"][0]["update_runs_ms"], serde_json::json!([1.0]));
        assert!(v["machine"]["core_round_trip_worst_us"][1].is_null(), "{text}");
        assert_eq!(v["streams"], serde_json::json!([]));
    }
}
