//! `dyng_result_t`: maintained SSSP and MOSP results, and `dyng_update`, which refreshes them.
//!
//! A result handle holds a `SessionResult` (in process or resident in a worker; `crate::session`
//! makes every call on it, wherever it lives) and the stats of its last run. `dyng_update` turns
//! the C array of result pointers into `&mut` results, refusing repeated pointers because two
//! `&mut` to one result would alias.

use super::batch::{batch_view, dyng_batch_t};
use super::boundary::{
    guard, invalid, non_null, output_size, read_versioned, slice, versioned_output,
    write_versioned, FfiResult, Versioned,
};
use super::consts::*;
use super::graph::{dyng_graph_t, graph_handle, vertex};
use super::handle::{self, impl_handle};
use super::resources::{dyng_resources_t, resources};
use crate::graph::Graph;
use crate::mosp::MospOptions;
use crate::session::{ResultKind, SessionGraph, SessionResult, StatsSink, TREE_COMBINED};
use crate::sssp::{Fallback, SsspOptions, UpdateStats, DROP_IN_FALLBACK};

/// A maintained result on a graph: an SSSP tree or a MOSP result. Thread safety: read-only calls
/// (info, views, copies, paths) may run concurrently; `dyng_update` on it must not overlap any
/// other use (detected: the later call gets `DYNG_ERR_BUSY` and does nothing).
pub struct dyng_result_t {
    _opaque: [u8; 0],
}

impl_handle!(dyng_result_t => SessionResult, 0xD1A6_0004_2E50_0C35);

const _: () = assert!(DYNG_TREE_COMBINED == TREE_COMBINED);

/// Counters of one update (or static solve) of one result. For a MOSP result each counter is the
/// sum over its K objectives (`affected` can reach K x n) and `fallback_used` is set if any
/// objective recomputed. Start from `dyng_update_stats_default()`. Thread safety: plain data.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct dyng_update_stats_t {
    /// `sizeof(dyng_update_stats_t)`; dyng sets it to the bytes it filled.
    pub struct_size: usize,
    /// Vertices whose old tree path contained a deleted or heavier tree edge (MOSP: summed over
    /// the objectives). Where the adaptive policy recomputed before walking the tree, an
    /// estimate (see `DYNG_FALLBACK_ADAPTIVE`).
    pub invalidated: i64,
    /// Vertices whose distance or parent changed (MOSP: summed over the objectives).
    pub affected: i64,
    /// Push rounds over a non-empty near list (bucket queue of a one-thread parallel run:
    /// distances expanded).
    pub iterations: i64,
    /// Far-pile threshold raises.
    pub epochs: i64,
    /// Vertex expansions.
    pub pushes: i64,
    /// True when parents travelled in the packed word (false: distance-only fallback).
    pub packed_parents: bool,
    /// True when the update recomputed from scratch instead.
    pub fallback_used: bool,
}

// SAFETY: repr(C), starts with `usize struct_size`, integers and C bools.
versioned_output!(dyng_update_stats_t);

pub(crate) fn stats_to_c(s: &UpdateStats) -> dyng_update_stats_t {
    dyng_update_stats_t {
        struct_size: 0,
        invalidated: s.invalidated,
        affected: s.affected,
        iterations: s.iterations,
        epochs: s.epochs,
        pushes: s.pushes,
        packed_parents: s.packed_parents,
        fallback_used: s.fallback_used,
    }
}

/// Options of `dyng_sssp_compute`. Start from `dyng_sssp_options_default()`. Thread safety: plain
/// data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_sssp_options_t {
    /// `sizeof(dyng_sssp_options_t)`.
    pub struct_size: usize,
    /// Bucket width of the near-far search (speed only, never the result); 0 = the default,
    /// 32 x the objective's average weight / the graph's average out-degree.
    pub delta: i64,
    /// Adaptive-update policy: `DYNG_FALLBACK_ADAPTIVE` (default), `DYNG_FALLBACK_NEVER`,
    /// `DYNG_FALLBACK_ALWAYS` or `DYNG_FALLBACK_ADAPTIVE_COUNTED`.
    pub fallback: u32,
}

