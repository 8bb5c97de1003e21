//! The SSSP scratch workspace: 38 bytes per vertex, shared by every run of one lease.
//!
//! `packed` (8), `stamp` (4), `in_far` (1), `state` (1) and six vertex lists of capacity n (24).
//! Lists never grow: every list is duplicate-free (stamps and the far flag guarantee it), so n
//! slots always suffice, and appends from several threads reserve slots with one atomic add per
//! buffered chunk. Stamps make lists duplicate-free without per-list resets: a vertex is appended
//! when its stamp is swapped to the current generation.

use crate::resources::PooledWorkspace;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// A fixed-capacity list of vertex ids appended to concurrently.
pub struct VertexList {
    slots: Vec<AtomicI32>,
    len: AtomicUsize,
}

impl VertexList {
    fn with_capacity(c: usize) -> Self {
        VertexList {
            slots: (0..c).map(|_| AtomicI32::new(0)).collect(),
            len: AtomicUsize::new(0),
        }
    }

    /// Entries appended since the last [`VertexList::clear`].
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// True when nothing was appended since the last clear.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the list (the capacity stays).
    pub fn clear(&self) {
        self.len.store(0, Ordering::Relaxed);
    }

    /// Entry `i`, for `i` below [`VertexList::len`] (beyond it, whatever the slot holds).
    #[inline]
    pub fn get(&self, i: usize) -> i32 {
        self.slots[i].load(Ordering::Relaxed)
    }

    /// Appends `items` at once (one atomic add for the whole chunk).
    pub fn extend(&self, items: &[i32]) {
        if items.is_empty() {
            return;
        }
        let base = self.len.fetch_add(items.len(), Ordering::Relaxed);
        for (slot, &v) in self.slots[base..base + items.len()].iter().zip(items) {
            slot.store(v, Ordering::Relaxed);
        }
    }

    /// Appends one vertex (one atomic add; [`Appender`] buffers many).
    pub fn push(&self, v: i32) {
        self.extend(&[v]);
    }

    /// Every slot, whatever the length: scratch arrays of n entries for a search that does not
    /// use the list as a list (`buckets.rs`).
    pub(crate) fn slots(&self) -> &[AtomicI32] {
        &self.slots
    }

    /// Sorts the list's entries (vertex ids below `n`) in ascending order: an insertion sort for a
    /// few, else a radix sort by bytes through `scratch` (a list of the same capacity). One
    /// thread owns both lists meanwhile.
    pub(crate) fn sort(&self, scratch: &VertexList, n: usize) {
        self.sort_by_key(scratch, n.saturating_sub(1) as u64, |v| v as u32 as u64);
    }

    /// Sorts the list's entries by `key` (at most `most`), stably, as [`VertexList::sort`] does.
    #[inline(always)]
    pub(crate) fn sort_by_key(&self, scratch: &VertexList, most: u64, key: impl Fn(i32) -> u64) {
        let len = self.len();
        let (a, b) = (&self.slots[..len], &scratch.slots[..len]);
        let (get, set) = (|s: &AtomicI32| s.load(Ordering::Relaxed), |s: &AtomicI32, v: i32| s.store(v, Ordering::Relaxed));
        if len <= 32 {
            for i in 1..len {
                let v = get(&a[i]);
                let k = key(v);
                let mut j = i;
                while j > 0 && key(get(&a[j - 1])) > k {
                    set(&a[j], get(&a[j - 1]));
                    j -= 1;
                }
                set(&a[j], v);
            }
            return;
        }
        let passes = (u64::BITS - most.leading_zeros()).div_ceil(8).max(1);
        let (mut from, mut to) = (a, b);
        for pass in 0..passes {
            let shift = 8 * pass;
            let mut at = [0usize; 257];
            for s in from {
                at[(key(get(s)) >> shift & 0xff) as usize + 1] += 1;
            }
            for d in 0..256 {
                at[d + 1] += at[d];
            }
            for s in from {
                let v = get(s);
                let d = (key(v) >> shift & 0xff) as usize;
                set(&to[at[d]], v);
                at[d] += 1;
            }
            std::mem::swap(&mut from, &mut to);
        }
        if passes % 2 == 1 {
            for (x, y) in a.iter().zip(b) {
                set(x, get(y));
            }
        }
    }
}

