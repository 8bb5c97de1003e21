//! The bench outputs: JSON (machine-readable), a Markdown table with the ratios, an SVG chart.

use super::interval::Interval;
use super::machine::Host;
use super::measure::CaseResult;
use super::stream::StreamResult;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn machine_json(host: &Host) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().next().and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .unwrap_or(0);
    format!(
        "{{\"cpu\": {}, \"cores\": {cores}, \"memory_bytes\": {}, \"dyng_version\": {}, \"core_round_trip_ns\": [{}, {}], \"core_round_trip_worst_us\": [{}, {}]}}",
        json_str(&cpu),
        mem_kb * 1024,
        json_str(env!("CARGO_PKG_VERSION")),
        num(host.round_trip_ns[0]),
        num(host.round_trip_ns[1]),
        num(host.worst_us[0]),
        num(host.worst_us[1])
    )
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "null".into()
    }
}

/// `[lo, hi]`, or `null` where no interval could be taken.
fn interval_json(i: Option<Interval>) -> String {
    i.map_or("null".into(), |(lo, hi)| format!("[{}, {}]", num(lo), num(hi)))
}

/// `lo-hi` for the Markdown table (empty where no interval could be taken).
fn interval_md(i: Option<Interval>) -> String {
    i.map_or(String::new(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"))
}

fn nums(v: &[f64]) -> String {
    format!("[{}]", v.iter().map(|&x| num(x)).collect::<Vec<_>>().join(", "))
}

pub fn json(suite: &str, cases: &[CaseResult], streams: &[StreamResult], host: &Host) -> String {
    let mut s = format!("{{\"suite\": {}, \"machine\": {}, \"cases\": [\n", json_str(suite), machine_json(host));
    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {{\"graph\": {}, \"n\": {}, \"m\": {}, \"k\": {}, \"source\": {}, \"batch\": {}, \"size\": {}, \"inserts\": {}, \"deletes\": {}, \"threads\": {}, \
\"update_ms\": {}, \"apply_ms\": {}, \"recompute_ms\": {}, \"dijkstra_ms\": {}, \"mosp_ms\": {}, \"mosp_compute_ms\": {}, \"mosp_recompute_ms\": {}, \
\"update_over_recompute\": {}, \"update_over_recompute_ci90\": {}, \"update_over_recompute_paired\": {}, \"update_runs_ms\": {}, \"recompute_runs_ms\": {}, \"recompute_over_dijkstra\": {}, \"affected\": {}, \"invalidated\": {}, \"fallback_used\": {}, \
\"workspace_bytes_per_vertex\": {}, \"combine_bytes_per_vertex\": {}, \"graph_buffers_bytes_per_vertex\": {}, \"result_bytes_per_vertex\": {}, \"peak_rss_bytes\": {}}}{}",
            json_str(&c.graph), c.n, c.m, c.k, c.source, json_str(c.batch), c.size, c.inserts, c.deletes, c.threads,
            num(c.update_ms), num(c.apply_ms), num(c.recompute_ms), num(c.dijkstra_ms), num(c.mosp_ms), num(c.mosp_compute_ms), num(c.mosp_recompute_ms),
            num(c.ratio()), interval_json(c.ratio_interval()), num(c.paired_ratio()), nums(&c.update_runs_ms), nums(&c.recompute_runs_ms), num(c.recompute_ms / c.dijkstra_ms), c.affected, c.invalidated, c.fallback_used,
            num(c.workspace_bytes_per_vertex), num(c.combine_bytes_per_vertex), num(c.graph_buffers_bytes_per_vertex), num(c.result_bytes_per_vertex), c.peak_rss_bytes,
            if i + 1 < cases.len() { "," } else { "" }
        );
    }
    s.push_str("], \"streams\": [\n");
    for (i, t) in streams.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {{\"graph\": {}, \"k\": {}, \"batch\": \"local\", \"size\": {}, \"batches\": {}, \"threads\": {}, \"mosp_ms\": {}, \
\"mosp_recompute_ms\": {}, \"mosp_over_recompute\": {}, \"apply_ms\": {}, \"prepare_ms\": {}, \"trees_ms\": {}, \"combine_ms\": {}, \"costs_ms\": {}, \
\"trees_recomputed\": {}, \"combined_in_place\": {}}}{}",
            json_str(&t.graph), t.k, t.size, t.batches, t.threads, num(t.mosp_ms), num(t.mosp_recompute_ms),
            num(t.mosp_ms / t.mosp_recompute_ms), num(t.apply_ms), num(t.prepare_ms), num(t.trees_ms), num(t.combine_ms), num(t.costs_ms),
            t.trees_recomputed, t.combined_in_place,
            if i + 1 < streams.len() { "," } else { "" }
        );
    }
    s.push_str("]}\n");
    s
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

pub fn markdown(suite: &str, cases: &[CaseResult], streams: &[StreamResult], host: &Host) -> String {
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
            "\nMemory: workspace {:.0} B/vertex (shared by the K objectives), combine scratch {:.1} B/vertex, spare graph arrays {:.1} B/vertex (the replaced state's, reused by the next apply), MOSP result {:.1} B/vertex; peak RSS {:.1} MiB.\n",
            c.workspace_bytes_per_vertex,
            c.combine_bytes_per_vertex,
            c.graph_buffers_bytes_per_vertex,
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
    s.push_str(&super::targets::markdown(cases));
    s
}

/// A horizontal bar chart of update/recompute per case (1.0 = as slow as recomputing).
pub fn svg(suite: &str, cases: &[CaseResult]) -> String {
    let row = 22;
    let (left, width) = (300, 420);
    let height = 60 + row * cases.len();
    let max = cases.iter().map(CaseResult::ratio).fold(1.2f64, f64::max);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
<text x=\"10\" y=\"20\" font-size=\"14\">dyng bench {suite}: update time / recompute time (lower is better)</text>\n",
        left + width + 80
    );
    let x1 = left as f64 + width as f64 / max;
    let _ = writeln!(s, "<line x1=\"{x1:.1}\" y1=\"30\" x2=\"{x1:.1}\" y2=\"{}\" stroke=\"#c00\" stroke-dasharray=\"4\"/>", height - 10);
    for (i, c) in cases.iter().enumerate() {
        let y = 40 + i * row;
        let r = c.ratio();
        let w = width as f64 * r / max;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{}\">{} {} {} t={}</text><rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"#3a7\"/><text x=\"{:.1}\" y=\"{}\">{r:.3}</text>",
            y + 14, c.graph, c.batch, c.size, c.threads, row - 6, left as f64 + w + 4.0, y + 14
        );
    }
    s.push_str("</svg>\n");
    s
}

pub fn write_all(dir: &Path, suite: &str, cases: &[CaseResult], streams: &[StreamResult], host: &Host) -> dyng::Result<Vec<PathBuf>> {
    let files = [
        (dir.join(format!("{suite}.json")), json(suite, cases, streams, host)),
        (dir.join(format!("{suite}.md")), markdown(suite, cases, streams, host)),
        (dir.join(format!("{suite}.svg")), svg(suite, cases)),
    ];
    let mut written = Vec::new();
    for (p, text) in files {
        std::fs::write(&p, text).map_err(|e| dyng::Error::io(&p, e))?;
        written.push(p);
    }
    Ok(written)
}
