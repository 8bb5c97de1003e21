//! `dyng_sosp_update_arrays` and `dyng_sosp_solve_arrays`: the drop-in per-objective calls for
//! code that keeps its own arrays (MOSP-style code).
//!
//! Such code keeps its own CSR (one weight column per objective), its reverse graph and the tree
//! arrays, applies a batch itself and calls an update per objective. These calls borrow those
//! arrays for the call: nothing is copied or rebuilt (without the reverse graph, the sequential
//! engine builds one), and the trees are updated in place, after every check that can fail.

use super::boundary::{guard, invalid, non_null, output_size, slice, slice_mut, write_versioned, FfiResult};
use super::consts::*;
use super::graph::{dyng_csr_t, vertex};
use super::resources::{dyng_resources_t, resources};
use super::result::{dyng_update_stats_t, stats_to_c};
use crate::sssp::{sosp_solve_arrays, sosp_update_arrays, CsrArrays, UpdateStats};
use std::ffi::{c_int, c_longlong};

/// Borrows one objective's arrays from a descriptor (K must be 1).
///
/// # Safety
/// The descriptor's arrays hold their documented counts.
unsafe fn one_objective<'a>(d: *const dyng_csr_t, func: &str, arg: &str) -> FfiResult<CsrArrays<'a>> {
    non_null(d, func, arg)?;
    // SAFETY: non-NULL, and the caller guarantees a valid descriptor.
    let d = unsafe { &*d };
    if d.k != 1 {
        return Err(invalid(format!(
            "dyng: {func}: {arg} has K = {}; this call takes one objective (K = 1)",
            d.k
        )));
    }
    let rows = d
        .n
        .checked_add(1)
        .ok_or_else(|| invalid(format!("dyng: {func}: {arg}->n = {} is too large", d.n)))?;
    // SAFETY: the caller guarantees the documented counts.
    unsafe {
        Ok(CsrArrays {
            row_ptr: slice(d.row_ptr, rows, func, &format!("{arg}->row_ptr"))?,
            col: slice(d.col_ind, d.m, func, &format!("{arg}->col_ind"))?,
            w: slice(d.weights, d.m, func, &format!("{arg}->weights"))?,
        })
    }
}

/// Writes `s` to `stats` if non-NULL.
///
/// # Safety
/// `stats` is NULL or a writable versioned struct.
unsafe fn put_stats(stats: *mut dyng_update_stats_t, s: &UpdateStats, func: &str) -> FfiResult<()> {
    if !stats.is_null() {
        // SAFETY: caller contract.
        unsafe {
            let size = output_size(stats, func)?;
            write_versioned(stats, size, stats_to_c(s));
        }
    }
    Ok(())
}

