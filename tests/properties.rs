//! Property tests against an independent oracle (binary-heap Dijkstra, lowest-id ties): random
//! graphs with parallel edges and self-loops, random batches, on every engine.

use dyng::graph::dijkstra::dijkstra;
use dyng::{Batch, Csr, Graph, MospOptions, MospResult, Resources, ResultMut, SsspOptions, SsspResult};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    n: usize,
    k: usize,
    edges: Vec<(i32, i32, Vec<i32>)>,
    batch_del: Vec<usize>,
    batch_ins: Vec<(i32, i32, Vec<i32>)>,
    raw_del: Vec<(i32, i32)>,
    source: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..30, 1usize..4, prop_oneof![Just(1i32), Just(3), Just(10), Just(1000), Just(i32::MAX)])
        .prop_flat_map(|(n, k, wmax)| {
            let v = 0..n as i32;
            let w = proptest::collection::vec(1..=wmax, k);
            let edge = (v.clone(), v.clone(), w.clone());
            (
                Just(n),
                Just(k),
                proptest::collection::vec(edge.clone(), 0..n * 4),
                proptest::collection::vec(any::<usize>(), 0..8),
                proptest::collection::vec(edge, 0..8),
                proptest::collection::vec((v.clone(), v.clone()), 0..3),
                0..n,
            )
        })
        .prop_map(|(n, k, edges, batch_del, batch_ins, raw_del, source)| Case {
            n,
            k,
            edges,
            batch_del,
            batch_ins,
            raw_del,
            source,
        })
}

fn graph_of(c: &Case) -> Graph {
    let src: Vec<i32> = c.edges.iter().map(|e| e.0).collect();
    let dst: Vec<i32> = c.edges.iter().map(|e| e.1).collect();
    let w: Vec<i32> = c.edges.iter().flat_map(|e| e.2.clone()).collect();
    Graph::new(Csr::from_edges(c.n, c.k, &src, &dst, &w).unwrap())
}

fn batch_of(c: &Case) -> Batch {
    let mut b = Batch::new(c.k);
    for &i in &c.batch_del {
        if !c.edges.is_empty() {
            let e = &c.edges[i % c.edges.len()];
            b.delete(e.0, e.1);
        }
    }
    for &(u, v) in &c.raw_del {
        b.delete(u, v);
    }
    for (u, v, w) in &c.batch_ins {
        b.insert(*u, *v, w);
    }
    b
}

fn engines() -> Vec<Resources> {
    vec![Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(2).unwrap(), Resources::parallel(4).unwrap()]
}

