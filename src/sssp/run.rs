//! What the steps of one engine run share: the views of the graph they read, the changes of a
//! batch, the run's parameters (`Run`, with the old tree a trusted repair reads its words from),
//! the stamp generations, the per-vertex states and the loops' grains.

use super::exec::Exec;
use super::packing::{Packing, PACKED_INF};
use crate::stats::UpdateStats;
use super::workspace::{Appender, Workspace};
use crate::error::Result;
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering::Relaxed};

/// One objective's edges with one weight column, out-edges or in-edges (then `col` holds the
/// tails): row u is `bounds[s u]..bounds[s u + 1]` of `col`/`w`, for the stride s. A compact CSR
/// passes its `row_ptr` (stride 1); a resident graph's rows and the combined graph a MOSP result
/// keeps pass (start, end) pairs (stride 2), their rows having room to grow between them. Either
/// way a row's two bounds share a cache line.
#[derive(Clone, Copy)]
pub(crate) struct OutView<'a> {
    pub bounds: &'a [i32],
    pub stride: usize,
    pub n: usize,
    pub col: &'a [i32],
    pub w: &'a [i32],
    /// Edges in the rows.
    pub edges: usize,
    /// Caller-owned arrays that no pass has checked: each row is checked when read.
    pub guard: Option<RowGuard<'a>>,
}

/// The check of a caller's rows as a drop-in repair reads them, in place of a pass over every
/// entry first: a row whose bounds are not within the edges, with a head (tail) outside [0, n)
/// or a weight outside [1, `max_weight`] reads as empty and sets `bad`, which the engine tests
/// before it writes anything back.
#[derive(Clone, Copy)]
pub(crate) struct RowGuard<'a> {
    pub bad: &'a std::sync::atomic::AtomicBool,
    pub max_weight: i64,
}

impl RowGuard<'_> {
    #[inline]
    fn check(&self, v: &OutView<'_>, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let ok = r.start <= r.end
            && r.end <= v.col.len().min(v.w.len())
            && v.col[r.clone()].iter().fold(true, |ok, &x| ok & ((x as u32 as usize) < v.n))
            && v.w[r.clone()].iter().fold(true, |ok, &w| ok & (w >= 1) & (w as i64 <= self.max_weight));
        if ok {
            r
        } else {
            self.bad.store(true, Relaxed);
            0..0
        }
    }
}

/// Whether some offset of `b` is below the one before it (one fold, which vectorizes: a loop with
/// an early exit ran at a sixth of the memory's speed).
pub(crate) fn offsets_descend(b: &[i32]) -> bool {
    b.windows(2).fold(false, |bad, x| bad | (x[1] < x[0]))
}

/// In-edges have the same view (tails in `col`).
pub(crate) type InView<'a> = OutView<'a>;

impl<'a> OutView<'a> {
    /// Objective `j` of `rows`.
    pub(crate) fn of(rows: &crate::graph::Rows<'a>, j: usize) -> Self {
        let (bounds, stride) = rows.bounds();
        OutView { bounds, stride, n: rows.n(), col: rows.heads(), w: rows.column(j), edges: rows.edges(), guard: None }
    }

    /// The same rows, each checked when read where `guard` is given (see [`RowGuard`]).
    pub(crate) fn guarded(self, guard: Option<RowGuard<'a>>) -> Self {
        OutView { guard, ..self }
    }