// SAFETY: repr(C), starts with `usize struct_size`, integers only.
unsafe impl Versioned for dyng_sssp_options_t {
    const V1_SIZE: usize = std::mem::size_of::<dyng_sssp_options_t>();
    const NAME: &'static str = "dyng_sssp_options_t";
    fn defaults() -> Self {
        dyng_sssp_options_t {
            struct_size: std::mem::size_of::<Self>(),
            delta: 0,
            fallback: DYNG_FALLBACK_ADAPTIVE,
        }
    }
}

/// Options of `dyng_mosp_compute`. Start from `dyng_mosp_options_default()`. Thread safety: plain
/// data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_mosp_options_t {
    /// `sizeof(dyng_mosp_options_t)`.
    pub struct_size: usize,
    /// Objectives used, 0..k-1; 0 = all objectives of the graph.
    pub k: u32,
    /// Preference vector (K values >= 1, lcm <= 2^20); NULL = all ones.
    pub preferences: *const u32,
    /// Entries of `preferences` (must equal K when `preferences` is not NULL).
    pub num_preferences: usize,
    /// Bucket width of the K objective searches; 0 = each objective's default.
    pub delta: i64,
    /// Adaptive-update policy of the K trees (see `dyng_sssp_options_t::fallback`).
    pub fallback: u32,
}

// SAFETY: repr(C), starts with `usize struct_size`, integers and a pointer.
unsafe impl Versioned for dyng_mosp_options_t {
    const V1_SIZE: usize = std::mem::size_of::<dyng_mosp_options_t>();
    const NAME: &'static str = "dyng_mosp_options_t";
    fn defaults() -> Self {
        dyng_mosp_options_t {
            struct_size: std::mem::size_of::<Self>(),
            k: 0,
            preferences: std::ptr::null(),
            num_preferences: 0,
            delta: 0,
            fallback: DYNG_FALLBACK_ADAPTIVE,
        }
    }
}

/// What a result is, filled by `dyng_result_info`. Thread safety: plain data.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct dyng_result_info_t {
    /// `sizeof(dyng_result_info_t)`; dyng sets it to the bytes it filled.
    pub struct_size: usize,
    /// `DYNG_RESULT_SSSP` or `DYNG_RESULT_MOSP`.
    pub kind: u32,
    /// The source vertex.
    pub source: i32,
    /// SSSP: its objective. MOSP: 0.
    pub objective: u32,
    /// Objectives held: 1 for SSSP, K for MOSP.
    pub k: u32,
    /// Objectives of the graph (KG): the columns of `DYNG_ARRAY_PATH_COSTS`.
    pub graph_k: u32,
    /// Vertices.
    pub n: usize,
    /// The graph version the result belongs to.
    pub graph_version: u64,
    /// Counters of the last compute or update. MOSP: each counter summed over its K objectives
    /// (so `affected` and `invalidated` can exceed n), `fallback_used` if any objective fell
    /// back.
    pub last_stats: dyng_update_stats_t,
}

// SAFETY: repr(C), starts with `usize struct_size`, integers and C bools.
versioned_output!(dyng_result_info_t);

fn positive_delta(delta: i64, func: &str) -> FfiResult<Option<i64>> {
    match delta {
        0 => Ok(None),
        d if d > 0 => Ok(Some(d)),
        d => Err(invalid(format!(
            "dyng: {func}: delta = {d} must be > 0 (or 0 for the default)"
        ))),
    }
}

fn fallback_policy(v: u32, func: &str) -> FfiResult<Fallback> {
    Fallback::from_code(v).ok_or_else(|| invalid(format!("dyng: {func}: fallback = {v} is not a DYNG_FALLBACK_* value")))
}

