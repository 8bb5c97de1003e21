//! `dyng_sosp_update_arrays`: the drop-in per-objective update for code that keeps its own arrays.
//!
//! Such code keeps its own CSR (one objective) and tree arrays and calls an update per objective
//! after applying a batch itself. The call copies the graph into a validated [`Csr`](crate::Csr), runs the
//! engine on copies of the tree arrays and writes them back only on success, so a failed call
//! leaves the caller's arrays as they were.

use super::boundary::{guard, invalid, non_null, output_size, slice, slice_mut, write_versioned};
use super::consts::*;
use super::graph::{csr_from_desc, dyng_csr_t, vertex};
use super::resources::{dyng_resources_t, resources};
use super::result::{dyng_update_stats_t, stats_to_c};
use crate::sssp::{default_delta, sosp_update_arrays};

/// Updates one objective's tree on caller-owned arrays, for programs that apply batches to their own
/// graph (the drop-in contract, docs/c-api.md "Updating caller-owned arrays"):
/// `updated_graph_one_objective` is the graph AFTER the batch with K = 1; `changed_src/dst` list
/// every deleted edge and every inserted or re-weighted edge; `insert_heads` the heads of all
/// insertions; `delta` <= 0 = the default; `max_weight` the largest weight before the batch (used
/// to size packed words; the graph's own maximum is taken if larger). `dist`/`parent` (n each) hold
/// the canonical tree of the old graph in and of the updated graph out, written only on success.
/// `stats` may be NULL. Scratch memory is leased from `res`'s pool. Thread safety: thread-safe as
/// long as no other thread uses `dist` and `parent`.
///
/// # Safety
/// `res` is NULL or a dyng handle; the descriptor's and the lists' arrays hold their counts of
/// readable elements; `dist` and `parent` hold n writable elements; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_sosp_update_arrays(
    res: *const dyng_resources_t,
    updated_graph_one_objective: *const dyng_csr_t,
    changed_src: *const i32,
    changed_dst: *const i32,
    num_changed: usize,
    insert_heads: *const i32,
    num_heads: usize,
    source: i32,
    delta: i64,
    max_weight: i32,
    dist: *mut i64,
    parent: *mut i32,
    stats: *mut dyng_update_stats_t,
) -> dyng_status_t {
    const F: &str = "dyng_sosp_update_arrays";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            non_null(
                updated_graph_one_objective,
                F,
                "updated_graph_one_objective",
            )?;
            non_null(dist, F, "dist")?;
            non_null(parent, F, "parent")?;
            let desc = &*updated_graph_one_objective;
            if desc.k != 1 {
                return Err(invalid(format!(
                    "dyng: {F}: the graph has K = {}; this call takes one objective (K = 1)",
                    desc.k
                )));
            }
            let g = csr_from_desc(desc, F)?;
            let n = g.n();
            let source = vertex(source, n, "source", F)?;
            let from = slice(changed_src, num_changed, F, "changed_src")?;
            let to = slice(changed_dst, num_changed, F, "changed_dst")?;
            let heads = slice(insert_heads, num_heads, F, "insert_heads")?;
            let stats_size = if stats.is_null() {
                0
            } else {
                output_size(stats, F)?
            };
            let dist = slice_mut(dist, n, F, "dist")?;
            let parent = slice_mut(parent, n, F, "parent")?;
            let delta = if delta > 0 {
                delta
            } else {
                default_delta(g.m(), g.n(), g.weight_sum(0))
            };
            let (mut d, mut p) = (dist.to_vec(), parent.to_vec());
            let s = sosp_update_arrays(
                r,
                &g,
                0,
                from,
                to,
                heads,
                source,
                delta,
                max_weight as i64,
                &mut d,
                &mut p,
            )?;
            dist.copy_from_slice(&d);
            parent.copy_from_slice(&p);
            if stats_size > 0 {
                write_versioned(stats, stats_size, stats_to_c(&s));
            }
        }
        Ok(())
    })
}
