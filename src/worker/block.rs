//! Shared-memory blocks: the page-0 block header, the worker's reply pool with its consumed-ack
//! state machine, the host's validated read-only mappings of lent blocks, and sealed input blocks.
//!
//! Ownership rule (spec 1.1): the producer frees a block on the reader's CONSUMED signal, never on a
//! clock. The lend TTL only *retires* a block (the worker drops its own fd and mapping); the kernel
//! keeps the pages for as long as the host still maps them.

use super::frame::{protocol, Dec, Enc};
use super::messages::{dtype_size, ArrayDesc, MAX_ARRAYS};
use super::sys::{self, Mapping};
use crate::error::{Error, Result};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

pub const BLOCK_MAGIC: [u8; 8] = *b"DYNGBLK1";
pub const HEADER_PAGE: u64 = 4096;
const POOL_ROUND: u64 = 2 << 20;

/// Page 0 of a block (6.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockHeader {
    pub spawn_id: u64,
    pub generation: u32,
    pub block_id: u32,
    pub lend_seq: u64,
    pub call_id: u64,
    pub epoch: u64,
    pub total_len: u64,
    pub arrays: Vec<ArrayDesc>,
}

impl BlockHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        e.bytes(&BLOCK_MAGIC).u32(1).u64(self.spawn_id).u32(self.generation).u32(self.block_id);
        e.u64(self.lend_seq).u64(self.call_id).u64(self.epoch).u64(self.total_len);
        e.u8(self.arrays.len() as u8).bytes(&[0; 3]);
        self.arrays.iter().for_each(|a| a.put(&mut e));
        e.0
    }
    pub fn decode(page: &[u8]) -> Result<Self> {
        let mut d = Dec::new(page);
        if d.array::<8>()? != BLOCK_MAGIC || d.u32()? != 1 {
            return Err(protocol("block page 0 has a bad magic or format"));
        }
        let mut h = BlockHeader {
            spawn_id: d.u64()?,
            generation: d.u32()?,
            block_id: d.u32()?,
            lend_seq: d.u64()?,
            call_id: d.u64()?,
            epoch: d.u64()?,
            total_len: d.u64()?,
            arrays: vec![],
        };
        let n = d.u8()? as usize;
        let _reserved = d.array::<3>()?;
        if n > MAX_ARRAYS {
            return Err(protocol(format!("block header lists {n} arrays")));
        }
        h.arrays = (0..n).map(|_| ArrayDesc::get(&mut d)).collect::<Result<_>>()?;
        Ok(h)
    }
}

fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to) * to
}

/// One array to place in a block: kind, dtype, columns and its bytes.
pub struct ArraySrc<'a> {
    pub kind: u16,
    pub dtype: u8,
    pub cols: u32,
    pub bytes: &'a [u8],
}

/// Lays out arrays at page-aligned offsets after page 0; returns the descriptors and `total_len`.
/// With `checksums` each descriptor carries the XXH3-64 of its source bytes (6.6): hashing the
/// source, not the block, means a faulty copy into the block is caught by the reader too.
pub fn layout(arrays: &[ArraySrc<'_>], checksums: bool) -> Result<(Vec<ArrayDesc>, u64)> {
    let page = sys::page_size() as u64;
    let mut off = HEADER_PAGE.max(page);
    let mut descs = Vec::with_capacity(arrays.len());
    for a in arrays {
        let size = dtype_size(a.dtype)?;
        descs.push(ArrayDesc {
            kind: a.kind,
            dtype: a.dtype,
            fd_idx: 0,
            cols: a.cols,
            offset: off,
            count: a.bytes.len() as u64 / size,
            xxh3: if checksums { xxhash_rust::xxh3::xxh3_64(a.bytes) } else { 0 },
        });
        off = round_up(off + a.bytes.len() as u64, page);
    }
    Ok((descs, off))
}

/// Views bytes of a plain integer slice (for writing arrays into blocks).
pub fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain integer type (i32/i64/u8) with no padding; the byte view covers exactly
    // the slice's memory and borrows it.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn os(what: &str, e: std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ENOMEM) || e.raw_os_error() == Some(libc::ENOSPC) {
        Error::OutOfMemory(format!("dyng worker: {what}: {e}"))
    } else {
        Error::Io { path: format!("dyng worker: {what}"), source: e }
    }
}