// The C ABI's numbers are the policies' own codes (which the worker protocol carries too).
const _: () = {
    assert!(Fallback::Adaptive.code() == DYNG_FALLBACK_ADAPTIVE);
    assert!(Fallback::Never.code() == DYNG_FALLBACK_NEVER);
    assert!(Fallback::Always.code() == DYNG_FALLBACK_ALWAYS);
    assert!(Fallback::AdaptiveCounted.code() == DYNG_FALLBACK_ADAPTIVE_COUNTED);
};

fn objective_index(objective: u32, g: &Graph, func: &str) -> FfiResult<usize> {
    let j = objective as usize;
    if j >= g.k() {
        return Err(invalid(format!(
            "dyng: {func}: objective {objective} is outside [0, K = {})",
            g.k()
        )));
    }
    Ok(j)
}


/// Writes a new result handle to `*out`.
///
/// # Safety
/// `out` must be non-NULL and writable.
unsafe fn emit(out: *mut *mut dyng_result_t, result: SessionResult) {
    // SAFETY: forwarded contract.
    unsafe { *out = handle::into_handle::<dyng_result_t>(result) };
}

/// Returns a stats struct ready to be filled: `struct_size` set, every counter 0 and both flags
/// false (`dyng_update`, `dyng_sosp_update_arrays`). Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_update_stats_default() -> dyng_update_stats_t {
    dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() }
}

/// Returns the default SSSP options (default delta). Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_sssp_options_default() -> dyng_sssp_options_t {
    dyng_sssp_options_t::defaults()
}

/// Returns the default MOSP options (all objectives, all-ones preferences, default delta).
/// Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_mosp_options_default() -> dyng_mosp_options_t {
    dyng_mosp_options_t::defaults()
}

/// Computes the shortest-path tree of `objective` from `source` on `g`'s current state into a new
/// result `*out`. `opt` NULL = defaults. Thread safety: thread-safe on a graph nobody updates.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; `opt` is NULL or readable; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_sssp_compute(
    res: *const dyng_resources_t,
    g: *const dyng_graph_t,
    source: i32,
    objective: u32,
    opt: *const dyng_sssp_options_t,
    out: *mut *mut dyng_result_t,
) -> dyng_status_t {
    const F: &str = "dyng_sssp_compute";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let gh = graph_handle(g, F)?;
            let g = gh.graph();
            let opt = read_versioned(opt, F)?;
            non_null(out, F, "out")?;
            let source = vertex(source, g.n(), "source", F)?;
            let objective = objective_index(objective, g, F)?;
            let sopt = SsspOptions {
                delta: positive_delta(opt.delta, F)?,
                fallback: fallback_policy(opt.fallback, F)?,
            };
            emit(out, gh.sssp_compute(r, source, objective, &sopt)?);
        }
        Ok(())
    })
}

/// Computes a MOSP result from `source` on `g`'s current state (K trees, combined graph, MOSP tree,
/// path costs) into `*out`. `opt` NULL = defaults. Thread safety: thread-safe on a graph nobody
/// updates.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; `opt` is NULL or readable (with `num_preferences`
/// readable entries at `preferences`); `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_mosp_compute(
    res: *const dyng_resources_t,
    g: *const dyng_graph_t,
    source: i32,
    opt: *const dyng_mosp_options_t,
    out: *mut *mut dyng_result_t,
) -> dyng_status_t {
    const F: &str = "dyng_mosp_compute";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let gh = graph_handle(g, F)?;
            let g = gh.graph();
            let opt = read_versioned(opt, F)?;
            non_null(out, F, "out")?;
            let source = vertex(source, g.n(), "source", F)?;
            if !opt.preferences.is_null() && opt.num_preferences == 0 {
                return Err(invalid(format!(
                    "dyng: {F}: opt->preferences is set but opt->num_preferences is 0"
                )));
            }
            let prefs = slice(opt.preferences, opt.num_preferences, F, "opt->preferences")?;
            let mopt = MospOptions {
                k: (opt.k != 0).then_some(opt.k as usize),
                preferences: prefs.to_vec(),
                delta: positive_delta(opt.delta, F)?,
                fallback: fallback_policy(opt.fallback, F)?,
            };
            emit(out, gh.mosp_compute(r, source, &mopt)?);
        }
        Ok(())
    })
}

