//! Software prefetch for loops whose iterations read arrays at independent random positions.
//!
//! The engine's loops over a change list (marking invalidation roots and improving heads) read
//! `parent`, `dist` and the stamps at each change's endpoints. The reads of one change do not
//! depend on the previous change's, yet a data-dependent branch per change (is this a tree
//! edge? does the insertion improve?) keeps the CPU from running far enough ahead to overlap
//! their cache misses. Asking for the lines [`AHEAD`] changes early does that overlap by hand
//! (it halved the marking of a 10K-change batch on usroads). A prefetch is only a
//! hint: it never faults and changes no value, so results do not depend on it.

use super::run::OutView;
use std::sync::atomic::AtomicU64;

/// How many iterations ahead a loop asks for its lines: far enough to cover a memory access of
/// 80-100 ns at 5-10 ns per iteration of the marking loops.
pub(crate) const AHEAD: usize = 16;

/// How many entries ahead a search's loop over a list of vertices to expand asks for each stage
/// of an expansion's reads ([`ask_expansion`]): each stage reads what the one before asked for.
const EXPAND_AHEAD: [usize; 3] = [12, 8, 4];

/// Asks for the cache line of `x` (a no-op off x86_64).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and cannot fault; `x` is a valid
    // reference besides.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(x as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Asks for `a[at[i]]`, if `i` is in `at` and `at[i]` in `a` (a loop's lookahead runs past the
/// end of its list).
#[inline(always)]
pub(crate) fn prefetch_at<T>(a: &[T], at: &[i32], i: usize) {
    if let Some(x) = at.get(i).and_then(|&j| a.get(j as usize)) {
        prefetch(x);
    }
}

/// Stage 0 of an expansion of `u`: its word and its row's bounds.
#[inline(always)]
pub(crate) fn ask_word_and_row(out: &OutView<'_>, packed: &[AtomicU64], u: usize) {
    if let Some(w) = packed.get(u) {
        prefetch(w);
    }
    if let Some(b) = out.bounds.get(u * out.stride) {
        prefetch(b);
    }
}

/// Stage 1: the first heads and weights of `u`'s row (its bounds are read).
#[inline(always)]
pub(crate) fn ask_row(out: &OutView<'_>, u: usize) {
    let row = out.unchecked_row(u);
    if let (Some(x), Some(w)) = (out.col.get(row.start), out.w.get(row.start)) {
        prefetch(x);
        prefetch(w);
    }
}

/// Stage 2: the words of `u`'s heads (its row is read).
#[inline(always)]
pub(crate) fn ask_heads(out: &OutView<'_>, packed: &[AtomicU64], u: usize) {
    for &x in out.col.get(out.unchecked_row(u)).unwrap_or_default() {
        if let Some(w) = packed.get(x as usize) {
            prefetch(w);
        }
    }
}

/// The entries at the head of a list whose reads [`ask_in_stages`] asks for.
pub(crate) const ASK_FIRST: usize = 32;

/// Asks for what expanding each of `entries` (a list's first [`ASK_FIRST`] at most) reads, each
/// stage of [`ask_expansion`] over them all before the next, so that their misses overlap: for a
/// list too short for a lookahead inside its loop (the one-member queues' buckets: 25 entries on
/// the 1000^2 grid's static solve, 5.5 on usroads').
#[inline(always)]
pub(crate) fn ask_in_stages<I: Iterator<Item = usize>>(out: &OutView<'_>, packed: &[AtomicU64], entries: impl Fn() -> I) {
    for u in entries() {
        ask_word_and_row(out, packed, u);
    }
    for u in entries() {
        ask_row(out, u);
    }
    for u in entries() {
        ask_heads(out, packed, u);
    }
}

/// [`ask_expansion`] for a loop that pulls each listed vertex's best in-edge over the in-rows
/// `inn`, where a word not yet loaded is read from the old tree `old` (its distances and
/// parents): the listed vertex's and its tails' entries there are asked for too.
#[inline(always)]
pub(crate) fn ask_pull(inn: &OutView<'_>, packed: &[AtomicU64], old: Option<(&[i64], &[i32])>, entry: impl Fn(usize) -> usize, i: usize, end: usize) {
    ask_expansion(inn, packed, &entry, i, end);
    let Some((dist, parent)) = old else { return };
    let ask = |x: usize| {
        if let (Some(d), Some(p)) = (dist.get(x), parent.get(x)) {
            prefetch(d);
            prefetch(p);
        }
    };
    let [a, _, c] = EXPAND_AHEAD;
    if i + a < end {
        ask(entry(i + a));
    }
    if i + c < end {
        for &x in inn.col.get(inn.unchecked_row(entry(i + c))).unwrap_or_default() {
            ask(x as usize);
        }
    }
}

/// In a loop over entries `..end` of a list of vertices to expand (`entry(i)`, below n), at
/// entry `i`: asks for each stage of the expansion of a later entry. The loop's misses on the
/// word, the row and the heads' words, one after the other, were most of a static solve's time
/// (perf, grid 1000^2 and usroads: 60 % of the search's samples on those three loads).
#[inline(always)]
pub(crate) fn ask_expansion(out: &OutView<'_>, packed: &[AtomicU64], entry: impl Fn(usize) -> usize, i: usize, end: usize) {
    let [a, b, c] = EXPAND_AHEAD;
    if i + a < end {
        ask_word_and_row(out, packed, entry(i + a));
    }
    if i + b < end {
        ask_row(out, entry(i + b));
    }
    if i + c < end {
        ask_heads(out, packed, entry(i + c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookahead_past_either_end_is_skipped() {
        let a = [1u64, 2, 3];
        // In range, past the index list, past the array, and a negative id.
        for (at, i) in [(&[0, 2][..], 1), (&[0, 2][..], 2), (&[0, 7][..], 1), (&[-1][..], 0)] {
            prefetch_at(&a, at, i);
        }
        prefetch(&a[0]);
        assert_eq!(a, [1, 2, 3]);
    }
}