// ---------------------------------------------------------------------------------------------
// Worker side: the reply pool.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Filling,
    Lent { call_id: u64, lend_seq: u64, since: Instant },
}

/// A pool block: the worker's fd and its one writable mapping.
pub struct PoolBlock {
    pub id: u32,
    pub fd: OwnedFd,
    map: Mapping,
    pub size: u64,
    pub state: BlockState,
    last_used: Instant,
}

/// Counters the worker reports in PONG.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolCounters {
    pub lent_blocks: u32,
    pub lent_bytes: u64,
    pub pool_blocks: u32,
    pub pool_bytes: u64,
    pub retired_total: u64,
    pub acks_ignored: u64,
    pub acks_accepted: u64,
    pub lends: u64,
}

/// The worker's pool of reply blocks.
pub struct Pool {
    pid: u32,
    generation: u32,
    future_write: bool,
    blocks: Vec<PoolBlock>,
    next_block_id: u32,
    next_lend_seq: u64,
    pub counters: PoolCounters,
}

impl Pool {
    pub fn new(generation: u32, future_write: bool) -> Self {
        Pool {
            pid: std::process::id(),
            generation,
            future_write,
            blocks: Vec::new(),
            next_block_id: 1,
            next_lend_seq: 1,
            counters: PoolCounters::default(),
        }
    }

    #[cfg(test)]
    pub fn future_write(&self) -> bool {
        self.future_write
    }

    fn index(&self, id: u32) -> Option<usize> {
        self.blocks.iter().position(|b| b.id == id)
    }