/// Adopts an existing tree of `objective` (n distances, n parents; -1 = no parent) on `g`'s
/// current state as a new result `*out`, after checking it is a valid shortest-path tree rooted at
/// `source`. With `canonicalize`, parents first move to the lowest-id tight in-neighbour. The
/// arrays are copied. On a graph resident in a worker the arrays are sent to it (ADOPT_SSSP) and
/// checked there by the same code, with the same errors. The result updates under
/// `DYNG_FALLBACK_ADAPTIVE_COUNTED` (exact counters, as the drop-in driver prints them). Thread safety:
/// thread-safe on a graph nobody updates.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; `dist` and `parent` are NULL or hold n readable
/// elements; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_sssp_from_arrays(
    res: *const dyng_resources_t,
    g: *const dyng_graph_t,
    source: i32,
    objective: u32,
    dist: *const i64,
    parent: *const i32,
    canonicalize: bool,
    out: *mut *mut dyng_result_t,
) -> dyng_status_t {
    const F: &str = "dyng_sssp_from_arrays";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            resources(res, F)?;
            let gh = graph_handle(g, F)?;
            let g = gh.graph();
            non_null(dist, F, "dist")?;
            non_null(parent, F, "parent")?;
            non_null(out, F, "out")?;
            let source = vertex(source, g.n(), "source", F)?;
            let objective = objective_index(objective, g, F)?;
            let dist = slice(dist, g.n(), F, "dist")?;
            let parent = slice(parent, g.n(), F, "parent")?;
            let sopt = SsspOptions { fallback: DROP_IN_FALLBACK, ..Default::default() };
            emit(out, gh.adopt_sssp(source, objective, (dist, parent), canonicalize, &sopt)?);
        }
        Ok(())
    })
}

/// Builds a MOSP result `*out` from `k` SSSP results of `g`'s current state, one per objective
/// 0..k-1 in that order and all from `source` (typically adopted with `dyng_sssp_from_arrays`, as a
/// program holding its own trees does): the trees are copied, then combined (combined
/// graph, MOSP tree, path costs). `preferences` is NULL (all ones) or holds `num_preferences` = k
/// values >= 1 with lcm <= 2^20. The SSSP results stay valid and independent. On a graph resident
/// in a worker the trees must be its results: they are checked host-side as in-process, their
/// arrays are read from the worker and sent back with ADOPT_MOSP, which combines them there.
/// Thread safety: thread-safe on a graph and results nobody updates.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; `trees` holds `k` readable pointers, each NULL or a
/// dyng handle; `preferences` is NULL or holds `num_preferences` readable values; `out` is
/// writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dyng_mosp_from_trees(
    res: *const dyng_resources_t,
    g: *const dyng_graph_t,
    source: i32,
    trees: *const *const dyng_result_t,
    k: usize,
    preferences: *const u32,
    num_preferences: usize,
    out: *mut *mut dyng_result_t,
) -> dyng_status_t {
    const F: &str = "dyng_mosp_from_trees";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let gh = graph_handle(g, F)?;
            let g = gh.graph();
            non_null(out, F, "out")?;
            let source = vertex(source, g.n(), "source", F)?;
            if k == 0 {
                return Err(invalid(format!("dyng: {F}: k = 0 trees; a MOSP result needs at least one")));
            }
            let ptrs = slice(trees, k, F, "trees")?;
            let mut handles = Vec::with_capacity(k);
            for (j, &p) in ptrs.iter().enumerate() {
                let h: &SessionResult = handle::get(p, F, &format!("trees[{j}]"))?;
                if h.is_mosp() {
                    return Err(invalid(format!("dyng: {F}: trees[{j}] is a MOSP result; pass SSSP results")));
                }
                handles.push(h);
            }
            let prefs = if preferences.is_null() {
                &[][..]
            } else {
                slice(preferences, num_preferences, F, "preferences")?
            };
            emit(out, gh.mosp_from_trees(r, source, &handles, prefs, F)?);
        }
        Ok(())
    })
}

