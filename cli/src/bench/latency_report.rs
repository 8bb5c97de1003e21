//! The latency suite's outputs: JSON, Markdown (per case, per graph with its fitted line and its
//! memory, the targets in this run) and an SVG of the one-change update against n, log-log.

use super::latency::{LatencyCase, LatencyGraph};
use super::report::xml;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Serialize)]
struct LatencyJson<'a> {
    graphs: &'a [LatencyGraph],
    cases: &'a [LatencyCase],
}

/// The latency results as a JSON value (the suite's file, or a section of another's).
pub fn json_value(graphs: &[LatencyGraph], cases: &[LatencyCase]) -> serde_json::Value {
    serde_json::to_value(LatencyJson { graphs, cases }).unwrap_or(serde_json::Value::Null)
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.5}")
    } else {
        "-".into()
    }
}

/// The Markdown section: cases, graphs, targets.
pub fn markdown(graphs: &[LatencyGraph], cases: &[LatencyCase]) -> String {
    let mut s = String::from(
        "\n## Latency: small batches on a resident MOSP result\n\n\
Medians over each stream's batches; the MOSP compute is the mean of the computes timed on the \
states just before and just after the case's stream, in the same run. `affected`: vertices whose distance or parent \
changed, in the K trees and the combined tree.\n\n\
| graph | n | threads | batch | changes | MOSP update ms | apply | trees | combine | costs | compute ms | update / compute | affected | trees recomputed |\n\
|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for c in cases {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {} | {:.0} | {}/{} |",
            c.graph, c.n, c.threads, c.kind, c.size, c.update_ms, c.apply_ms, c.trees_ms, c.combine_ms, c.costs_ms, c.compute_ms, ratio(c.update_over_compute), c.affected, c.recomputed, c.batches
        );
    }
    s.push_str(
        "\nPer graph: the line time = a + b changes + c affected fitted to the repairs of the small batches above (no tree recomputed) by least squares of the relative error, the median of those that changed no vertex (`unchanged`, the constant read without a fit), the \
static cost per vertex and tree (MOSP compute / (n (K + 1)), as `affected` counts a vertex in each of the K + 1 trees) beside c, and the resident graph's memory against the \
compact CSR and reverse CSR (2 x 4 (n + 1 + m (K + 1)) bytes): all of it, and its rows alone (their slack and room, without the undo log, the journal and the apply's scratch).\n\n\
| graph | n | m | threads | compute ms | a ms | unchanged ms (updates) | b us/change | c us/affected | compute us/(vertex, tree) | c / compute per (vertex, tree) | graph B/vertex | B/edge | over compact | rows over compact | compactions | peak RSS MiB |\n\
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for g in graphs {
        let per_vertex = g.compute_ms_per_tree_vertex();
        let (a, b, c) = g.fit.map_or((f64::NAN, f64::NAN, f64::NAN), |f| (f.a_ms, f.b_ms_per_change * 1e3, f.c_ms_per_affected * 1e3));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.1} | {:.4} | {} | {:.3} | {:.4} | {:.4} | {:.2} | {:.1} | {:.1} | {:+.1} % | {:+.1} % | {} | {:.0} |",
            g.graph, g.n, g.m, g.threads, g.compute_ms, a, g.unchanged_ms.map_or("-".to_string(), |u| format!("{u:.4} ({})", g.unchanged_updates)), b, c, per_vertex * 1e3, c / (per_vertex * 1e3), g.graph_bytes_per_vertex, g.graph_bytes_per_edge, 100.0 * g.overhead(), 100.0 * g.row_overhead(), g.compactions, g.peak_rss_bytes as f64 / (1 << 20) as f64
        );
    }
    s.push_str(&targets(graphs, cases));
    s
}

/// One graph's figure that a target compares between two graphs.
type Reading = fn(&LatencyGraph) -> Option<f64>;