    /// A FREE block of at least `need` bytes (reused if at most 1.25x larger), now FILLING.
    pub fn acquire(&mut self, need: u64) -> Result<u32> {
        let need = round_up(need.max(1), POOL_ROUND);
        let reuse = self
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::Free && b.size >= need && b.size * 4 <= need * 5)
            .min_by_key(|b| b.size)
            .map(|b| b.id);
        if let Some(id) = reuse {
            let i = self.index(id).unwrap_or_default();
            self.blocks[i].state = BlockState::Filling;
            return Ok(id);
        }
        let id = self.next_block_id;
        self.next_block_id += 1;
        let fd = sys::memfd(&format!("dyng:w{}:g{}:b{}", self.pid, self.generation, id)).map_err(|e| os("memfd_create", e))?;
        sys::ftruncate(&fd, need).map_err(|e| os("ftruncate of a pool block", e))?;
        let map = Mapping::new(fd.as_raw_fd(), need as usize, true).map_err(|e| os("mmap of a pool block", e))?;
        self.seal(&fd)?;
        self.blocks.push(PoolBlock { id, fd, map, size: need, state: BlockState::Filling, last_used: Instant::now() });
        Ok(id)
    }

    /// After these seals the block's size is fixed and, with FUTURE_WRITE, a mapping made before
    /// them is the only writable one that can ever exist.
    fn seal(&self, fd: &OwnedFd) -> Result<()> {
        let mut seals = sys::SEAL_SHRINK | sys::SEAL_GROW;
        if self.future_write {
            seals |= sys::SEAL_FUTURE_WRITE;
        }
        sys::add_seals(fd.as_raw_fd(), seals).map_err(|e| os("sealing a pool block", e))
    }

    /// Writes page 0 and the arrays into a FILLING block (I1: only FILLING blocks are written).
    pub fn fill(&mut self, id: u32, header: &BlockHeader, arrays: &[ArraySrc<'_>]) -> Result<()> {
        let i = self.index(id).ok_or_else(|| Error::Internal(format!("fill of unknown block {id}")))?;
        let b = &mut self.blocks[i];
        if b.state != BlockState::Filling || header.total_len > b.size {
            return Err(Error::Internal(format!("block {id} is not FILLING or too small")));
        }
        let mem = b.map.bytes_mut();
        let page = header.encode();
        mem[..page.len()].copy_from_slice(&page);
        for (a, d) in arrays.iter().zip(&header.arrays) {
            mem[d.offset as usize..d.offset as usize + a.bytes.len()].copy_from_slice(a.bytes);
        }
        Ok(())
    }

    /// Fault injection only (`CORRUPT`, `BAD_HEADER` at W4): flips the byte at `offset` of a
    /// filled block, as a faulty copy or a stray write would, so that tests can see the reader's
    /// checks refuse it.
    pub fn flip_byte_for_test(&mut self, id: u32, offset: u64) {
        let Some(i) = self.index(id) else { return };
        if let Some(b) = self.blocks[i].map.bytes_mut().get_mut(offset as usize) {
            *b ^= 0x5a;
        }
    }

    /// Fault injection only (`UNSEALED`, `SHORT` at W4): a new memfd holding the first `len`
    /// bytes of block `id`, sealed as pool blocks are when `seal`, else not at all, for a
    /// malicious worker to lend in the block's place.
    pub fn copy_for_test(&self, id: u32, len: u64, seal: bool) -> Result<OwnedFd> {
        let i = self.index(id).ok_or_else(|| Error::Internal(format!("copy of unknown block {id}")))?;
        let fd = sys::memfd(&format!("dyng:w{}:g{}:t{id}", self.pid, self.generation)).map_err(|e| os("memfd_create", e))?;
        sys::ftruncate(&fd, len).map_err(|e| os("ftruncate of a test block", e))?;
        let n = len.min(self.blocks[i].size) as usize;
        let mut map = Mapping::new(fd.as_raw_fd(), len as usize, true).map_err(|e| os("mmap of a test block", e))?;
        map.bytes_mut()[..n].copy_from_slice(&self.blocks[i].map.bytes()[..n]);
        drop(map);
        if seal {
            self.seal(&fd)?;
        }
        Ok(fd)
    }

    /// FILLING -> LENT with a fresh, never reused `lend_seq` (I2). Returns the sequence and the fd.
    pub fn lend(&mut self, id: u32, call_id: u64) -> Result<(u64, RawFd)> {
        let i = self.index(id).ok_or_else(|| Error::Internal(format!("lend of unknown block {id}")))?;
        let seq = self.next_lend_seq;
        self.next_lend_seq += 1;
        let b = &mut self.blocks[i];
        b.state = BlockState::Lent { call_id, lend_seq: seq, since: Instant::now() };
        self.counters.lends += 1;
        Ok((seq, b.fd.as_raw_fd()))
    }

    /// The sequence the next lend will get (to write page 0 before lending).
    pub fn next_lend_seq(&self) -> u64 {
        self.next_lend_seq
    }

    /// A FILLING block goes back to FREE (error or cancel before lending).
    pub fn abort(&mut self, id: u32) {
        if let Some(i) = self.index(id) {
            if self.blocks[i].state == BlockState::Filling {
                self.blocks[i].state = BlockState::Free;
            }
        }
    }

    /// CONSUMED for `(block_id, lend_seq)`: accepted only if that block is LENT under that very
    /// sequence (I6); anything else is counted and ignored.
    pub fn consumed(&mut self, block_id: u32, lend_seq: u64) -> bool {
        let hit = self.index(block_id).filter(|&i| {
            matches!(self.blocks[i].state, BlockState::Lent { lend_seq: s, .. } if s == lend_seq)
        });
        match hit {
            Some(i) => {
                self.blocks[i].state = BlockState::Free;
                self.blocks[i].last_used = Instant::now();
                self.counters.acks_accepted += 1;
                true
            }
            None => {
                self.counters.acks_ignored += 1;
                false
            }
        }
    }

    /// Retires every block LENT for longer than `ttl` (I7): the worker drops its fd and mapping and
    /// never reuses the block; the host's mapping keeps the pages alive.
    pub fn retire_expired(&mut self, ttl: Duration, now: Instant) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        self.blocks.retain(|b| match b.state {
            BlockState::Lent { lend_seq, since, .. } if now.duration_since(since) >= ttl => {
                out.push((b.id, lend_seq));
                false
            }
            _ => true,
        });
        self.counters.retired_total += out.len() as u64;
        out
    }

    /// Drops FREE blocks (RELEASE_WORKSPACES, shutdown); returns the bytes released.
    pub fn trim(&mut self) -> u64 {
        let before: u64 = self.blocks.iter().map(|b| b.size).sum();
        self.blocks.retain(|b| b.state != BlockState::Free);
        before - self.blocks.iter().map(|b| b.size).sum::<u64>()
    }

    /// Drops FREE blocks idle for longer than `idle`.
    pub fn trim_idle(&mut self, idle: Duration, now: Instant) {
        self.blocks.retain(|b| b.state != BlockState::Free || now.duration_since(b.last_used) < idle);
    }

    pub fn snapshot(&self) -> PoolCounters {
        let mut c = self.counters;
        c.pool_blocks = self.blocks.len() as u32;
        c.pool_bytes = self.blocks.iter().map(|b| b.size).sum();
        let lent = self.blocks.iter().filter(|b| matches!(b.state, BlockState::Lent { .. }));
        c.lent_blocks = lent.clone().count() as u32;
        c.lent_bytes = lent.map(|b| b.size).sum();
        c
    }
}

