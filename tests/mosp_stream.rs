//! A long stream of batches on one MOSP result: after every update the kept combined graph
//! (changed in place where the trees' parents changed, or built afresh) and the path costs
//! (rewritten below the touched vertices only) must equal a MOSP result computed from scratch.

use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::io::generators::graphgen;
use dyng::{Csr, Graph, MospOptions, MospResult, Resources, WeightLayout};

fn stream(res: &Resources, preferences: Vec<u32>) {
    let t = graphgen::grid(40, 40, 3, 1, 100, 7).unwrap();
    let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap());
    let opt = MospOptions {
        preferences,
        ..Default::default()
    };
    let source = 0;
    let mut m = MospResult::compute(res, &g, source, &opt).unwrap();
    // The path costs are timed apart from the combine step (every one of the 1,600 vertices
    // is written here).
    assert!(m.combine_stats().costs_ns > 0, "a computed result times its path costs");
    let (mut in_place, mut afresh, mut costs_ns) = (0, 0, 0);
    for seed in 1..=40u32 {
        // Small local batches (changed in place), now and then a large spread one (afresh).
        let (changes, hops) = if seed % 10 == 0 { (400, 0) } else { (5 + seed as usize % 30, 4) };
        let gen = ChangeOptions {
            changes,
            seed,
            safe: seed % 3 != 0,
            source,
            local_hops: hops,
            ..Default::default()
        };
        let (batch, _) = generate_changes(&g.to_csr(), &gen).unwrap();
        dyng::update(res, &mut g, &batch.view(), &mut [(&mut m).into()]).unwrap();
        let fresh = MospResult::compute(res, &g, source, &opt).unwrap();
        for j in 0..3 {
            assert_eq!(m.tree(j).parents(), fresh.tree(j).parents(), "batch {seed}: tree {j}");
        }
        assert_eq!(m.combined_distances(), fresh.combined_distances(), "batch {seed}");
        assert_eq!(m.combined_parents(), fresh.combined_parents(), "batch {seed}");
        assert_eq!(m.path_costs(), fresh.path_costs(), "batch {seed}: path costs");
        assert_eq!(m.combine_stats().edges, fresh.combine_stats().edges, "batch {seed}: edges");
        assert_eq!(m.combine_stats().delta, fresh.combine_stats().delta, "batch {seed}: Delta (edge count and weight sum)");
        match m.combine_stats().in_place {
            Some(_) => in_place += 1,
            None => afresh += 1,
        }
        costs_ns += m.combine_stats().costs_ns;
    }
    assert!(costs_ns > 0, "updates time their path costs");
    assert!(in_place >= 20, "the kept graph was changed in place in {in_place} of 40 updates");
    assert!(afresh >= 1, "and built afresh in {afresh}");
}

#[test]
fn a_kept_combined_graph_and_its_costs_equal_a_fresh_mosp_at_one_thread() {
    stream(&Resources::parallel(1).unwrap(), vec![]);
}

#[test]
fn a_kept_combined_graph_and_its_costs_equal_a_fresh_mosp_at_two_threads_with_preferences() {
    stream(&Resources::parallel(2).unwrap(), vec![1, 2, 3]);
}

/// On 2 threads or more, a MOSP result's trees after the first are repaired side by side where
/// the first's repair was local and visited tens of thousands of vertices: through a stream of
/// local batches on a 250 x 250 grid, some go side by side and some not, and every update gives a
/// fresh result's trees, combined tree and path costs.
#[test]
fn trees_repaired_side_by_side_equal_a_fresh_mosp() {
    use dyng::io::generators::changegen::ChangeMode;
    let t = graphgen::grid(250, 250, 3, 1, 100, 7).unwrap();
    let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap();
    for threads in [2, 3] {
        let res = Resources::parallel(threads).unwrap();
        let mut g = Graph::new(csr.clone());
        let opt = MospOptions::default();
        let mut m = MospResult::compute(&res, &g, 0, &opt).unwrap();
        let (mut side_by_side, mut in_turn) = (0, 0);
        for seed in 1..=30u32 {
            let mode = if seed % 2 == 0 { ChangeMode::Increase } else { ChangeMode::Reweight };
            let gen = ChangeOptions { changes: 300, seed, local_hops: 40, mode, ..Default::default() };
            let (batch, _) = generate_changes(&g.to_csr(), &gen).unwrap();
            let (_, timings) = dyng::update_timed(&res, &mut g, &batch.view(), &mut [(&mut m).into()]).unwrap();
            if timings.side_by_side {
                side_by_side += 1;
            } else {
                in_turn += 1;
            }
            let fresh = MospResult::compute(&res, &g, 0, &opt).unwrap();
            for j in 0..3 {
                assert_eq!(m.tree(j).distances(), fresh.tree(j).distances(), "{threads} threads, batch {seed}: tree {j}");
                assert_eq!(m.tree(j).parents(), fresh.tree(j).parents(), "{threads} threads, batch {seed}: tree {j}");
            }
            assert_eq!(m.combined_parents(), fresh.combined_parents(), "{threads} threads, batch {seed}");
            assert_eq!(m.path_costs(), fresh.path_costs(), "{threads} threads, batch {seed}");
        }
        assert!(side_by_side >= 4 && in_turn >= 4, "{threads} threads: {side_by_side} side by side, {in_turn} in turn");
    }
}