fn assert_oracle(g: &Csr, r: &SsspResult) -> Result<(), TestCaseError> {
    let (d, p) = dijkstra(g, r.objective(), r.source());
    prop_assert_eq!(r.distances(), &d[..]);
    prop_assert_eq!(r.parents(), &p[..]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Also on graphs that keep no in-rows, whose repairs find their in-edges by a pass over the
    /// out-rows.
    #[test]
    fn compute_and_update_equal_dijkstra(c in case(), keep_in_rows in any::<bool>()) {
        for res in engines() {
            let mut g = graph_of(&c);
            g.keep_in_rows(keep_in_rows);
            let mut rs: Vec<SsspResult> = (0..c.k)
                .map(|j| SsspResult::compute(&res, &g, c.source, j, &SsspOptions::default()).unwrap())
                .collect();
            for r in &rs {
                assert_oracle(&g.to_csr(), r)?;
            }
            let b = batch_of(&c);
            let mut refs: Vec<ResultMut> = rs.iter_mut().map(ResultMut::from).collect();
            dyng::update(&res, &mut g, &b.view(), &mut refs).unwrap();
            for r in &rs {
                assert_oracle(&g.to_csr(), r)?;
            }
            // A second batch on top (chains of updates stay exact).
            let mut b2 = Batch::new(c.k);
            for (u, v, w) in c.batch_ins.iter().rev() {
                b2.delete(*u, *v);
                b2.insert(*v, *u, w);
            }
            let mut refs: Vec<ResultMut> = rs.iter_mut().map(ResultMut::from).collect();
            dyng::update(&res, &mut g, &b2.view(), &mut refs).unwrap();
            for r in &rs {
                assert_oracle(&g.to_csr(), r)?;
            }
        }
    }

    /// A MOSP result updated by two batches (its combined tree repaired on the parallel engines)
    /// equals one computed on the final graph: trees, combined tree and path costs.
    #[test]
    fn mosp_updates_equal_a_fresh_mosp(c in case(), keep_in_rows in any::<bool>()) {
        for res in engines() {
            let mut g = graph_of(&c);
            g.keep_in_rows(keep_in_rows);
            let mut m = MospResult::compute(&res, &g, c.source, &MospOptions::default()).unwrap();
            let mut b2 = Batch::new(c.k);
            for (u, v, w) in c.batch_ins.iter().rev() {
                b2.delete(*u, *v);
                b2.insert(*v, *u, w);
            }
            for b in [batch_of(&c), b2] {
                dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into()]).unwrap();
                let fresh = MospResult::compute(&res, &g, c.source, &MospOptions::default()).unwrap();
                prop_assert_eq!(m.combined_distances(), fresh.combined_distances());
                prop_assert_eq!(m.combined_parents(), fresh.combined_parents());
                prop_assert_eq!(m.path_costs(), fresh.path_costs());
            }
        }
    }

    /// New edges inserted and single-copy edges deleted, then the inverse batch: the trees (which
    /// depend only on the edge multiset) come back exactly.
    #[test]
    fn a_batch_and_its_inverse_restore_the_result(c in case()) {
        let res = Resources::parallel(2).unwrap();
        let mut g = graph_of(&c);
        let count = |u: i32, v: i32| c.edges.iter().filter(|e| e.0 == u && e.1 == v).count();
        let mut fwd = Batch::new(c.k);
        let mut inv = Batch::new(c.k);
        let mut touched = std::collections::HashSet::new();
        for &i in &c.batch_del {
            if c.edges.is_empty() { break; }
            let e = &c.edges[i % c.edges.len()];
            if count(e.0, e.1) == 1 && touched.insert((e.0, e.1)) {
                fwd.delete(e.0, e.1);
                inv.insert(e.0, e.1, &e.2);
            }
        }
        for (u, v, w) in &c.batch_ins {
            if count(*u, *v) == 0 && touched.insert((*u, *v)) {
                fwd.insert(*u, *v, w);
                inv.delete(*u, *v);
            }
        }
        let mut r = SsspResult::compute(&res, &g, c.source, c.k - 1, &SsspOptions::default()).unwrap();
        let before = (r.distances().to_vec(), r.parents().to_vec());
        dyng::update_one(&res, &mut g, &fwd.view(), &mut r).unwrap();
        dyng::update_one(&res, &mut g, &inv.view(), &mut r).unwrap();
        prop_assert_eq!(r.distances(), &before.0[..]);
        prop_assert_eq!(r.parents(), &before.1[..]);
    }

    #[test]
    fn empty_batch_changes_nothing_and_runs_repeat(c in case()) {
        for res in engines() {
            let mut g = graph_of(&c);
            let mut r = SsspResult::compute(&res, &g, c.source, 0, &SsspOptions::default()).unwrap();
            let before = (r.distances().to_vec(), r.parents().to_vec());
            let s = dyng::update_one(&res, &mut g, &Batch::new(c.k).view(), &mut r).unwrap();
            prop_assert_eq!(s.invalidated, 0);
            prop_assert_eq!(s.affected, 0);
            prop_assert_eq!(r.distances(), &before.0[..]);
            prop_assert_eq!(r.parents(), &before.1[..]);
            // The same inputs twice give the same outputs.
            let run = || {
                let mut g = graph_of(&c);
                let mut r = SsspResult::compute(&res, &g, c.source, 0, &SsspOptions::default()).unwrap();
                dyng::update_one(&res, &mut g, &batch_of(&c).view(), &mut r).unwrap();
                (r.distances().to_vec(), r.parents().to_vec(), r.stats().invalidated)
            };
            prop_assert_eq!(run(), run());
        }
    }

    /// Adopting a tree (optionally canonicalized) and updating it equals updating a computed tree.
    #[test]
    fn adopted_trees_update_like_computed_ones(c in case()) {
        let res = Resources::sequential();
        let mut g1 = graph_of(&c);
        let mut g2 = graph_of(&c);
        let mut a = SsspResult::compute(&res, &g1, c.source, 0, &SsspOptions::default()).unwrap();
        let mut b = SsspResult::from_arrays(&g2, c.source, 0, a.distances().to_vec(), a.parents().to_vec(), true, &SsspOptions::default()).unwrap();
        let batch = batch_of(&c);
        dyng::update_one(&res, &mut g1, &batch.view(), &mut a).unwrap();
        dyng::update_one(&res, &mut g2, &batch.view(), &mut b).unwrap();
        prop_assert_eq!(a.distances(), b.distances());
        prop_assert_eq!(a.parents(), b.parents());
    }
}

/// The distance-only fallback (weights near 2^31 on a long path) still gives canonical parents.
#[test]
fn distance_only_fallback_matches_dijkstra() {
    let n = 70_000usize;
    let mut src = Vec::new();
    let mut dst = Vec::new();
    let mut w = Vec::new();
    for u in 0..n - 1 {
        src.push(u as i32);
        dst.push(u as i32 + 1);
        w.push(i32::MAX - (u % 3) as i32);
        if u % 7 == 0 && u + 2 < n {
            src.push(u as i32);
            dst.push(u as i32 + 2);
            w.push(i32::MAX);
        }
    }
    for res in engines() {
        let mut g = Graph::new(Csr::from_edges(n, 1, &src, &dst, &w).unwrap());
        let mut r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
        assert!(!r.stats().packed_parents);
        let (d, p) = dijkstra(&g, 0, 0);
        assert_eq!(r.distances(), &d[..]);
        assert_eq!(r.parents(), &p[..]);
        let mut b = Batch::new(1);
        b.delete(10, 11);
        b.insert(5, 40_000, &[i32::MAX]);
        b.insert(12, 11, &[3]);
        dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
        let (d, p) = dijkstra(&g, 0, 0);
        assert_eq!(r.distances(), &d[..]);
        assert_eq!(r.parents(), &p[..]);
    }
}
