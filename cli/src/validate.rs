//! `--validate`: every updated tree and the MOSP tree checked against Dijkstra.
//!
//! The references are independent of the engines: a binary-heap Dijkstra with the lowest-id tie
//! rule on the updated graph, and on a combined graph rebuilt here from the output trees with a
//! plain map (not the library's construction).

use dyng::graph::dijkstra::dijkstra;
use dyng::graph::Rows;
use dyng::{Csr, Graph, MospResult, DISTANCE_INF};
use std::collections::BTreeMap;

#[derive(Default)]
struct Findings {
    distance_mismatches: usize,
    inconsistent_parents: usize,
    non_canonical_parents: usize,
    parent_mismatches: usize,
}

impl Findings {
    fn pass(&self, canonical: bool) -> bool {
        self.distance_mismatches == 0
            && self.inconsistent_parents == 0
            && (!canonical || (self.non_canonical_parents == 0 && self.parent_mismatches == 0))
    }
}

fn check_tree(g: &Rows<'_>, j: usize, source: usize, dist: &[i64], parent: &[i32], canonical: bool) -> Findings {
    let (ref_d, ref_p) = dijkstra(*g, j, source);
    let w = g.column(j);
    let mut f = Findings::default();
    let finite = |d: i64| d < DISTANCE_INF / 2;
    for v in 0..g.n() {
        if finite(dist[v]) != finite(ref_d[v]) || (finite(dist[v]) && dist[v] != ref_d[v]) {
            f.distance_mismatches += 1;
        }
        let p = parent[v];
        let consistent = if v == source || !finite(dist[v]) {
            p == -1
        } else {
            p >= 0 && g.row(p as usize).any(|e| {
                g.heads()[e] as usize == v && finite(dist[p as usize]) && dist[p as usize] + w[e] as i64 == dist[v]
            })
        };
        if !consistent {
            f.inconsistent_parents += 1;
        }
        if canonical && p != ref_p[v] {
            f.parent_mismatches += 1;
            if consistent {
                f.non_canonical_parents += 1;
            }
        }
    }
    f
}

fn line(name: &str, f: &Findings, canonical: bool) -> bool {
    let ok = f.pass(canonical);
    println!(
        "VALIDATE {name} {} (distance mismatches={} inconsistent parents={} non-canonical parents={} parent mismatches={})",
        if ok { "PASS" } else { "FAIL" },
        f.distance_mismatches,
        f.inconsistent_parents,
        f.non_canonical_parents,
        f.parent_mismatches
    );
    ok
}

/// The combined graph of the output trees, rebuilt independently (edges keyed by (p, v)).
fn reference_combined(m: &MospResult) -> Csr {
    let n = m.combined_distances().len();
    let prefs = m.preferences();
    let terms = prefs.terms();
    let mut edges: BTreeMap<(i32, i32), i64> = BTreeMap::new();
    for (j, t) in m.trees().iter().enumerate() {
        for v in 0..n {
            let p = t.parents()[v];
            if p >= 0 && v != m.source() {
                *edges.entry((p, v as i32)).or_insert(prefs.base()) -= terms[j];
            }
        }
    }
    let src: Vec<i32> = edges.keys().map(|e| e.0).collect();
    let dst: Vec<i32> = edges.keys().map(|e| e.1).collect();
    let w: Vec<i32> = edges.values().map(|&w| w as i32).collect();
    Csr::from_edges(n, 1, &src, &dst, &w).expect("the combined graph of valid trees is valid")
}

/// Prints the VALIDATE lines; true when everything passed.
pub fn report(updated: &Graph, m: &MospResult, canonicalize: bool) -> bool {
    let mut ok = true;
    for (j, t) in m.trees().iter().enumerate() {
        let f = check_tree(&updated.rows(), j, m.source(), t.distances(), t.parents(), canonicalize);
        ok &= line(&format!("obj{j}"), &f, canonicalize);
    }
    let comb = reference_combined(m);
    let f = check_tree(&comb.rows(), 0, m.source(), m.combined_distances(), m.combined_parents(), true);
    ok &= line("combined", &f, true);
    ok
}
