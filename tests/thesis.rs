//! The thesis example of reference-behaviour B.1, built from arrays: trees, counters, combined
//! graph, MOSP tree and path costs on every engine.

use dyng::*;

fn thesis_graph() -> Graph {
    let csr = Csr::from_arrays(
        7,
        3,
        vec![0, 2, 3, 5, 6, 9, 10, 10],
        vec![1, 2, 3, 1, 3, 4, 1, 5, 6, 6],
        &[2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3, 1, 1, 1, 4, 3, 2, 1, 2, 2, 5, 6, 2, 1, 1, 1],
        WeightLayout::EdgeMajor,
    )
    .unwrap();
    Graph::new(csr)
}

fn thesis_batch() -> Batch {
    let mut b = Batch::new(3);
    b.insert(3, 5, &[10, 2, 12]);
    b.insert(1, 5, &[12, 1, 14]);
    b.delete(1, 3);
    b.delete(4, 1);
    b
}

fn engines() -> Vec<Resources> {
    vec![
        Resources::sequential(),
        Resources::parallel(1).unwrap(),
        Resources::parallel(2).unwrap(),
        Resources::parallel(4).unwrap(),
    ]
}

const INIT: [([i64; 7], [i32; 7]); 3] = [
    ([0, 2, 4, 4, 5, 6, 7], [-1, 0, 0, 1, 3, 4, 5]),
    ([0, 1, 1, 5, 6, 8, 9], [-1, 0, 0, 1, 3, 4, 5]),
    ([0, 3, 1, 4, 5, 7, 7], [-1, 2, 0, 2, 3, 4, 4]),
];

const UPDATED: [([i64; 7], [i32; 7]); 3] = [
    ([0, 2, 4, 9, 10, 11, 12], [-1, 0, 0, 2, 3, 4, 5]),
    ([0, 1, 1, 17, 18, 2, 3], [-1, 0, 0, 2, 3, 1, 5]),
    ([0, 3, 1, 4, 5, 7, 7], [-1, 2, 0, 2, 3, 4, 4]),
];

#[test]
fn static_compute_gives_the_initial_trees() {
    for res in engines() {
        let g = thesis_graph();
        for (j, (d, p)) in INIT.iter().enumerate() {
            let r = SsspResult::compute(&res, &g, 0, j, &SsspOptions::default()).unwrap();
            assert_eq!(r.distances(), d, "objective {j}");
            assert_eq!(r.parents(), p, "objective {j}");
        }
    }
}

fn run_case(res: &Resources, prefs: &[u32]) -> MospResult {
    let mut g = thesis_graph();
    let trees = INIT
        .iter()
        .enumerate()
        .map(|(j, (d, p))| {
            SsspResult::from_arrays(&g, 0, j, d.to_vec(), p.to_vec(), false, &SsspOptions::default())
                .unwrap()
        })
        .collect();
    let mut m = MospResult::from_trees(res, &g, 0, trees, prefs).unwrap();
    update_one(res, &mut g, &thesis_batch().view(), &mut m).unwrap();
    m
}

#[test]
fn update_matches_b1_on_every_engine() {
    for res in engines() {
        let m = run_case(&res, &[4, 1, 4]);
        for (j, (d, p)) in UPDATED.iter().enumerate() {
            assert_eq!(m.tree(j).distances(), d, "objective {j} {:?}", res);
            assert_eq!(m.tree(j).parents(), p, "objective {j}");
        }
        let inval: Vec<i64> = m.objective_stats().iter().map(|s| s.invalidated).collect();
        assert_eq!(inval, vec![4, 4, 0]);
        assert_eq!(m.combined_distances(), &[0, 11, 10, 20, 30, 23, 34]);
        assert_eq!(m.combined_parents(), &[-1, 0, 0, 2, 3, 1, 5]);
        assert_eq!(m.combine_stats().edges, 9);
        assert_eq!(m.combine_stats().scale, 4);
        assert_eq!(m.combine_stats().delta, 298);
        assert_eq!(
            m.path_costs(),
            &[0, 0, 0, 2, 1, 5, 4, 1, 1, 9, 17, 4, 10, 18, 5, 14, 2, 19, 15, 3, 20]
        );
    }
}

#[test]
fn sequential_counters_match_the_single_threaded_original() {
    let res = Resources::sequential();
    let m = run_case(&res, &[4, 1, 4]);
    let s = m.objective_stats();
    for (j, s) in s[..2].iter().enumerate() {
        assert_eq!((s.invalidated, s.iterations, s.epochs, s.pushes), (4, 1, 0, 4), "obj{j}");
    }
    assert_eq!((s[2].invalidated, s[2].iterations), (0, 0));
    let c = m.combine_stats().search;
    assert_eq!((c.iterations, c.pushes), (4, 7));
    let m = run_case(&res, &[]);
    assert_eq!(m.combined_distances(), &[0, 2, 1, 2, 3, 5, 6]);
    assert_eq!(m.combined_parents(), &[-1, 0, 0, 2, 3, 1, 4]);
    assert_eq!(m.combine_stats().delta, 49);
    let c = m.combine_stats().search;
    assert_eq!((c.iterations, c.pushes), (5, 8));
    let m = run_case(&res, &[4, 4, 1]);
    assert_eq!(m.combined_distances(), &[0, 14, 10, 20, 30, 29, 42]);
    assert_eq!(&m.path_costs()[18..21], &[15, 24, 7]);
}