/// Gathers the result handles of a `dyng_update` call, refusing NULL, freed and repeated ones.
///
/// # Safety
/// `results` holds `count` readable pointers, each NULL or a dyng handle nobody else uses.
unsafe fn results_mut<'a>(
    results: *const *mut dyng_result_t,
    count: usize,
    func: &str,
) -> FfiResult<Vec<&'a mut SessionResult>> {
    // SAFETY: caller contract.
    let ptrs = unsafe { slice(results, count, func, "results")? };
    for (i, p) in ptrs.iter().enumerate() {
        if let Some(j) = ptrs[..i].iter().position(|q| q == p) {
            return Err(invalid(format!(
                "dyng: {func}: results[{i}] repeats results[{j}]; list each result once"
            )));
        }
    }
    ptrs.iter()
        .enumerate()
        // SAFETY: distinct pointers (checked above), each NULL or a dyng handle (caller contract).
        .map(|(i, &p)| unsafe { handle::get_mut(p, func, &format!("results[{i}]")) })
        .collect()
}

/// Applies `batch` to `g` once and brings every listed result up to date. `stats` is NULL or an
/// array of `count` entries, each with `struct_size` set (all equal); entry i gets result i's
/// counters (MOSP: summed over its objectives). Everything is validated before anything changes: on
/// any error, graph and results are as before. A result of another graph or of an older state gives
/// `DYNG_ERR_STALE_RESULT`. For a graph resident in a worker, every listed result must be a worker
/// result (mixing in-process and worker results is `DYNG_ERR_INVALID_ARGUMENT`); the batch is
/// validated host-side and sent once; with `stats`, each result's counters are then read from the
/// worker (STATS; if that read fails the update stays applied and the error says so). Thread
/// safety: nobody else may use `g` or the listed results during the call.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; `batch` is NULL or a readable batch; `results` holds
/// `count` readable pointers; `stats` is NULL or holds `count` writable entries.
#[no_mangle]
pub unsafe extern "C" fn dyng_update(
    res: *const dyng_resources_t,
    g: *mut dyng_graph_t,
    batch: *const dyng_batch_t,
    results: *const *mut dyng_result_t,
    count: usize,
    stats: *mut dyng_update_stats_t,
) -> dyng_status_t {
    const F: &str = "dyng_update";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let r = resources(res, F)?;
            let gh: &mut SessionGraph = handle::get_mut(g, F, "g")?;
            non_null(batch, F, "batch")?;
            let view = batch_view(batch, gh.graph().k(), F)?;
            let stride = stats_stride(stats, count, F)?;
            let mut handles = results_mut(results, count, F)?;
            let mut write = |i: usize, s: &UpdateStats| {
                // SAFETY: entry i of `count` entries of `stride` bytes (checked by `stats_stride`).
                let entry = (stats as *mut u8).add(i * stride) as *mut dyng_update_stats_t;
                write_versioned(entry, stride, stats_to_c(s));
            };
            let sink: Option<StatsSink<'_>> = if stride > 0 { Some(&mut write) } else { None };
            gh.update(r, &view, &mut handles, sink, F)?;
        }
        Ok(())
    })
}

unsafe fn stats_stride(
    stats: *mut dyng_update_stats_t,
    count: usize,
    func: &str,
) -> FfiResult<usize> {
    if stats.is_null() || count == 0 {
        return Ok(0);
    }
    // SAFETY: caller contract.
    let stride = unsafe { output_size(stats, func)? };
    for i in 1..count {
        // SAFETY: entry i starts `i * stride` bytes in (caller contract).
        let size = unsafe { std::ptr::read((stats as *const u8).add(i * stride) as *const usize) };
        if size != stride {
            return Err(invalid(format!(
                "dyng: {func}: stats[{i}].struct_size = {size} differs from stats[0].struct_size = {stride}"
            )));
        }
    }
    Ok(stride)
}