/// The latency targets read in this run.
fn targets(graphs: &[LatencyGraph], cases: &[LatencyCase]) -> String {
    let mut s = String::from("\n### Latency targets in this run\n\n");
    let find = |g: &str, kind: &str, size: usize, t: usize| cases.iter().find(|c| c.graph == g && c.kind == kind && c.size == size && c.threads == t);
    let threads: Vec<usize> = {
        let mut t: Vec<usize> = graphs.iter().map(|g| g.threads).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    for (size, bound) in [(1, 1e-3), (100, 1e-2)] {
        for g in ["grid1000", "usroads"] {
            for &t in &threads {
                if let Some(c) = find(g, "traffic", size, t) {
                    let r = c.update_over_compute;
                    let _ = writeln!(s, "- {size}-change traffic on {g}, {t} thread(s): update / compute {} (target <= {bound}): {}", ratio(r), verdict(r <= bound));
                }
            }
        }
    }
    for &t in &threads {
        // The constant term, fitted and read from the updates that changed nothing.
        let readings: [(&str, &str, Reading); 2] = [
            ("constant term a at", "", |g| g.fit.map(|f| f.a_ms)),
            ("updates that changed no vertex,", "the constant term without a fit; ", |g| g.unchanged_ms),
        ];
        for (what, aside, of) in readings {
            let at = |name: &str| graphs.iter().find(|g| g.graph == name && g.threads == t).and_then(of);
            if let (Some(small), Some(big)) = (at("grid500"), at("grid4000")) {
                let r = big / small;
                let _ = writeln!(s, "- {what} 4000^2 over 500^2, {t} thread(s): {big:.4} / {small:.4} ms = {r:.2} ({aside}target <= 2): {}", verdict(r <= 2.0));
            }
        }
    }
    for g in graphs {
        if let Some(f) = g.fit {
            let r = f.c_ms_per_affected / g.compute_ms_per_tree_vertex();
            let _ = writeln!(s, "- cost per affected vertex on {}, {} thread(s): {:.2}x a static solve's per vertex and tree (target <= 3): {}", g.graph, g.threads, r, verdict(r <= 3.0));
        }
    }
    for g in graphs {
        let o = g.row_overhead();
        let _ = writeln!(s, "- memory of the resident graph's rows (slack and room) on {}, {} thread(s): {:+.1} % over the compact arrays (target <= 25 %; with its buffers {:+.1} %): {}", g.graph, g.threads, 100.0 * o, 100.0 * g.overhead(), verdict(o <= 0.25));
    }
    s
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

/// The one-change traffic update and the MOSP compute against n, log-log, one pair of lines per
/// thread count.
pub fn svg(graphs: &[LatencyGraph], cases: &[LatencyCase]) -> String {
    let (w, h, left, top, bottom) = (640.0, 420.0, 70.0, 40.0, 50.0);
    let points: Vec<(usize, f64, f64, usize)> = graphs
        .iter()
        .filter_map(|g| {
            let c = cases.iter().find(|c| c.graph == g.graph && c.threads == g.threads && c.kind == "traffic" && c.size == 1)?;
            Some((g.n, c.update_ms, c.compute_ms, g.threads))
        })
        .collect();
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
<text x=\"10\" y=\"20\" font-size=\"14\">dyng bench latency: 1-change MOSP update and MOSP compute against n (log-log)</text>\n"
    );
    if points.is_empty() {
        s.push_str("<text x=\"10\" y=\"50\">no 1-change traffic case in this run</text>\n</svg>\n");
        return s;
    }
    let ys = points.iter().flat_map(|p| [p.1, p.2]).filter(|y| *y > 0.0);
    let (ymin, ymax) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    let (xmin, xmax) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0 as f64), b.max(p.0 as f64)));
    let (lx0, lx1) = (xmin.log10().floor(), xmax.log10().ceil().max(xmin.log10().floor() + 1.0));
    let (ly0, ly1) = (ymin.log10().floor(), ymax.log10().ceil().max(ymin.log10().floor() + 1.0));
    let px = |x: f64| left + (x.log10() - lx0) / (lx1 - lx0) * (w - left - 20.0);
    let py = |y: f64| h - bottom - (y.max(1e-9).log10() - ly0) / (ly1 - ly0) * (h - top - bottom);
    let _ = writeln!(s, "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>", h - bottom, w - 20.0, h - bottom);
    let _ = writeln!(s, "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"#000\"/>", h - bottom);
    for e in lx0 as i32..=lx1 as i32 {
        let x = px(10f64.powi(e));
        let _ = writeln!(s, "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">1e{e}</text>", h - bottom + 16.0);
    }
    for e in ly0 as i32..=ly1 as i32 {
        let y = py(10f64.powi(e));
        let _ = writeln!(s, "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">1e{e} ms</text>", left - 4.0, y + 4.0);
    }
    let _ = writeln!(s, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">vertices n</text>", (left + w) / 2.0, h - 10.0);
    let mut threads: Vec<usize> = points.iter().map(|p| p.3).collect();
    threads.sort_unstable();
    threads.dedup();
    let colours = ["#3a7", "#37a", "#a73", "#a37"];
    for (i, &t) in threads.iter().enumerate() {
        let mut pts: Vec<&(usize, f64, f64, usize)> = points.iter().filter(|p| p.3 == t).collect();
        pts.sort_by_key(|p| p.0);
        for (which, dash, get) in [("update", "", (|p: &(usize, f64, f64, usize)| p.1) as fn(&(usize, f64, f64, usize)) -> f64), ("compute", " stroke-dasharray=\"5\"", |p| p.2)] {
            let path: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", px(p.0 as f64), py(get(p)))).collect();
            let colour = colours[i % colours.len()];
            let _ = writeln!(s, "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{dash} points=\"{}\"/>", path.join(" "));
            for p in &pts {
                let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\"/>", px(p.0 as f64), py(get(p)));
            }
            let ly = top + 14.0 * (2 * i + usize::from(which == "compute")) as f64;
            let _ = writeln!(s, "<text x=\"{}\" y=\"{ly:.1}\" fill=\"{colour}\">{}</text>", w - 250.0, xml(&format!("{which}, {t} thread(s)")));
        }
    }
    s.push_str("</svg>\n");
    s
}