#[test]
fn the_sequential_reference_builds_the_combined_graph_afresh() {
    let res = Resources::sequential();
    let t = graphgen::grid(20, 20, 2, 1, 100, 3).unwrap();
    let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap());
    let mut m = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
    for seed in 1..=5u32 {
        let gen = ChangeOptions { changes: 10, seed, safe: true, local_hops: 3, ..Default::default() };
        let (batch, _) = generate_changes(&g.to_csr(), &gen).unwrap();
        dyng::update(&res, &mut g, &batch.view(), &mut [(&mut m).into()]).unwrap();
        let fresh = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
        assert_eq!(m.combine_stats().in_place, None, "its counters are the originals'");
        // `affected` counts the vertices the write-back changed, which depends on the arrays it
        // wrote into; the search's own counters must be those of a fresh solve.
        let (a, b) = (m.combine_stats().search, fresh.combine_stats().search);
        assert_eq!((a.iterations, a.epochs, a.pushes), (b.iterations, b.epochs, b.pushes), "the same search as a fresh solve");
        assert_eq!(m.path_costs(), fresh.path_costs());
    }
}

/// A result that does not keep its combined graph (`keep_combined_graph(false)`) solves it afresh
/// at every update, in less memory, and gives what a kept one gives.
#[test]
fn a_result_that_does_not_keep_its_combined_graph_gives_the_same_trees() {
    let res = Resources::parallel(2).unwrap();
    let t = graphgen::grid(40, 40, 3, 1, 100, 11).unwrap();
    let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap());
    let mut kept = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
    let mut once = kept.clone();
    once.keep_combined_graph(false);
    for seed in 1..=12u32 {
        let gen = ChangeOptions { changes: 20, seed, safe: seed % 2 == 0, local_hops: 4, ..Default::default() };
        let (batch, _) = generate_changes(&g.to_csr(), &gen).unwrap();
        dyng::update(&res, &mut g, &batch.view(), &mut [(&mut kept).into(), (&mut once).into()]).unwrap();
        assert_eq!(once.combined_distances(), kept.combined_distances(), "batch {seed}");
        assert_eq!(once.combined_parents(), kept.combined_parents(), "batch {seed}");
        assert_eq!(once.path_costs(), kept.path_costs(), "batch {seed}");
        assert_eq!(once.combine_stats().edges, kept.combine_stats().edges, "batch {seed}");
        assert_eq!(once.combine_stats().in_place, None, "batch {seed}: built afresh");
        // 7 words a vertex of in-slots and their offsets (K = 3) are not held.
        assert!(kept.bytes() - once.bytes() >= 28 * g.n(), "batch {seed}: {} against {}", once.bytes(), kept.bytes());
    }
    // Kept again, the next update builds it with its slots and the one after changes it in place.
    once.keep_combined_graph(true);
    for seed in 13..=14u32 {
        let gen = ChangeOptions { changes: 20, seed, safe: true, local_hops: 4, ..Default::default() };
        let (batch, _) = generate_changes(&g.to_csr(), &gen).unwrap();
        dyng::update(&res, &mut g, &batch.view(), &mut [(&mut kept).into(), (&mut once).into()]).unwrap();
        assert_eq!(once.combined_parents(), kept.combined_parents(), "batch {seed}");
        assert_eq!(once.path_costs(), kept.path_costs(), "batch {seed}");
    }
    assert!(once.combine_stats().in_place.is_some(), "changed in place once kept again");
}