/// Borrows result handle `r`.
///
/// # Safety
/// `r` is NULL or a dyng handle nobody mutates during `'a`.
pub(crate) unsafe fn result<'a>(
    r: *const dyng_result_t,
    func: &str,
) -> FfiResult<&'a SessionResult> {
    // SAFETY: forwarded contract.
    unsafe { handle::get(r, func, "r") }
}

/// Fills `*out` (set `out->struct_size` first): kind, source, objectives, graph version, last
/// stats. A worker result's stats are read from the worker on the first call after its compute,
/// adoption or update (so that call can fail with the worker's conditions, e.g.
/// `DYNG_ERR_WORKER_LOST`). Thread safety: thread-safe on a result nobody updates.
///
/// # Safety
/// `r` is NULL or a dyng handle; `out` is NULL or a writable struct of `out->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dyng_result_info(
    r: *const dyng_result_t,
    out: *mut dyng_result_info_t,
) -> dyng_status_t {
    const F: &str = "dyng_result_info";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let h = result(r, F)?;
            non_null(out, F, "out")?;
            let size = output_size(out, F)?;
            let i = h.info()?;
            let mut stats = stats_to_c(&i.last_stats);
            stats.struct_size = std::mem::size_of::<dyng_update_stats_t>();
            let info = dyng_result_info_t {
                struct_size: 0,
                kind: match i.kind {
                    ResultKind::Sssp => DYNG_RESULT_SSSP,
                    ResultKind::Mosp => DYNG_RESULT_MOSP,
                },
                source: i.source as i32,
                objective: i.objective as u32,
                k: i.k as u32,
                graph_k: i.graph_k as u32,
                n: i.n,
                graph_version: i.graph_version,
                last_stats: stats,
            };
            write_versioned(out, size, info);
        }
        Ok(())
    })
}

/// Writes the path from the source to `target` in tree `k` (objective k, or `DYNG_TREE_COMBINED`
/// for the MOSP tree), source first, to `out` and its length to `*len` (0 if `target` is
/// unreachable). With `out` NULL and `cap` 0 only `*len` is written; a `cap` below the length gives
/// `DYNG_ERR_CAPACITY`. Thread safety: thread-safe on a result nobody updates.
///
/// # Safety
/// `r` is NULL or a dyng handle; `out` is NULL or holds `cap` writable elements; `len` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_result_path(
    r: *const dyng_result_t,
    k: u32,
    target: i32,
    out: *mut i32,
    cap: usize,
    len: *mut usize,
) -> dyng_status_t {
    const F: &str = "dyng_result_path";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let h = result(r, F)?;
            non_null(len, F, "len")?;
            let (parents, source) = h.tree(k, F)?;
            let target = vertex(target, parents.len(), "target", F)?;
            let path = crate::sssp::tree_path(&parents, source, target)?;
            if !(out.is_null() && cap == 0) {
                if cap < path.len() {
                    return Err(crate::Error::Capacity(format!(
                        "dyng: {F}: the path to {target} has {} vertices but cap = {cap}",
                        path.len()
                    ))
                    .into());
                }
                super::boundary::slice_mut(out, path.len(), F, "out")?.copy_from_slice(&path);
            }
            *len = path.len();
        }
        Ok(())
    })
}

/// Frees a result; NULL is a no-op. Views taken from it stay valid. Thread safety: no other
/// thread may use the result.
///
/// # Safety
/// `r` is NULL or a dyng handle not in use elsewhere.
#[no_mangle]
pub unsafe extern "C" fn dyng_result_free(r: *mut dyng_result_t) {
    // SAFETY: forwarded contract.
    guard("dyng_result_free", || unsafe {
        handle::free(r, "dyng_result_free")
    });
}