/// Probes once whether the kernel accepts `F_SEAL_FUTURE_WRITE` (7.5).
pub fn probe_future_write() -> bool {
    let Ok(fd) = sys::memfd("dyng:probe") else { return false };
    sys::ftruncate(&fd, 4096).is_ok() && sys::add_seals(fd.as_raw_fd(), sys::SEAL_FUTURE_WRITE).is_ok()
}

// ---------------------------------------------------------------------------------------------
// Host side: validating and mapping a lent block.

/// A lent block mapped read-only by the host, after every check of I3 and 6.3.
pub struct HostBlock {
    pub map: Mapping,
    // Owned so that the lent memfd stays open exactly as long as its mapping.
    #[allow(dead_code)]
    pub fd: OwnedFd,
    pub header: BlockHeader,
}

impl HostBlock {
    /// Checks size and seals before mapping (no SIGBUS is possible afterwards), maps `PROT_READ`,
    /// then checks that page 0 equals what REPLY_OK announced and, with `checksums`, that every
    /// array matches its XXH3 (6.6). On error the fd is closed and the mapping unmapped by drop.
    pub fn open(fd: OwnedFd, expected: &BlockHeader, require_future_write: bool, checksums: bool) -> Result<Self> {
        let raw = fd.as_raw_fd();
        let size = sys::fstat_size(raw).map_err(|e| protocol(format!("fstat of a lent block: {e}")))?;
        if expected.total_len < HEADER_PAGE || size < expected.total_len {
            return Err(protocol(format!("lent block has {size} bytes, total_len is {}", expected.total_len)));
        }
        let seals = sys::get_seals(raw).map_err(|e| protocol(format!("F_GET_SEALS of a lent block: {e}")))?;
        let mut want = sys::SEAL_SHRINK | sys::SEAL_GROW;
        if require_future_write {
            want |= sys::SEAL_FUTURE_WRITE;
        }
        if seals & want != want {
            return Err(protocol(format!("lent block seals {seals:#x} lack {want:#x}")));
        }
        for a in &expected.arrays {
            if a.end()? > expected.total_len {
                return Err(protocol(format!("array of kind {} ends past total_len", a.kind)));
            }
            if a.offset % 8 != 0 {
                return Err(protocol(format!("array of kind {} is misaligned", a.kind)));
            }
        }
        let map = Mapping::new(raw, expected.total_len as usize, false).map_err(|e| protocol(format!("mmap of a lent block: {e}")))?;
        let header = BlockHeader::decode(&map.bytes()[..HEADER_PAGE as usize])?;
        if &header != expected {
            return Err(protocol("block page 0 differs from the REPLY_OK descriptor"));
        }
        let block = HostBlock { map, fd, header };
        if checksums {
            for a in &block.header.arrays {
                if let Some((d, bytes)) = block.array_bytes(a.kind) {
                    d.verify_xxh3(bytes)?;
                }
            }
        }
        Ok(block)
    }