/// Updates one objective's tree on caller-owned arrays, as MOSP-OpenMP's per-objective update
/// does, for programs that apply batches to their own graph (the drop-in contract, docs/c-api.md
/// "Updating caller-owned arrays"; `examples-c/mosp_shim` puts that program's own update
/// function on it).
///
/// - `updated_graph`: the graph AFTER the batch, this objective only (K = 1). `reverse_graph`: its
///   reverse (K = 1, `col_ind` = the tails of the edges into each vertex, with their weights), or
///   NULL: then, when there are changes, the repair finds the in-edges it pulls by a pass over
///   the edges (the sequential engine builds a reverse graph for the call instead).
/// - `changed_src/dst` (`num_changed`): the edges that may cut a vertex off its tree path, as the
///   originals list them per objective: every deleted edge (batch order, duplicates kept), then
///   every insertion that RAISED this objective's weight of an edge the graph had before the batch
///   (final weight of the first u->v copy greater than before). New edges, decreases and unchanged
///   weights are not listed: a tree edge whose weight went down stays valid.
/// - `insert_heads` (`num_heads`): the heads of ALL insertions, in batch order.
/// - `delta`: the near-far bucket width (the originals: 32 x average weight / average degree of
///   the graph before the batch); <= 0: that of `updated_graph` (a pass over its weights).
///   `max_weight`: at least every weight of this objective before and after the batch (it sizes
///   the packed words); <= 0: the largest weight of `updated_graph` (a pass).
/// - `dist`/`parent` (n each, `long long` / `int` as in the originals): the tree of the old graph
///   in, of the updated graph out. A tree with canonical parents (the lowest-id tight
///   in-neighbour) comes out canonical; the tie choices of another tree are kept where the batch
///   does not touch them, as the originals keep them. Written in place, only once nothing can
///   fail: an error leaves them as they were.
///
/// Checked per call, before anything is written: the descriptors' shapes, `source`, the changed
/// edges and heads, the tree (parents in [-1, n); with changed edges every finite distance at most
/// (n - 1) x `max_weight`, as the originals check it before their walk; a parent cycle is reported
/// by the walk), and every entry of the graphs the call reads: offsets within the edges, heads
/// (tails) in [0, n), weights in [1, `max_weight`]. With `reverse_graph`, `delta` > 0 and
/// `max_weight` > 0 given, the repair checks each row of either graph as it reads it (a call that
/// repairs little reads little; a bad row it meets refuses the call, with the message of the full
/// check); otherwise every entry of `updated_graph` (and of `reverse_graph`, when there are
/// changes, its offsets and tails) is checked first, one pass over the edges on `res`'s threads
/// (about 10 ms per 4M edges on a 2-core VM). A call without changes reads only the tree.
///
/// Create `res` once per calling thread and keep it (its workspace, 38 bytes per vertex, is then
/// allocated on the first call only); `num_threads = 0` follows `OMP_NUM_THREADS` where it is
/// set. `stats` may be NULL. Thread safety: thread-safe as long as no other thread uses `dist` and
/// `parent`.
///
/// # Safety
/// `res` is NULL or a dyng handle; each descriptor is NULL or valid, its arrays holding their
/// counts; the lists hold their counts of readable elements; `dist` and `parent` hold n writable
/// elements; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_sosp_update_arrays(
    res: *const dyng_resources_t,
    updated_graph: *const dyng_csr_t,
    reverse_graph: *const dyng_csr_t,
    changed_src: *const c_int,
    changed_dst: *const c_int,
    num_changed: usize,
    insert_heads: *const c_int,
    num_heads: usize,
    source: c_int,
    delta: c_longlong,
    max_weight: c_longlong,
    dist: *mut c_longlong,
    parent: *mut c_int,
    stats: *mut dyng_update_stats_t,
) -> dyng_status_t {
    const F: &str = "dyng_sosp_update_arrays";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let g = one_objective(updated_graph, F, "updated_graph")?;
            let rev = if reverse_graph.is_null() {
                None
            } else {
                Some(one_objective(reverse_graph, F, "reverse_graph")?)
            };
            non_null(dist, F, "dist")?;
            non_null(parent, F, "parent")?;
            let n = g.n();
            if n == 0 {
                // As the originals: nothing to update.
                return put_stats(stats, &UpdateStats::default(), F);
            }
            let source = vertex(source, n, "source", F)?;
            let from = slice(changed_src, num_changed, F, "changed_src")?;
            let to = slice(changed_dst, num_changed, F, "changed_dst")?;
            let heads = slice(insert_heads, num_heads, F, "insert_heads")?;
            let dist = slice_mut(dist, n, F, "dist")?;
            let parent = slice_mut(parent, n, F, "parent")?;
            let s = sosp_update_arrays(r, g, rev, from, to, heads, source, delta, max_weight, dist, parent)?;
            put_stats(stats, &s, F)?;
        }
        Ok(())
    })
}

/// The static solve on caller-owned arrays, as MOSP-OpenMP's own static solve: the
/// canonical tree of `graph` (K = 1) from `source` into `dist`/`parent` (n each). `delta` and
/// `max_weight` as for `dyng_sosp_update_arrays`; on error `dist`/`parent` are unchanged.
/// `stats` may be NULL. Thread safety: as `dyng_sosp_update_arrays`.
///
/// # Safety
/// As `dyng_sosp_update_arrays`.
#[no_mangle]
pub unsafe extern "C" fn dyng_sosp_solve_arrays(
    res: *const dyng_resources_t,
    graph: *const dyng_csr_t,
    source: c_int,
    delta: c_longlong,
    max_weight: c_longlong,
    dist: *mut c_longlong,
    parent: *mut c_int,
    stats: *mut dyng_update_stats_t,
) -> dyng_status_t {
    const F: &str = "dyng_sosp_solve_arrays";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let g = one_objective(graph, F, "graph")?;
            non_null(dist, F, "dist")?;
            non_null(parent, F, "parent")?;
            let n = g.n();
            let source = vertex(source, n, "source", F)?;
            let dist = slice_mut(dist, n, F, "dist")?;
            let parent = slice_mut(parent, n, F, "parent")?;
            let s = sosp_solve_arrays(r, g, source, delta, max_weight, dist, parent)?;
            put_stats(stats, &s, F)?;
        }
        Ok(())
    })
}