    /// The same rows unguarded, once every row of a guarded view has been checked (one pass on
    /// `e`, which costs less than checking each row as read where a repair reads most of them);
    /// `None` if one is bad (then flagged).
    pub(crate) fn checked_all<E: Exec>(self, e: &E) -> Option<Self> {
        let Some(g) = self.guard else { return Some(self) };
        if self.stride == 1 && self.bounds.len() == self.n + 1 {
            // Offsets: non-decreasing from at least 0 to at most the entries; then every entry
            // between, in plain folds over slices (which vectorize).
            let b = self.bounds;
            let ends = b[0] >= 0 && (b[self.n] as usize) <= self.col.len().min(self.w.len());
            let bad = std::sync::atomic::AtomicBool::new(!ends);
            e.for_chunks(self.n, GRAIN_VERTICES * 16, |r| {
                if offsets_descend(&b[r.start..r.end + 1]) {
                    bad.store(true, Relaxed);
                }
            });
            if !bad.load(Relaxed) {
                let (lo, hi) = (b[0] as usize, b[self.n] as usize);
                e.for_chunks(hi - lo, GRAIN_VERTICES * 16, |r| {
                    let r = lo + r.start..lo + r.end;
                    let n = self.n as u32;
                    let heads = self.col[r.clone()].iter().fold(false, |bad, &x| bad | (x as u32 >= n));
                    let weights = self.w[r].iter().fold(false, |bad, &w| bad | (w < 1) | (w as i64 > g.max_weight));
                    if heads | weights {
                        bad.store(true, Relaxed);
                    }
                });
            }
            if bad.into_inner() {
                g.bad.store(true, Relaxed);
            }
        } else {
            e.for_chunks(self.n, GRAIN_VERTICES, |r| {
                for u in r {
                    self.row(u);
                }
            });
        }
        (!g.bad.load(Relaxed)).then_some(OutView { guard: None, ..self })
    }

    /// Whether a guarded view has read a bad row.
    pub(crate) fn faulted(&self) -> bool {
        self.guard.is_some_and(|g| g.bad.load(Relaxed))
    }

    pub(crate) fn n(&self) -> usize {
        self.n
    }

    #[inline(always)]
    pub(crate) fn row(&self, u: usize) -> std::ops::Range<usize> {
        let r = self.unchecked_row(u);
        match &self.guard {
            None => r,
            Some(g) => g.check(self, r),
        }
    }

    /// Row `u`'s bounds as stored, unchecked by the guard: for prefetches, which read the
    /// entries only through `get`. A negative bound becomes a huge one.
    #[inline(always)]
    pub(crate) fn unchecked_row(&self, u: usize) -> std::ops::Range<usize> {
        let i = u * self.stride;
        let b = &self.bounds[i..i + 2];
        b[0] as usize..b[1] as usize
    }
}

/// What changed for one objective: possible roots (deleted or heavier edges, batch order) and the
/// heads of all insertions (with their tails and weights when the caller has them).
#[derive(Clone, Copy, Default)]
pub(crate) struct Changes<'a> {
    pub from: &'a [i32],
    pub to: &'a [i32],
    pub heads: &'a [i32],
    pub inserted: Option<Inserted<'a>>,
}

/// The tails and this objective's weights of the insertions whose heads are `Changes::heads`.
#[derive(Clone, Copy)]
pub(crate) struct Inserted<'a> {
    pub from: &'a [i32],
    /// Edge-major: insertion `i` has this objective's weight at `i * stride + column`.
    pub weights: &'a [i32],
    pub stride: usize,
    pub column: usize,
}

impl Inserted<'_> {
    /// Insertion `i`'s weight in this objective.
    #[inline(always)]
    pub(crate) fn weight(&self, i: usize) -> i64 {
        self.weights[i * self.stride + self.column] as i64
    }
}

/// Whether an edge of weight `w` from a tail at distance `du` lowers a head at `dv` (an
/// improving insertion).
#[inline(always)]
pub(crate) fn lowers(du: i64, w: i64, dv: i64) -> bool {
    is_finite(du) && (!is_finite(dv) || du + w < dv)
}

pub(super) const GRAIN_VERTICES: usize = 4096;
pub(super) const GRAIN_LIST: usize = 64;

const _: () = assert!(std::mem::align_of::<AtomicI64>() == std::mem::align_of::<i64>());
const _: () = assert!(std::mem::align_of::<AtomicI32>() == std::mem::align_of::<i32>());

pub(crate) fn atomic_i64(s: &mut [i64]) -> &[AtomicI64] {
    // SAFETY: AtomicI64 has the size and (asserted above) alignment of i64, and the exclusive borrow
    // guarantees no other access to the slice while the atomic view lives.
    unsafe { &*(s as *mut [i64] as *const [AtomicI64]) }
}