    /// The bytes of array `kind`.
    pub fn array_bytes(&self, kind: u16) -> Option<(&ArrayDesc, &[u8])> {
        let d = self.header.arrays.iter().find(|a| a.kind == kind)?;
        let len = d.byte_len().ok()? as usize;
        Some((d, &self.map.bytes()[d.offset as usize..d.offset as usize + len]))
    }
}

// ---------------------------------------------------------------------------------------------
// Host input blocks (6.7) and their worker-side mapping.

/// Writes arrays into a fresh memfd, unmaps the writable mapping and seals the block fully, so
/// the worker parses it free of time-of-check/time-of-use races. With `checksums` the descriptors
/// carry the XXH3 of every array for the worker to verify (6.6).
pub fn sealed_input(seq: u64, arrays: &[ArraySrc<'_>], checksums: bool) -> Result<(OwnedFd, Vec<ArrayDesc>)> {
    let (descs, total) = layout(arrays, checksums)?;
    let fd = sys::memfd(&format!("dyng:h{}:i{seq}", std::process::id())).map_err(|e| os("memfd_create", e))?;
    sys::ftruncate(&fd, total).map_err(|e| os("ftruncate of an input block", e))?;
    {
        let mut map = Mapping::new(fd.as_raw_fd(), total as usize, true).map_err(|e| os("mmap of an input block", e))?;
        let mem = map.bytes_mut();
        for (a, d) in arrays.iter().zip(&descs) {
            mem[d.offset as usize..d.offset as usize + a.bytes.len()].copy_from_slice(a.bytes);
        }
    }
    sys::add_seals(fd.as_raw_fd(), sys::SEAL_SHRINK | sys::SEAL_GROW | sys::SEAL_WRITE | sys::SEAL_SEAL)
        .map_err(|e| os("sealing an input block", e))?;
    Ok((fd, descs))
}

/// An input block mapped read-only by the worker after checking its four seals, its size and,
/// when checksums were negotiated, the XXH3 of every array.
pub struct InputBlock {
    map: Mapping,
    descs: Vec<ArrayDesc>,
}

impl InputBlock {
    pub fn open(fds: &[OwnedFd], descs: &[ArrayDesc], checksums: bool) -> Result<Option<Self>> {
        if descs.is_empty() {
            return Ok(None);
        }
        if fds.len() != 1 || descs.iter().any(|d| d.fd_idx != 0) {
            return Err(protocol(format!("inputs must travel in one block, got {} fds", fds.len())));
        }
        let raw = fds[0].as_raw_fd();
        let want = sys::SEAL_SHRINK | sys::SEAL_GROW | sys::SEAL_WRITE | sys::SEAL_SEAL;
        let seals = sys::get_seals(raw).map_err(|e| protocol(format!("F_GET_SEALS of an input: {e}")))?;
        if seals & want != want {
            return Err(protocol(format!("input block seals {seals:#x} lack {want:#x}")));
        }
        let size = sys::fstat_size(raw).map_err(|e| protocol(format!("fstat of an input: {e}")))?;
        let mut end = HEADER_PAGE;
        for d in descs {
            if d.end()? > size || d.offset % 8 != 0 {
                return Err(protocol(format!("input array of kind {} lies outside its {size}-byte block", d.kind)));
            }
            end = end.max(d.end()?);
        }
        let map = Mapping::new(raw, end as usize, false).map_err(|e| protocol(format!("mmap of an input: {e}")))?;
        let block = InputBlock { map, descs: descs.to_vec() };
        if checksums {
            for d in descs {
                d.verify_xxh3(block.u8s(d.kind)?)?;
            }
        }
        Ok(Some(block))
    }

    pub fn desc(&self, kind: u16) -> Option<&ArrayDesc> {
        self.descs.iter().find(|d| d.kind == kind)
    }

    /// Array `kind` as i32 values (absent = empty).
    pub fn i32s(&self, kind: u16) -> Result<&[i32]> {
        self.typed(kind, super::messages::DTYPE_I32, "I32")
    }

    /// Array `kind` as i64 values (absent = empty).
    pub fn i64s(&self, kind: u16) -> Result<&[i64]> {
        self.typed(kind, super::messages::DTYPE_I64, "I64")
    }

    /// `T` must be the Rust type of `dtype` (4 or 8 bytes).
    fn typed<T>(&self, kind: u16, dtype: u8, name: &str) -> Result<&[T]> {
        match self.desc(kind) {
            None => Ok(&[]),
            Some(d) if d.dtype == dtype => {
                let b = &self.map.bytes()[d.offset as usize..d.end()? as usize];
                // SAFETY: the offset is 8-aligned within a page-aligned mapping, so the pointer is
                // aligned for T (at most 8 bytes); the length is a whole number of T (the dtype
                // matches); the mapping is sealed against writes and lives as long as `self`.
                Ok(unsafe { std::slice::from_raw_parts(b.as_ptr() as *const T, d.count as usize) })
            }
            Some(d) => Err(protocol(format!("input kind {} has dtype {}, want {name}", d.kind, d.dtype))),
        }
    }

    pub fn u8s(&self, kind: u16) -> Result<&[u8]> {
        match self.desc(kind) {
            None => Ok(&[]),
            Some(d) => Ok(&self.map.bytes()[d.offset as usize..d.end()? as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::messages::DTYPE_I64;
    use std::os::fd::FromRawFd;

    /// Another thread forking while input blocks are sealed (a program that spawns processes
    /// while it calls dyng) must not make sealing fail: children never get the writable mapping.
    #[test]
    fn sealing_inputs_survives_concurrent_forks() {
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // SAFETY (test): the child only sleeps and exits (async-signal-safe calls).
                    let pid = unsafe { libc::fork() };
                    if pid == 0 {
                        let ts = libc::timespec { tv_sec: 0, tv_nsec: 2_000_000 };
                        unsafe {
                            libc::nanosleep(&ts, std::ptr::null_mut());
                            libc::_exit(0);
                        }
                    }
                    assert!(pid > 0);
                    // SAFETY (test): reaping the child just forked.
                    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
                }
            });
            let data = vec![7u8; 1 << 20];
            let arrays = [ArraySrc { kind: 16, dtype: crate::worker::messages::DTYPE_U8, cols: 1, bytes: &data }];
            let result = (0..300).try_for_each(|seq| sealed_input(seq, &arrays, false).map(drop));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            result.expect("sealing an input block while another thread forks");
        });
    }

    #[test]
    fn consumed_ack_state_machine() {
        let mut p = Pool::new(1, probe_future_write());
        let id = p.acquire(10).unwrap();
        let (s1, _) = p.lend(id, 7).unwrap();
        assert!(!p.consumed(id, s1 + 1), "wrong lend_seq");
        assert!(p.consumed(id, s1));
        assert!(!p.consumed(id, s1), "duplicate ack");
        assert_eq!(p.snapshot().acks_ignored, 2);
        // The block is reused, under a new sequence.
        assert_eq!(p.acquire(10).unwrap(), id);
        let (s2, _) = p.lend(id, 8).unwrap();
        assert!(s2 > s1);
        assert_eq!(p.snapshot().pool_blocks, 1);
    }

    #[test]
    fn ttl_retires_but_host_mapping_survives() {
        let mut p = Pool::new(1, probe_future_write());
        let id = p.acquire(5000).unwrap();
        let data: Vec<i64> = (0..500).collect();
        let arrays = [ArraySrc { kind: 1, dtype: DTYPE_I64, cols: 1, bytes: as_bytes(&data) }];
        let (descs, total) = layout(&arrays, false).unwrap();
        let mut h = BlockHeader { block_id: id, lend_seq: p.next_lend_seq(), total_len: total, arrays: descs, ..Default::default() };
        p.fill(id, &h, &arrays).unwrap();
        let (seq, raw) = p.lend(id, 1).unwrap();
        h.lend_seq = seq;
        // SAFETY (test): dup of a live fd, as SCM_RIGHTS would hand the host its own reference.
        let dup = unsafe { std::os::fd::OwnedFd::from_raw_fd(libc::dup(raw)) };
        let host = HostBlock::open(dup, &h, p.future_write(), false).unwrap();
        let retired = p.retire_expired(Duration::ZERO, Instant::now());
        assert_eq!(retired, vec![(id, seq)]);
        assert_eq!(p.snapshot().pool_blocks, 0);
        let (_, bytes) = host.array_bytes(1).unwrap();
        assert_eq!(bytes, as_bytes(&data), "retire never invalidates the host mapping");
        assert!(!p.consumed(id, seq), "late ack after retire is ignored");
        assert_eq!(p.snapshot().retired_total, 1);
    }

    #[test]
    fn host_rejects_bad_blocks() {
        let mut p = Pool::new(1, false);
        let id = p.acquire(10).unwrap();
        let h = BlockHeader { block_id: id, lend_seq: 1, total_len: 8192, ..Default::default() };
        p.fill(id, &h, &[]).unwrap();
        let (_, raw) = p.lend(id, 1).unwrap();
        let open = |h: &BlockHeader| {
            // SAFETY (test): dup of a live fd.
            let dup = unsafe { std::os::fd::OwnedFd::from_raw_fd(libc::dup(raw)) };
            HostBlock::open(dup, h, false, false).map(|_| ())
        };
        open(&h).unwrap();
        assert!(open(&BlockHeader { lend_seq: 2, ..h.clone() }).is_err(), "page-0 mismatch");
        assert!(open(&BlockHeader { total_len: 1 << 40, ..h.clone() }).is_err(), "too short");
        // An unsealed memfd is refused before it is mapped.
        let m = sys::memfd("dyng:test").unwrap();
        sys::ftruncate(&m, 8192).unwrap();
        assert!(HostBlock::open(m, &h, false, false).is_err());
    }

    #[test]
    fn input_blocks_are_fully_sealed_and_checked() {
        let v: Vec<i32> = vec![1, 2, 3];
        let (fd, descs) = sealed_input(1, &[ArraySrc { kind: 16, dtype: 1, cols: 1, bytes: as_bytes(&v) }], false).unwrap();
        assert!(sys::ftruncate(&fd, 1).is_err());
        let fds = vec![fd];
        let ib = InputBlock::open(&fds, &descs, false).unwrap().unwrap();
        assert_eq!(ib.i32s(16).unwrap(), &v[..]);
        let mut bad = descs.clone();
        bad[0].count = 1 << 40;
        assert!(InputBlock::open(&fds, &bad, false).is_err());
        let m = sys::memfd("dyng:test").unwrap();
        sys::ftruncate(&m, 8192).unwrap();
        assert!(InputBlock::open(&[m], &descs, false).is_err(), "unsealed input");
        // Every seal but F_SEAL_WRITE (T4): the host could still write the input while the
        // worker parses it, so the worker refuses it.
        let m = sys::memfd("dyng:test").unwrap();
        sys::ftruncate(&m, 8192).unwrap();
        sys::add_seals(m.as_raw_fd(), sys::SEAL_SHRINK | sys::SEAL_GROW | sys::SEAL_SEAL).unwrap();
        let e = InputBlock::open(&[m], &descs, false).err().expect("an input without F_SEAL_WRITE must be refused");
        assert_eq!(e.kind(), crate::ErrorKind::Protocol, "{e}");
    }

    /// I3 from the worker's side (T4): once sealed, a pool block cannot change size, not even
    /// through the worker's own fd, so a host that checked the size can never see it shrink.
    /// (`sys.rs` tests the seals themselves; this tests that the pool applies them.)
    #[test]
    fn a_sealed_pool_block_cannot_be_truncated() {
        let mut p = Pool::new(1, probe_future_write());
        let id = p.acquire(10).unwrap();
        let fd = &p.blocks[p.index(id).unwrap()].fd;
        let size = sys::fstat_size(fd.as_raw_fd()).unwrap();
        for len in [0, size / 2, size * 2] {
            let e = sys::ftruncate(fd, len).expect_err("a sealed block was resized");
            assert_eq!(e.raw_os_error(), Some(libc::EPERM), "ftruncate to {len}: {e}");
        }
        assert_eq!(sys::fstat_size(fd.as_raw_fd()).unwrap(), size);
    }

    /// A lent block filled from `written` whose descriptors carry the checksums of `hashed`
    /// (identical arrays make a correct block; a flipped byte makes a corrupted one), opened by
    /// the host with checksums on or off.
    fn open_lent(hashed: &[i64], written: &[i64], checksums: bool) -> Result<HostBlock> {
        let mut p = Pool::new(1, probe_future_write());
        let id = p.acquire(8 * hashed.len() as u64).unwrap();
        fn src(v: &[i64]) -> [ArraySrc<'_>; 1] {
            [ArraySrc { kind: 1, dtype: DTYPE_I64, cols: 1, bytes: as_bytes(v) }]
        }
        let (descs, total) = layout(&src(hashed), true).unwrap();
        let h = BlockHeader { block_id: id, lend_seq: p.next_lend_seq(), total_len: total, arrays: descs, ..Default::default() };
        p.fill(id, &h, &src(written)).unwrap();
        let (_, raw) = p.lend(id, 1).unwrap();
        HostBlock::open(sys::dup(raw).unwrap(), &h, p.future_write(), checksums)
    }

    #[test]
    fn host_refuses_a_block_whose_checksum_does_not_match() {
        let data: Vec<i64> = (0..1000).map(|i| i * 31).collect();
        let mut flipped = data.clone();
        flipped[517] ^= 1 << 40;
        let good = open_lent(&data, &data, true).unwrap();
        let d = good.header.arrays[0];
        assert_eq!(d.xxh3, xxhash_rust::xxh3::xxh3_64(as_bytes(&data)), "the producer fills the sum");
        let e = open_lent(&data, &flipped, true).err().expect("a corrupted block must be refused");
        assert_eq!(e.kind(), crate::ErrorKind::Protocol, "{e}");
        assert!(e.to_string().contains("checksum"), "{e}");
        // The same corrupted block passes every other check: the checksum is what refuses it.
        open_lent(&data, &flipped, false).unwrap();
    }

    #[test]
    fn worker_refuses_an_input_whose_checksum_does_not_match() {
        let v: Vec<i32> = (0..3000).collect();
        let (fd, descs) = sealed_input(2, &[ArraySrc { kind: 16, dtype: 1, cols: 1, bytes: as_bytes(&v) }], true).unwrap();
        let fds = vec![fd];
        assert_eq!(InputBlock::open(&fds, &descs, true).unwrap().unwrap().i32s(16).unwrap(), &v[..]);
        let mut bad = descs.clone();
        bad[0].xxh3 ^= 1;
        let e = InputBlock::open(&fds, &bad, true).err().expect("a wrong sum must be refused");
        assert_eq!(e.kind(), crate::ErrorKind::Protocol, "{e}");
        assert!(InputBlock::open(&fds, &bad, false).is_ok(), "without checksums the sum is not read");
    }
}