/// Buffers appends to a [`VertexList`] and flushes them in chunks (and on drop).
pub struct Appender<'a> {
    list: &'a VertexList,
    buf: [i32; 128],
    len: usize,
}

impl<'a> Appender<'a> {
    /// An empty buffer in front of `list`.
    pub fn new(list: &'a VertexList) -> Self {
        Appender {
            list,
            buf: [0; 128],
            len: 0,
        }
    }

    /// Buffers `v`, flushing the buffer first when it is full.
    #[inline]
    pub fn push(&mut self, v: i32) {
        if self.len == self.buf.len() {
            self.flush();
        }
        self.buf[self.len] = v;
        self.len += 1;
    }

    /// Appends the buffered vertices to the list.
    pub fn flush(&mut self) {
        self.list.extend(&self.buf[..self.len]);
        self.len = 0;
    }
}

impl Drop for Appender<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The scratch memory of the SSSP engines.
pub struct Workspace {
    pub(crate) packed: Vec<AtomicU64>,
    pub(crate) stamp: Vec<AtomicI32>,
    pub(crate) in_far: Vec<AtomicU8>,
    pub(crate) state: Vec<AtomicU8>,
    pub(crate) near_a: VertexList,
    pub(crate) near_b: VertexList,
    pub(crate) far: VertexList,
    pub(crate) far2: VertexList,
    pub(crate) candidates: VertexList,
    pub(crate) frontier: VertexList,
    pub(crate) generation: i32,
    /// Set by a repair that wrote back its touched vertices only: `candidates` then lists every
    /// vertex whose parent changed (the combine step and the path costs read it).
    pub(crate) touched_listed: bool,
    /// The ring size whose bucket bitmap (in `far2`'s slots) is known to be clear, 0 if none:
    /// a finished bucket search leaves it so, near-far's use of `far2` does not.
    pub(crate) ring_clear: AtomicUsize,
    /// (distance, vertex) of the roots of a quick invalidation that may be re-attached, sorted;
    /// reserved once for the most roots a quick walk takes.
    pub(crate) sort_pairs: parking_lot::Mutex<Vec<(i64, i32)>>,
    /// The buckets of a plain one-thread search (`dial.rs`), which keep their capacity.
    pub(crate) dial: parking_lot::Mutex<super::dial::DialRing>,
    /// The bins of a team's static solve (`binned.rs`), which keep their capacity.
    pub(crate) team_bins: parking_lot::Mutex<super::binned::TeamBins>,
}

impl Workspace {
    /// An empty workspace; runs size it for their graph as they lease it.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    fn with_capacity(c: usize) -> Self {
        Workspace {
            packed: (0..c).map(|_| AtomicU64::new(super::run::NOT_LOADED)).collect(),
            stamp: (0..c).map(|_| AtomicI32::new(0)).collect(),
            in_far: (0..c).map(|_| AtomicU8::new(0)).collect(),
            state: (0..c).map(|_| AtomicU8::new(0)).collect(),
            near_a: VertexList::with_capacity(c),
            near_b: VertexList::with_capacity(c),
            far: VertexList::with_capacity(c),
            far2: VertexList::with_capacity(c),
            candidates: VertexList::with_capacity(c),
            frontier: VertexList::with_capacity(c),
            generation: 0,
            touched_listed: false,
            ring_clear: AtomicUsize::new(0),
            sort_pairs: Default::default(),
            dial: Default::default(),
            team_bins: Default::default(),
        }
    }

    /// Vertices this workspace can serve without growing.
    pub fn capacity(&self) -> usize {
        self.packed.len()
    }

    /// Makes room for `n` vertices; returns true when it had to allocate.
    pub fn reserve(&mut self, n: usize) -> bool {
        if n <= self.capacity() {
            return false;
        }
        *self = Self::with_capacity(n);
        true
    }

    /// Bytes per vertex of this layout.
    pub const BYTES_PER_VERTEX: usize = 8 + 4 + 1 + 1 + 6 * 4;
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

impl PooledWorkspace for Workspace {
    fn bytes(&self) -> usize {
        self.capacity() * Self::BYTES_PER_VERTEX + 16 * self.sort_pairs.lock().capacity() + self.dial.lock().bytes() + self.team_bins.lock().bytes()
    }
}