pub(crate) fn atomic_i32(s: &mut [i32]) -> &[AtomicI32] {
    // SAFETY: as in `atomic_i64`, for i32.
    unsafe { &*(s as *mut [i32] as *const [AtomicI32]) }
}

pub(crate) use crate::distance::is_finite;

/// The word of a vertex a trusted repair has not written yet: its old tree's, made from its
/// distance and parent when read (`Run::word`). Between runs every word of a workspace is this,
/// so a repair neither packs the old tree nor clears anything it did not touch. No packed word
/// equals it: its distance field is all ones, above the largest distance a packing holds.
pub(crate) const NOT_LOADED: u64 = u64::MAX - 1;

/// The old tree whose words a trusted repair reads where it has not written them.
#[derive(Clone, Copy)]
pub(super) struct OldWords<'a> {
    pub(super) dist: &'a [i64],
    pub(super) parent: &'a [i32],
}

/// The parameters shared by the steps of one run.
pub(super) struct Run<'a, E: Exec> {
    pub(super) exec: &'a E,
    pub(super) out: OutView<'a>,
    pub(super) source: usize,
    pub(super) delta: u64,
    pub(super) packing: Packing,
    /// The old tree, in a trusted repair's search (its words are loaded lazily).
    pub(super) old: Option<OldWords<'a>>,
}

impl<E: Exec> Run<'_, E> {
    /// The word of `v`: the slot's, or the old tree's where the slot was not written in this run.
    #[inline(always)]
    pub(super) fn word(&self, ws: &Workspace, v: usize) -> u64 {
        self.loaded(ws.packed[v].load(Relaxed), v)
    }

    /// `raw`, read from `v`'s slot (by a load or a read-modify-write), as a word. Without an
    /// old tree (a static solve) an unwritten slot stays `NOT_LOADED`: like INF it orders above
    /// every candidate, and its distance field above every distance, so the search compares it
    /// as it is; the write-back reads it as INF.
    #[inline(always)]
    pub(super) fn loaded(&self, raw: u64, v: usize) -> u64 {
        match self.old {
            Some(t) if raw == NOT_LOADED => {
                if is_finite(t.dist[v]) {
                    self.packing.pack(t.dist[v] as u64, t.parent[v])
                } else {
                    PACKED_INF
                }
            }
            _ => raw,
        }
    }
}

impl<'a, E: Exec> Run<'a, E> {
    /// Chooses the packing, sizes the workspace and starts the stats of one run.
    pub(super) fn prepare(
        exec: &'a E,
        out: OutView<'a>,
        source: usize,
        delta: i64,
        max_weight: i64,
        ws: &mut Workspace,
    ) -> Result<(Self, UpdateStats)> {
        let n = out.n();
        let packing = Packing::choose(n, max_weight)?;
        ws.reserve(n);
        ws.touched_listed = false;
        let stats = UpdateStats {
            packed_parents: packing.packed_parents(),
            ..Default::default()
        };
        let delta = delta as u64;
        Ok((Run { exec, out, source, delta, packing, old: None }, stats))
    }
}

/// Flags `v` touched and lists it, once.
#[inline]
pub(super) fn touch<E: Exec>(run: &Run<'_, E>, ws: &Workspace, v: usize, touched: &mut Appender<'_>) {
    if ws.state[v].load(Relaxed) == UNKNOWN && run.exec.set_flag(&ws.state[v]) == UNKNOWN {
        touched.push(v as i32);
    }
}

/// A vertex's `state` between runs (and, in the bottom-up invalidation, not yet resolved).
pub(super) const UNKNOWN: u8 = 0;
/// In a trusted update's search: the vertex's word may differ from the old tree's.
pub(super) const TOUCHED: u8 = 1;

/// The stamp generation counter of one run (written back to the workspace at the end).
pub(super) struct Generations(pub(super) i32);

impl Generations {
    /// The next generation; stamps are reset when the counter would overflow.
    pub(super) fn next(&mut self, ws: &Workspace) -> i32 {
        if self.0 == i32::MAX {
            for s in &ws.stamp {
                s.store(0, Relaxed);
            }
            self.0 = 0;
        }
        self.0 += 1;
        self.0
    }
}

