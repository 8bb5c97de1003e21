//! Zero-copy views of the blocks the worker lends, and the consumed acks their drops send.

use super::*;

/// Where CONSUMED acks go; bound to one worker generation.
pub(super) struct AckSink {
    pub(super) sock: Arc<OwnedFd>,
    pub(super) spawn_id: u64,
    pub(super) generation: u32,
    pub(super) counters: Arc<HostCounters>,
}

impl AckSink {
    pub(super) fn ack(&self, a: Ack) {
        // Acks addressed to an earlier generation are dropped locally: that process is gone.
        if self.counters.generation.load(Ordering::SeqCst) != self.generation {
            self.counters.acks_dropped.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let mut e = Enc::default();
        put_consumed(&mut e, &[a]);
        let h = Header { msg_type: msg::CONSUMED, spawn_id: self.spawn_id, generation: self.generation, ..Default::default() };
        let sent = encode_frame(h, &e.0, 0)
            .ok()
            .and_then(|f| sys::send_record(self.sock.as_raw_fd(), &f, &[], false).ok());
        let c = if sent.is_some() { &self.counters.acks_sent } else { &self.counters.acks_dropped };
        c.fetch_add(1, Ordering::SeqCst);
    }
}

/// A zero-copy, read-only view of a block lent by the worker. Dropping it unmaps the block,
/// closes its fd and then sends CONSUMED (I5), so the worker may reuse the block.
pub struct View {
    pub(super) block: Option<HostBlock>,
    pub(super) ack: Ack,
    pub(super) sink: Arc<AckSink>,
    pub(super) epoch: u64,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View").field("ack", &self.ack).field("epoch", &self.epoch).finish()
    }
}

impl View {
    /// The graph epoch the arrays were taken at.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
    /// The arrays in the block, in kind order.
    pub fn arrays(&self) -> &[ArrayDesc] {
        self.block.as_ref().map_or(&[], |b| &b.header.arrays)
    }
    /// The raw bytes of array `kind`.
    pub fn bytes(&self, kind: u16) -> Option<&[u8]> {
        self.block.as_ref()?.array_bytes(kind).map(|(_, b)| b)
    }
    /// Array `kind` as i64 values (distances, path costs).
    pub fn i64s(&self, kind: u16) -> Option<&[i64]> {
        let (d, b) = self.block.as_ref()?.array_bytes(kind)?;
        if d.dtype != DTYPE_I64 {
            return None;
        }
        // SAFETY: the block was validated (sizes, seals, 8-aligned offsets in a page-aligned
        // mapping); the mapping is read-only and lives as long as `self`.
        Some(unsafe { std::slice::from_raw_parts(b.as_ptr() as *const i64, d.count as usize) })
    }
    /// Array `kind` as i32 values (parents, CSR arrays).
    pub fn i32s(&self, kind: u16) -> Option<&[i32]> {
        let (d, b) = self.block.as_ref()?.array_bytes(kind)?;
        if d.dtype != DTYPE_I32 {
            return None;
        }
        // SAFETY: as in `i64s`.
        Some(unsafe { std::slice::from_raw_parts(b.as_ptr() as *const i32, d.count as usize) })
    }
    /// `(block_id, lend_seq)` of the lend, for diagnostics and tests.
    pub fn lend(&self) -> (u32, u64) {
        (self.ack.block_id, self.ack.lend_seq)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        drop(self.block.take()); // unmap and close first (I5, I10)
        self.sink.counters.live_replies.fetch_sub(1, Ordering::SeqCst);
        fault::hit("H6"); // released, ack not sent yet
        self.sink.ack(self.ack);
        fault::hit("H7");
    }
}
