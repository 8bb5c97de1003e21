//! The DRWP/1 message catalogue: type codes, op codes, array kinds and the packed bodies.
//!
//! Each body is a fixed struct written field by field in the order of the spec (section 5); there
//! is no self-describing serialization. Decoders check every count against its limit before
//! allocating.

use super::frame::{protocol, Dec, Enc};
use crate::error::Result;

pub mod msg {
    pub const HELLO: u16 = 0x01;
    pub const WELCOME: u16 = 0x02;
    pub const READY: u16 = 0x03;
    pub const CALL: u16 = 0x10;
    pub const CANCEL: u16 = 0x11;
    pub const CONSUMED: u16 = 0x12;
    pub const PING: u16 = 0x13;
    pub const SHUTDOWN: u16 = 0x14;
    pub const REPLY_OK: u16 = 0x20;
    pub const REPLY_ERR: u16 = 0x21;
    pub const HEARTBEAT: u16 = 0x22;
    pub const PONG: u16 = 0x23;
    pub const LOG: u16 = 0x24;
    pub const BLOCK_RETIRED: u16 = 0x25;
    pub const BYE: u16 = 0x26;
    pub const PROTOCOL_ERROR: u16 = 0x7F;
}

pub mod op {
    pub const LOAD_GRAPH: u16 = 1;
    pub const SSSP_COMPUTE: u16 = 2;
    pub const MOSP_COMPUTE: u16 = 3;
    pub const UPDATE: u16 = 4;
    pub const VIEW: u16 = 5;
    pub const DROP_RESULT: u16 = 6;
    pub const RELEASE_WORKSPACES: u16 = 7;
    pub const WORKSPACE_BYTES: u16 = 8;
    pub const STATS: u16 = 9;
    pub const CHECKPOINT: u16 = 10;
    pub const ECHO: u16 = 11;
    /// dyng extension (capability [`super::CAP_ADOPT`], docs/worker.md): adopt a caller's tree.
    pub const ADOPT_SSSP: u16 = 12;
    /// dyng extension (capability [`super::CAP_ADOPT`]): combine K caller trees into a MOSP result.
    pub const ADOPT_MOSP: u16 = 13;
}

/// Array kinds (5.2): what [`View::i64s`](crate::worker::View::i64s) and its siblings take.
/// The output kinds 1-5 are also bit `kind - 1` of a VIEW's mask.
pub mod kind {
    /// One objective's distances (i64, n).
    pub const DIST: u16 = 1;
    /// One objective's parents (i32, n).
    pub const PARENT: u16 = 2;
    /// The MOSP tree's distances on the combined graph (i64, n).
    pub const COMBINED_DIST: u16 = 3;
    /// The MOSP tree's parents (i32, n).
    pub const COMBINED_PARENT: u16 = 4;
    /// The MOSP tree's path costs (i64, n x K, vertex-major).
    pub const PATH_COSTS: u16 = 5;
    /// CSR row offsets (i32, n + 1): LOAD_GRAPH input, CHECKPOINT output.
    pub const ROW_PTR: u16 = 16;
    /// CSR heads (i32, m).
    pub const COL_IND: u16 = 17;
    /// CSR weights (i32, m x K).
    pub const WEIGHTS: u16 = 18;
    /// A batch's insertion tails (i32).
    pub const INSERT_FROM: u16 = 32;
    /// A batch's insertion heads (i32).
    pub const INSERT_TO: u16 = 33;
    /// A batch's insertion weights (i32, K per insertion).
    pub const INSERT_WEIGHTS: u16 = 34;
    /// A batch's deletion tails (i32).
    pub const DELETE_FROM: u16 = 35;
    /// A batch's deletion heads (i32).
    pub const DELETE_TO: u16 = 36;
    /// ECHO's bytes (u8), in and out.
    pub const ECHO_BYTES: u16 = 48;
}

pub const DTYPE_I32: u8 = 1;
pub const DTYPE_I64: u8 = 2;
pub const DTYPE_U8: u8 = 3;

pub fn dtype_size(dtype: u8) -> Result<u64> {
    match dtype {
        DTYPE_I32 => Ok(4),
        DTYPE_I64 => Ok(8),
        DTYPE_U8 => Ok(1),
        d => Err(protocol(format!("unknown dtype {d}"))),
    }
}

pub const REPLY_NONE: u8 = 0;
pub const REPLY_LENT: u8 = 1;
pub const FLAG_IDEMPOTENT: u16 = 1;
pub const FLAG_REPLAY: u16 = 2;
// Reserved by the spec; this version never sets it.
#[allow(dead_code)]
pub const FLAG_CHECKSUM: u16 = 4;
pub const EPOCH_ANY: u64 = u64::MAX;
pub const CAP_FUTURE_WRITE: u64 = 1;
/// WELCOME `strict_flags` bit 0: every array of every block carries its XXH3-64 (6.6).
pub const STRICT_CHECKSUMS: u32 = 1;
/// dyng extension 1 (bit 8; bits 5-7 stay reserved for the spec's section 18): the worker knows
/// ADOPT_SSSP and ADOPT_MOSP, appends `affected` and `fallback_used` to the STATS of a result, and
/// accepts WELCOME `backend` = [`BACKEND_SEQUENTIAL`].
pub const CAP_ADOPT: u64 = 1 << 8;
/// dyng extension 2 (bit 9): the worker reads the adaptive-update policy that a CALL of
/// SSSP_COMPUTE, MOSP_COMPUTE, ADOPT_SSSP or ADOPT_MOSP carries after its array descriptors
/// (`fallback u8`, [`crate::Fallback`]'s code, as `DYNG_FALLBACK_*`), and runs the result's
/// updates under it. A worker without it ignores the byte (a decoder stops after the descriptors)
/// and runs its op's default, [`FALLBACK_COMPUTE`] or [`FALLBACK_ADOPT`]: the host refuses another
/// policy before sending.
pub const CAP_POLICY: u64 = 1 << 9;
/// dyng extension 3 (bit 10): every K the library accepts (1..64) through MOSP_COMPUTE and
/// ADOPT_MOSP, whose fixed `prefs [32]u32` and `deltas [32]i64` hold 32. A CALL of either op with
/// more than 32 preferences or (ADOPT_MOSP) trees carries, after the policy byte, the rest:
/// `n_more_prefs u16, prefs [n_more_prefs]u32, n_more_deltas u16, deltas [n_more_deltas]i64`
/// (see docs/worker.md). A host refuses such a call, before sending, to a worker without the bit.
pub const CAP_WIDE: u64 = 1 << 10;
/// dyng extension 4 (bit 11): ADOPT_SSSP and ADOPT_MOSP may carry, last, the trailer
/// `n_bounds u16, max_weights [n_bounds]i64` (1 for ADOPT_SSSP, `k` for ADOPT_MOSP, which then
/// always carries extension 3's trailer first, empty within 32 trees): adopt tree j as the
/// originals check theirs, [`crate::SsspResult::from_arrays_unverified`] with `max_weights[j]`
/// (0 = the graph's own largest weight), and ADOPT_MOSP combines the trees at their first update
/// ([`crate::MospResult::from_trees_deferred`]), as `dyng mosp` does in process (see
/// docs/worker.md). A host refuses such a call, before sending, to a worker without the bit.
pub const CAP_LIGHT_ADOPT: u64 = 1 << 11;
/// Entries of the fixed preference and delta arrays of MOSP_COMPUTE and ADOPT_MOSP.
pub const FIXED_ENTRIES: usize = 32;
/// The policy of a computed result where the CALL carries none (a host without extension 2).
pub const FALLBACK_COMPUTE: u8 = crate::Fallback::Adaptive.code() as u8;
/// The policy of an adopted result where the CALL carries none: the drop-in entry points'.
pub const FALLBACK_ADOPT: u8 = crate::sssp::DROP_IN_FALLBACK.code() as u8;
/// WELCOME `backend` values: the spec's 0 AUTO, 1 CPU, 2 CUDA, and the extension's 3 SEQUENTIAL
/// (the single-threaded reference engine, whose counters are reproducible).
pub const BACKEND_AUTO: u8 = 0;
/// WELCOME `backend`: the parallel CPU engine.
pub const BACKEND_CPU: u8 = 1;
/// WELCOME `backend`: the CUDA engine.
pub const BACKEND_CUDA: u8 = 2;
/// WELCOME `backend`: the sequential reference engine (extension 1).
pub const BACKEND_SEQUENTIAL: u8 = 3;
pub const MAX_ARRAYS: usize = 16;
pub const MAX_CONSUMED: usize = 2048;
pub const MAX_DETAIL: usize = 4096;

/// REPLY_ERR conditions (5.5).
pub mod cond {
    pub const NONE: u16 = 0;
    pub const CANCELLED: u16 = 1;
    pub const BACKPRESSURE: u16 = 2;
    pub const EPOCH: u16 = 3;
    pub const NOT_FOUND: u16 = 4;
    pub const UNSUPPORTED: u16 = 5;
    pub const OOM: u16 = 6;
    pub const INVALID_ARG: u16 = 7;
}

/// PROTOCOL_ERROR codes (5.1 leaves them to the implementation): what the sender found wrong.
pub mod perr {
    /// A record that fails framing (magic, version, lengths, fd count, truncation).
    pub const BAD_RECORD: u16 = 1;
    /// A message type the receiver does not expect.
    pub const UNEXPECTED_TYPE: u16 = 2;
    /// A lent block that fails validation (size, seals, page 0, checksums).
    pub const BAD_BLOCK: u16 = 3;
    /// A body that does not decode.
    pub const BAD_BODY: u16 = 4;
}

/// PROTOCOL_ERROR body: `code u16` ([`perr`]), `offending_type u16` (0 = unknown).
pub fn put_protocol_error(e: &mut Enc, code: u16, offending_type: u16) {
    e.u16(code).u16(offending_type);
}

/// HELLO (W -> H).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    pub build_id: [u8; 20],
    pub worker_pid: u32,
    pub worker_starttime: u64,
    pub page_size: u32,
    pub caps: u64,
    pub gpu_count: u16,
    pub gpu_uuid: [u8; 16],
    pub max_block_bytes: u64,
}

impl Hello {
    pub fn put(&self, e: &mut Enc) {
        e.bytes(&self.build_id).u32(self.worker_pid).u64(self.worker_starttime).u32(self.page_size);
        e.u64(self.caps).u16(self.gpu_count).bytes(&self.gpu_uuid).u64(self.max_block_bytes);
    }
    pub fn get(d: &mut Dec) -> Result<Self> {
        Ok(Hello {
            build_id: d.array()?,
            worker_pid: d.u32()?,
            worker_starttime: d.u64()?,
            page_size: d.u32()?,
            caps: d.u64()?,
            gpu_count: d.u16()?,
            gpu_uuid: d.array()?,
            max_block_bytes: d.u64()?,
        })
    }
}

/// WELCOME (H -> W).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Welcome {
    pub spawn_id: u64,
    pub generation: u32,
    pub max_outstanding: u16,
    pub max_lent_bytes: u64,
    pub lend_ttl_ms: u32,
    pub heartbeat_ms: u32,
    pub log_rate_per_s: u32,
    pub strict_flags: u32,
    pub backend: u8,
    pub next_result_id: u64,
}

impl Welcome {
    pub fn put(&self, e: &mut Enc) {
        e.u64(self.spawn_id).u32(self.generation).u16(self.max_outstanding).u64(self.max_lent_bytes);
        e.u32(self.lend_ttl_ms).u32(self.heartbeat_ms).u32(self.log_rate_per_s).u32(self.strict_flags);
        e.u8(self.backend).u64(self.next_result_id);
    }
    pub fn get(d: &mut Dec) -> Result<Self> {
        Ok(Welcome {
            spawn_id: d.u64()?,
            generation: d.u32()?,
            max_outstanding: d.u16()?,
            max_lent_bytes: d.u64()?,
            lend_ttl_ms: d.u32()?,
            heartbeat_ms: d.u32()?,
            log_rate_per_s: d.u32()?,
            strict_flags: d.u32()?,
            backend: d.u8()?,
            next_result_id: d.u64()?,
        })
    }
}

/// READY (W -> H).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ready {
    pub epoch: u64,
    pub pool_blocks: u32,
    pub pool_bytes: u64,
}

impl Ready {
    pub fn put(&self, e: &mut Enc) {
        e.u64(self.epoch).u32(self.pool_blocks).u64(self.pool_bytes);
    }
    pub fn get(d: &mut Dec) -> Result<Self> {
        Ok(Ready { epoch: d.u64()?, pool_blocks: d.u32()?, pool_bytes: d.u64()? })
    }
}

/// The 32-byte array descriptor of CALL inputs, REPLY_OK and the block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArrayDesc {
    /// The array's kind (see [`kind`]).
    pub kind: u16,
    /// Element type: 1 i32, 2 i64, 3 u8.
    pub dtype: u8,
    /// Which of the message's fds holds the array.
    pub fd_idx: u8,
    /// Columns per row (K for weights, 1 otherwise).
    pub cols: u32,
    /// Byte offset of the array in its block.
    pub offset: u64,
    /// Elements in the array.
    pub count: u64,
    /// XXH3-64 of the array's bytes, where checksums are on (6.6); 0 otherwise.
    pub xxh3: u64,
}

impl ArrayDesc {
    pub(crate) fn put(&self, e: &mut Enc) {
        e.u16(self.kind).u8(self.dtype).u8(self.fd_idx).u32(self.cols);
        e.u64(self.offset).u64(self.count).u64(self.xxh3);
    }
    pub(crate) fn get(d: &mut Dec) -> Result<Self> {
        Ok(ArrayDesc {
            kind: d.u16()?,
            dtype: d.u8()?,
            fd_idx: d.u8()?,
            cols: d.u32()?,
            offset: d.u64()?,
            count: d.u64()?,
            xxh3: d.u64()?,
        })
    }
    /// Checks `bytes` (the array this descriptor names) against its `xxh3` field (6.6): a
    /// mismatch is a protocol violation.
    pub(crate) fn verify_xxh3(&self, bytes: &[u8]) -> Result<()> {
        let got = xxhash_rust::xxh3::xxh3_64(bytes);
        if got != self.xxh3 {
            return Err(protocol(format!(
                "array of kind {} fails its checksum (XXH3 {got:#018x}, descriptor says {:#018x})",
                self.kind, self.xxh3
            )));
        }
        Ok(())
    }
    /// Bytes of the array; overflow is a protocol error.
    pub(crate) fn byte_len(&self) -> Result<u64> {
        self.count
            .checked_mul(dtype_size(self.dtype)?)
            .ok_or_else(|| protocol(format!("array of kind {} is too long", self.kind)))
    }
    pub(crate) fn end(&self) -> Result<u64> {
        self.offset
            .checked_add(self.byte_len()?)
            .ok_or_else(|| protocol(format!("array of kind {} ends past 2^64", self.kind)))
    }
}

fn put_descs(e: &mut Enc, descs: &[ArrayDesc]) {
    e.u8(descs.len() as u8);
    descs.iter().for_each(|a| a.put(e));
}

fn get_descs(d: &mut Dec) -> Result<Vec<ArrayDesc>> {
    let n = d.u8()? as usize;
    if n > MAX_ARRAYS {
        return Err(protocol(format!("{n} arrays exceed the limit {MAX_ARRAYS}")));
    }
    (0..n).map(|_| ArrayDesc::get(d)).collect()
}

/// The op parameters of a CALL (5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpParams {
    LoadGraph { n: u32, m: u64, kg: u16, base_epoch: u64 },
    /// `fallback`: the trees' adaptive-update policy ([`crate::Fallback`]'s code; extension 2,
    /// [`CAP_POLICY`]).
    SsspCompute { source: i32, objective: u16, delta: i64, view_mask: u32, assign_id: u64, fallback: u8 },
    MospCompute { source: i32, k: u16, prefs: Vec<u32>, delta: i64, view_mask: u32, assign_id: u64, fallback: u8 },
    Update { result_ids: Vec<u64> },
    View { view_mask: u32, objective: u16 },
    DropResult,
    ReleaseWorkspaces,
    WorkspaceBytes,
    Stats,
    Checkpoint,
    Echo,
    /// Inputs DIST (I64, n) and PARENT (I32, n). `light`: the tree's weight bound where it is
    /// adopted as the originals check theirs (extension 4, [`CAP_LIGHT_ADOPT`]), one entry.
    AdoptSssp { source: i32, objective: u16, canonicalize: bool, delta: i64, view_mask: u32, assign_id: u64, fallback: u8, light: Option<Vec<i64>> },
    /// Inputs DIST (I64, n x k) and PARENT (I32, n x k), objective-major (`[j*n + v]`), `cols` = k;
    /// `deltas[j]` is tree j's bucket width (0 = default); `light` (extension 4), tree j's weight
    /// bound where the trees are adopted as the originals check theirs and combined at the
    /// result's first update.
    AdoptMosp { source: i32, k: u16, prefs: Vec<u32>, canonicalize: bool, deltas: Vec<i64>, view_mask: u32, assign_id: u64, fallback: u8, light: Option<Vec<i64>> },
}

impl OpParams {
    /// The adaptive-update policy the op carries (extension 2), for the ops that make a result.
    pub fn fallback(&self) -> Option<u8> {
        match self {
            OpParams::SsspCompute { fallback, .. }
            | OpParams::MospCompute { fallback, .. }
            | OpParams::AdoptSssp { fallback, .. }
            | OpParams::AdoptMosp { fallback, .. } => Some(*fallback),
            _ => None,
        }
    }

    /// The policy a worker without extension 2 runs for the op (the one a CALL without the
    /// policy byte decodes to), for the ops that make a result.
    pub fn default_fallback(&self) -> Option<u8> {
        match self {
            OpParams::SsspCompute { .. } | OpParams::MospCompute { .. } => Some(FALLBACK_COMPUTE),
            OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. } => Some(FALLBACK_ADOPT),
            _ => None,
        }
    }

    fn fallback_mut(&mut self) -> Option<&mut u8> {
        match self {
            OpParams::SsspCompute { fallback, .. }
            | OpParams::MospCompute { fallback, .. }
            | OpParams::AdoptSssp { fallback, .. }
            | OpParams::AdoptMosp { fallback, .. } => Some(fallback),
            _ => None,
        }
    }

    /// The weight bounds of an adoption as the originals check (extension 4), one per tree.
    pub fn light(&self) -> Option<&[i64]> {
        match self {
            OpParams::AdoptSssp { light, .. } | OpParams::AdoptMosp { light, .. } => light.as_deref(),
            _ => None,
        }
    }

    /// Whether the op needs extension 3 ([`CAP_WIDE`]): more than 32 preferences or trees.
    pub fn is_wide(&self) -> bool {
        match self {
            OpParams::MospCompute { prefs, .. } => prefs.len() > FIXED_ENTRIES,
            OpParams::AdoptMosp { prefs, deltas, .. } => prefs.len() > FIXED_ENTRIES || deltas.len() > FIXED_ENTRIES,
            _ => false,
        }
    }

    pub fn op(&self) -> u16 {
        match self {
            OpParams::LoadGraph { .. } => op::LOAD_GRAPH,
            OpParams::SsspCompute { .. } => op::SSSP_COMPUTE,
            OpParams::MospCompute { .. } => op::MOSP_COMPUTE,
            OpParams::Update { .. } => op::UPDATE,
            OpParams::View { .. } => op::VIEW,
            OpParams::DropResult => op::DROP_RESULT,
            OpParams::ReleaseWorkspaces => op::RELEASE_WORKSPACES,
            OpParams::WorkspaceBytes => op::WORKSPACE_BYTES,
            OpParams::Stats => op::STATS,
            OpParams::Checkpoint => op::CHECKPOINT,
            OpParams::Echo => op::ECHO,
            OpParams::AdoptSssp { .. } => op::ADOPT_SSSP,
            OpParams::AdoptMosp { .. } => op::ADOPT_MOSP,
        }
    }
}

/// CALL (H -> W).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub reply_mode: u8,
    pub call_flags: u16,
    pub deadline_ms: u32,
    pub expected_epoch: u64,
    pub result_id: u64,
    pub params: OpParams,
    pub inputs: Vec<ArrayDesc>,
}

impl Call {
    pub fn put(&self, e: &mut Enc) {
        e.u16(self.params.op()).u8(self.reply_mode).u16(self.call_flags).u32(self.deadline_ms);
        e.u64(self.expected_epoch).u64(self.result_id);
        match &self.params {
            OpParams::LoadGraph { n, m, kg, base_epoch } => {
                e.u32(*n).u64(*m).u16(*kg).u64(*base_epoch);
            }
            OpParams::SsspCompute { source, objective, delta, view_mask, assign_id, .. } => {
                e.i32(*source).u16(*objective).i64(*delta).u32(*view_mask).u64(*assign_id);
            }
            OpParams::MospCompute { source, k, prefs, delta, view_mask, assign_id, .. } => {
                e.i32(*source).u16(*k).u16(prefs.len().min(FIXED_ENTRIES) as u16);
                for i in 0..32 {
                    e.u32(prefs.get(i).copied().unwrap_or(0));
                }
                e.i64(*delta).u32(*view_mask).u64(*assign_id);
            }
            OpParams::Update { result_ids } => {
                e.u32(result_ids.len() as u32);
                result_ids.iter().for_each(|r| {
                    e.u64(*r);
                });
            }
            OpParams::View { view_mask, objective } => {
                e.u32(*view_mask).u16(*objective);
            }
            OpParams::AdoptSssp { source, objective, canonicalize, delta, view_mask, assign_id, .. } => {
                e.i32(*source).u16(*objective).u8(*canonicalize as u8).i64(*delta).u32(*view_mask).u64(*assign_id);
            }
            OpParams::AdoptMosp { source, k, prefs, canonicalize, deltas, view_mask, assign_id, .. } => {
                e.i32(*source).u16(*k).u16(prefs.len().min(FIXED_ENTRIES) as u16);
                for i in 0..32 {
                    e.u32(prefs.get(i).copied().unwrap_or(0));
                }
                e.u8(*canonicalize as u8);
                for i in 0..32 {
                    e.i64(deltas.get(i).copied().unwrap_or(0));
                }
                e.u32(*view_mask).u64(*assign_id);
            }
            _ => {}
        }
        put_descs(e, &self.inputs);
        if let Some(f) = self.params.fallback() {
            e.u8(f);
        }
        // Extension 3: what the fixed arrays cannot hold, only where there is some.
        let (prefs, deltas): (&[u32], &[i64]) = match &self.params {
            OpParams::MospCompute { prefs, .. } => (prefs, &[]),
            OpParams::AdoptMosp { prefs, deltas, .. } => (prefs, deltas),
            _ => (&[], &[]),
        };
        // Extension 4's trailer comes after extension 3's, which ADOPT_MOSP then always carries.
        let light = self.params.light();
        if self.params.is_wide() || (light.is_some() && matches!(self.params, OpParams::AdoptMosp { .. })) {
            let (more_p, more_d) = (&prefs[prefs.len().min(FIXED_ENTRIES)..], &deltas[deltas.len().min(FIXED_ENTRIES)..]);
            e.u16(more_p.len() as u16);
            more_p.iter().for_each(|p| {
                e.u32(*p);
            });
            e.u16(more_d.len() as u16);
            more_d.iter().for_each(|d| {
                e.i64(*d);
            });
        }
        if let Some(bounds) = light {
            e.u16(bounds.len() as u16);
            bounds.iter().for_each(|w| {
                e.i64(*w);
            });
        }
    }


    pub fn get(d: &mut Dec) -> Result<Self> {
        let op_code = d.u16()?;
        let reply_mode = d.u8()?;
        let call_flags = d.u16()?;
        let deadline_ms = d.u32()?;
        let expected_epoch = d.u64()?;
        let result_id = d.u64()?;
        let params = match op_code {
            op::LOAD_GRAPH => OpParams::LoadGraph { n: d.u32()?, m: d.u64()?, kg: d.u16()?, base_epoch: d.u64()? },
            op::SSSP_COMPUTE => OpParams::SsspCompute {
                source: d.i32()?,
                objective: d.u16()?,
                delta: d.i64()?,
                view_mask: d.u32()?,
                assign_id: d.u64()?,
                fallback: FALLBACK_COMPUTE,
            },
            op::MOSP_COMPUTE => {
                let source = d.i32()?;
                let k = d.u16()?;
                let prefs = get_prefs(d)?;
                OpParams::MospCompute {
                    source,
                    k,
                    prefs,
                    delta: d.i64()?,
                    view_mask: d.u32()?,
                    assign_id: d.u64()?,
                    fallback: FALLBACK_COMPUTE,
                }
            }
            op::UPDATE => {
                let n = d.u32()? as usize;
                // Bounded by the frame size: each id takes 8 bytes of a 64 KiB record.
                if n * 8 > d.remaining() {
                    return Err(protocol(format!("UPDATE lists {n} results, the body is shorter")));
                }
                OpParams::Update { result_ids: (0..n).map(|_| d.u64()).collect::<Result<_>>()? }
            }
            op::VIEW => OpParams::View { view_mask: d.u32()?, objective: d.u16()? },
            op::DROP_RESULT => OpParams::DropResult,
            op::RELEASE_WORKSPACES => OpParams::ReleaseWorkspaces,
            op::WORKSPACE_BYTES => OpParams::WorkspaceBytes,
            op::STATS => OpParams::Stats,
            op::CHECKPOINT => OpParams::Checkpoint,
            op::ECHO => OpParams::Echo,
            op::ADOPT_SSSP => OpParams::AdoptSssp {
                source: d.i32()?,
                objective: d.u16()?,
                canonicalize: get_bool(d)?,
                delta: d.i64()?,
                view_mask: d.u32()?,
                assign_id: d.u64()?,
                fallback: FALLBACK_ADOPT,
                light: None,
            },
            op::ADOPT_MOSP => {
                let source = d.i32()?;
                let k = d.u16()?;
                if k == 0 || k as usize > crate::graph::MAX_OBJECTIVES {
                    return Err(protocol(format!("ADOPT_MOSP with k = {k} trees (1..{})", crate::graph::MAX_OBJECTIVES)));
                }
                let prefs = get_prefs(d)?;
                let canonicalize = get_bool(d)?;
                let deltas: Vec<i64> = (0..32).map(|_| d.i64()).collect::<Result<_>>()?;
                OpParams::AdoptMosp {
                    source,
                    k,
                    prefs,
                    canonicalize,
                    // Trees beyond 32 take their deltas from the extension-3 trailer below.
                    deltas: deltas[..(k as usize).min(FIXED_ENTRIES)].to_vec(),
                    view_mask: d.u32()?,
                    assign_id: d.u64()?,
                    fallback: FALLBACK_ADOPT,
                    light: None,
                }
            }
            other => return Err(protocol(format!("unknown op {other}"))),
        };
        let inputs = get_descs(d)?;
        let mut params = params;
        if let (Some(f), true) = (params.fallback_mut(), d.remaining() > 0) {
            let code = d.u8()?;
            if crate::Fallback::from_code(code as u32).is_none() {
                return Err(protocol(format!("fallback = {code} is not a policy (0..3)")));
            }
            *f = code;
        }
        if d.remaining() > 0 && matches!(params, OpParams::MospCompute { .. } | OpParams::AdoptMosp { .. }) {
            get_wide_trailer(d, &mut params)?;
        }
        if d.remaining() > 0 && matches!(params, OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. }) {
            get_light_trailer(d, &mut params)?;
        }
        if matches!(params, OpParams::MospCompute { .. } | OpParams::AdoptMosp { .. }) || params.light().is_some() {
            d.finish()?;
        }
        if let OpParams::AdoptMosp { k, deltas, .. } = &params {
            if deltas.len() != *k as usize {
                return Err(protocol(format!("ADOPT_MOSP with k = {k} trees carries {} deltas", deltas.len())));
            }
        }
        Ok(Call { reply_mode, call_flags, deadline_ms, expected_epoch, result_id, params, inputs })
    }
}

/// Extension 3's trailer: the preferences and deltas beyond the fixed arrays' 32, appended to
/// those of MOSP_COMPUTE (no deltas) and ADOPT_MOSP.
fn get_wide_trailer(d: &mut Dec, params: &mut OpParams) -> Result<()> {
    let max = crate::graph::MAX_OBJECTIVES;
    let (prefs, deltas) = match params {
        OpParams::MospCompute { prefs, .. } => (prefs, None),
        OpParams::AdoptMosp { prefs, deltas, .. } => (prefs, Some(deltas)),
        _ => return Ok(()),
    };
    let n = d.u16()? as usize;
    if n > 0 && prefs.len() != FIXED_ENTRIES || prefs.len() + n > max {
        return Err(protocol(format!("{n} more preferences after {} (at most {max} in all)", prefs.len())));
    }
    for _ in 0..n {
        prefs.push(d.u32()?);
    }
    let n = d.u16()? as usize;
    match deltas {
        Some(deltas) if (n == 0 || deltas.len() == FIXED_ENTRIES) && deltas.len() + n <= max => {
            for _ in 0..n {
                deltas.push(d.i64()?);
            }
        }
        _ if n == 0 => {}
        _ => return Err(protocol(format!("{n} more deltas where the op has no room for them"))),
    }
    Ok(())
}

/// Extension 4's trailer: one weight bound per adopted tree, each at least 0.
fn get_light_trailer(d: &mut Dec, params: &mut OpParams) -> Result<()> {
    let (trees, light) = match params {
        OpParams::AdoptSssp { light, .. } => (1, light),
        OpParams::AdoptMosp { k, light, .. } => (*k as usize, light),
        _ => return Ok(()),
    };
    let n = d.u16()? as usize;
    if n != trees {
        return Err(protocol(format!("{n} weight bounds for {trees} adopted trees")));
    }
    let bounds: Vec<i64> = (0..n).map(|_| d.i64()).collect::<Result<_>>()?;
    if let Some(w) = bounds.iter().find(|w| **w < 0) {
        return Err(protocol(format!("weight bound {w} is negative")));
    }
    *light = Some(bounds);
    Ok(())
}

/// `n_prefs u16, prefs [32]u32`: the used prefix of a fixed preference array.
fn get_prefs(d: &mut Dec) -> Result<Vec<u32>> {
    let n_prefs = d.u16()? as usize;
    if n_prefs > 32 {
        return Err(protocol(format!("n_prefs = {n_prefs} exceeds 32")));
    }
    let all: Vec<u32> = (0..32).map(|_| d.u32()).collect::<Result<_>>()?;
    Ok(all[..n_prefs].to_vec())
}

fn get_bool(d: &mut Dec) -> Result<bool> {
    match d.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(protocol(format!("flag byte {v} is neither 0 nor 1"))),
    }
}

/// REPLY_OK (W -> H). `extra` holds the op's extra reply fields, decoded by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplyOk {
    pub epoch: u64,
    pub result_id: u64,
    pub compute_ns: u64,
    pub block_id: u32,
    pub lend_seq: u64,
    pub total_len: u64,
    pub arrays: Vec<ArrayDesc>,
    pub extra: Vec<u8>,
}

impl ReplyOk {
    pub fn put(&self, e: &mut Enc) {
        e.u64(self.epoch).u64(self.result_id).u64(self.compute_ns);
        e.u32(self.block_id).u64(self.lend_seq).u64(self.total_len);
        put_descs(e, &self.arrays);
        e.bytes(&self.extra);
    }
    pub fn get(d: &mut Dec) -> Result<Self> {
        Ok(ReplyOk {
            epoch: d.u64()?,
            result_id: d.u64()?,
            compute_ns: d.u64()?,
            block_id: d.u32()?,
            lend_seq: d.u64()?,
            total_len: d.u64()?,
            arrays: get_descs(d)?,
            extra: d.rest().to_vec(),
        })
    }
}

/// REPLY_ERR (W -> H).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplyErr {
    pub status: u32,
    pub condition: u16,
    pub retryable: u8,
    pub state_lost: bool,
    pub detail: String,
    /// TLVs: 1 bytes_needed, 2 epoch_now, 3 result_id (all u64).
    pub tlvs: Vec<(u16, u64)>,
}

impl ReplyErr {
    pub fn put(&self, e: &mut Enc) {
        let detail = truncate_utf8(&self.detail, MAX_DETAIL);
        e.u32(self.status).u16(self.condition).u8(self.retryable).u8(self.state_lost as u8);
        e.u16(detail.len() as u16).bytes(detail.as_bytes());
        for (t, v) in &self.tlvs {
            e.u16(*t).u16(8).u64(*v);
        }
    }
    pub fn get(d: &mut Dec) -> Result<Self> {
        let status = d.u32()?;
        let condition = d.u16()?;
        let retryable = d.u8()?;
        let state = d.u8()?;
        let len = d.u16()? as usize;
        if len > MAX_DETAIL {
            return Err(protocol(format!("detail of {len} bytes exceeds {MAX_DETAIL}")));
        }
        let detail = String::from_utf8_lossy(d.take(len)?).into_owned();
        let mut tlvs = Vec::new();
        while d.remaining() > 0 {
            let t = d.u16()?;
            let l = d.u16()? as usize;
            let bytes = d.take(l)?;
            // Unknown TLVs (and known ones of another size) are skipped, as the spec asks.
            if l == 8 {
                tlvs.push((t, u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))));
            }
        }
        Ok(ReplyErr { status, condition, retryable, state_lost: state == 1, detail, tlvs })
    }
    #[cfg(test)]
    pub fn tlv(&self, t: u16) -> Option<u64> {
        self.tlvs.iter().find(|(k, _)| *k == t).map(|(_, v)| *v)
    }
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// One CONSUMED entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub call_id: u64,
    pub block_id: u32,
    pub lend_seq: u64,
}

pub fn put_consumed(e: &mut Enc, acks: &[Ack]) {
    e.u16(acks.len() as u16);
    for a in acks {
        e.u64(a.call_id).u32(a.block_id).u64(a.lend_seq);
    }
}

pub fn get_consumed(d: &mut Dec) -> Result<Vec<Ack>> {
    let n = d.u16()? as usize;
    if n > MAX_CONSUMED || n * 20 > d.remaining() {
        return Err(protocol(format!("CONSUMED with {n} entries is malformed")));
    }
    (0..n)
        .map(|_| Ok(Ack { call_id: d.u64()?, block_id: d.u32()?, lend_seq: d.u64()? }))
        .collect()
}

/// HEARTBEAT (W -> H).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Heartbeat {
    pub running_call: u64,
    pub progress: u64,
    pub phase: u16,
    pub credit_starved: u8,
    pub mono_ns: u64,
}

impl Heartbeat {
    pub fn put(&self, e: &mut Enc) {
        e.u64(self.running_call).u64(self.progress).u16(self.phase).u8(self.credit_starved).u64(self.mono_ns);
    }
    #[cfg(test)]
    pub fn get(d: &mut Dec) -> Result<Self> {
        Ok(Heartbeat {
            running_call: d.u64()?,
            progress: d.u64()?,
            phase: d.u16()?,
            credit_starved: d.u8()?,
            mono_ns: d.u64()?,
        })
    }
}

/// PONG (W -> H); also the STATS body of result 0 (without the nonce).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pong {
    /// The PING's nonce, echoed (0 in STATS).
    pub nonce: u64,
    /// Calls waiting in the worker's queue.
    pub queued: u32,
    /// The call id running now (0: none).
    pub running_call: u64,
    /// Blocks lent to the host and not yet acknowledged.
    pub lent_blocks: u32,
    /// Bytes of those blocks.
    pub lent_bytes: u64,
    /// Blocks in the worker's pool, lent or free.
    pub pool_blocks: u32,
    /// Bytes of the pool's blocks.
    pub pool_bytes: u64,
    /// Lent blocks retired so far (their lend TTL ran out).
    pub retired_total: u64,
    /// CONSUMED acks that named no lent block (stale or repeated), ignored.
    pub acks_ignored: u64,
    /// The worker's resident set size.
    pub rss_bytes: u64,
    /// The worker's epoch.
    pub epoch: u64,
    /// Results resident in the worker.
    pub results: u32,
}

impl Pong {
    pub(crate) fn put(&self, e: &mut Enc) {
        e.u64(self.nonce).u32(self.queued).u64(self.running_call).u32(self.lent_blocks);
        e.u64(self.lent_bytes).u32(self.pool_blocks).u64(self.pool_bytes).u64(self.retired_total);
        e.u64(self.acks_ignored).u64(self.rss_bytes).u64(self.epoch).u32(self.results);
    }
    pub(crate) fn get(d: &mut Dec) -> Result<Self> {
        Ok(Pong {
            nonce: d.u64()?,
            queued: d.u32()?,
            running_call: d.u64()?,
            lent_blocks: d.u32()?,
            lent_bytes: d.u64()?,
            pool_blocks: d.u32()?,
            pool_bytes: d.u64()?,
            retired_total: d.u64()?,
            acks_ignored: d.u64()?,
            rss_bytes: d.u64()?,
            epoch: d.u64()?,
            results: d.u32()?,
        })
    }
}

/// BLOCK_RETIRED entries: (block_id, lend_seq).
pub fn put_retired(e: &mut Enc, blocks: &[(u32, u64)]) {
    e.u16(blocks.len() as u16);
    for (b, s) in blocks {
        e.u32(*b).u64(*s);
    }
}

pub fn get_retired(d: &mut Dec) -> Result<Vec<(u32, u64)>> {
    let n = d.u16()? as usize;
    if n * 12 > d.remaining() {
        return Err(protocol(format!("BLOCK_RETIRED with {n} entries is malformed")));
    }
    (0..n).map(|_| Ok((d.u32()?, d.u64()?))).collect()
}

/// Counters of one objective's last run in a STATS reply (5.3), with the extension's `affected`
/// and `fallback_used` (capability `CAP_ADOPT`; decoded as 0 and false from a worker without it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectiveStats {
    /// The objective.
    pub objective: u16,
    /// As [`UpdateStats::invalidated`](crate::UpdateStats::invalidated).
    pub invalidated: u64,
    /// As [`UpdateStats::iterations`](crate::UpdateStats::iterations).
    pub iterations: u64,
    /// As [`UpdateStats::epochs`](crate::UpdateStats::epochs).
    pub epochs: u64,
    /// As [`UpdateStats::pushes`](crate::UpdateStats::pushes).
    pub pushes: u64,
    /// As [`UpdateStats::packed_parents`](crate::UpdateStats::packed_parents).
    pub packed: bool,
    /// As [`UpdateStats::affected`](crate::UpdateStats::affected).
    pub affected: u64,
    /// As [`UpdateStats::fallback_used`](crate::UpdateStats::fallback_used).
    pub fallback_used: bool,
}

impl ObjectiveStats {
    /// The counters as the in-process engines report them (a worker sends no times).
    pub(crate) fn update_stats(&self) -> crate::UpdateStats {
        crate::UpdateStats {
            invalidated: self.invalidated as i64,
            affected: self.affected as i64,
            iterations: self.iterations as i64,
            epochs: self.epochs as i64,
            pushes: self.pushes as i64,
            packed_parents: self.packed,
            fallback_used: self.fallback_used,
            ..Default::default()
        }
    }
}

/// The combined step of a MOSP result in a STATS reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CombinedStats {
    /// Edges of the combined graph.
    pub edges: u64,
    /// L = lcm(Pref).
    pub scale: u32,
    /// The combined search's Delta.
    pub delta: i64,
    /// Push rounds of the combined search.
    pub iterations: u64,
    /// Vertex expansions of the combined search.
    pub pushes: u64,
}

/// The STATS reply of a result (5.3): `kind u8` (1 SSSP, 2 MOSP), `epoch`, `compute_ns`, the
/// objectives, the combined step (MOSP), then the extension trailer `n_obj x {affected u64,
/// fallback_used u8}`, after the spec's fields so a host that stops there still parses it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultStats {
    /// 1 SSSP, 2 MOSP.
    pub kind: u8,
    /// The worker's epoch the result is up to date with.
    pub epoch: u64,
    /// Wall-clock time of the result's last run, in nanoseconds.
    pub compute_ns: u64,
    /// Each objective's counters.
    pub objectives: Vec<ObjectiveStats>,
    /// The combined step (MOSP only).
    pub combined: Option<CombinedStats>,
}

impl ResultStats {
    pub(crate) fn put(&self, e: &mut Enc) {
        e.u8(self.kind).u64(self.epoch).u64(self.compute_ns).u8(self.objectives.len() as u8);
        for o in &self.objectives {
            e.u16(o.objective).u64(o.invalidated).u64(o.iterations).u64(o.epochs).u64(o.pushes).u8(o.packed as u8);
        }
        if let Some(c) = &self.combined {
            e.u64(c.edges).u32(c.scale).i64(c.delta).u64(c.iterations).u64(c.pushes);
        }
        for o in &self.objectives {
            e.u64(o.affected).u8(o.fallback_used as u8);
        }
    }
    pub(crate) fn get(d: &mut Dec) -> Result<Self> {
        let kind = d.u8()?;
        if kind != 1 && kind != 2 {
            return Err(protocol(format!("STATS of a result of kind {kind}")));
        }
        let epoch = d.u64()?;
        let compute_ns = d.u64()?;
        let n = d.u8()? as usize;
        let mut objectives = (0..n)
            .map(|_| {
                Ok(ObjectiveStats {
                    objective: d.u16()?,
                    invalidated: d.u64()?,
                    iterations: d.u64()?,
                    epochs: d.u64()?,
                    pushes: d.u64()?,
                    packed: d.u8()? != 0,
                    ..Default::default()
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let combined = if kind == 2 {
            Some(CombinedStats { edges: d.u64()?, scale: d.u32()?, delta: d.i64()?, iterations: d.u64()?, pushes: d.u64()? })
        } else {
            None
        };
        if d.remaining() > 0 {
            for o in &mut objectives {
                o.affected = d.u64()?;
                o.fallback_used = d.u8()? != 0;
            }
        }
        Ok(ResultStats { kind, epoch, compute_ns, objectives, combined })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round<T: PartialEq + std::fmt::Debug>(v: &T, put: impl Fn(&T, &mut Enc), get: impl Fn(&mut Dec) -> Result<T>) -> Vec<u8> {
        let mut e = Enc::default();
        put(v, &mut e);
        let mut d = Dec::new(&e.0);
        assert_eq!(&get(&mut d).unwrap(), v);
        d.finish().unwrap();
        // Every strict prefix is rejected, never a panic.
        for len in 0..e.0.len() {
            let mut d = Dec::new(&e.0[..len]);
            let r = get(&mut d).and_then(|_| d.finish());
            assert!(r.is_err(), "prefix {len} accepted");
        }
        e.0
    }

    /// `round` for a CALL that ends with extension 2's policy byte, which a host without the
    /// extension does not send: every shorter prefix is rejected, and the one without that byte
    /// decodes to the call with its op's default policy.
    fn round_with_policy(c: &Call) {
        let mut e = Enc::default();
        c.put(&mut e);
        let mut d = Dec::new(&e.0);
        assert_eq!(&Call::get(&mut d).unwrap(), c);
        d.finish().unwrap();
        let mut old = c.clone();
        *old.params.fallback_mut().unwrap() = c.params.default_fallback().unwrap();
        let cut = e.0.len() - 1;
        let mut d = Dec::new(&e.0[..cut]);
        assert_eq!(Call::get(&mut d).unwrap(), old);
        d.finish().unwrap();
        for len in 0..cut {
            let mut d = Dec::new(&e.0[..len]);
            assert!(Call::get(&mut d).and_then(|_| d.finish()).is_err(), "prefix {len} accepted");
        }
    }

    /// Extension 3: K up to 64 through MOSP_COMPUTE and ADOPT_MOSP; a CALL within 32 is the
    /// same bytes as before the extension; a trailer that does not fit the op is refused.
    #[test]
    fn wide_calls_round_trip_and_narrow_ones_are_unchanged() {
        let prefs: Vec<u32> = (1..=64).map(|p| 1 + p % 3).collect();
        let deltas: Vec<i64> = (0..64).collect();
        for k in [33usize, 40, 64] {
            for params in [
                OpParams::MospCompute { source: 3, k: k as u16, prefs: prefs[..k].to_vec(), delta: 7, view_mask: 0, assign_id: 0, fallback: 2 },
                OpParams::AdoptMosp { source: 3, k: k as u16, prefs: prefs[..k].to_vec(), canonicalize: true, deltas: deltas[..k].to_vec(), view_mask: 0, assign_id: 9, fallback: 3, light: None },
                OpParams::AdoptMosp { source: 3, k: k as u16, prefs: vec![], canonicalize: false, deltas: deltas[..k].to_vec(), view_mask: 0, assign_id: 0, fallback: 3, light: None },
            ] {
                assert!(params.is_wide());
                let c = Call { reply_mode: 0, call_flags: 0, deadline_ms: 0, expected_epoch: EPOCH_ANY, result_id: 0, params, inputs: vec![] };
                let mut e = Enc::default();
                c.put(&mut e);
                let mut d = Dec::new(&e.0);
                assert_eq!(Call::get(&mut d).unwrap(), c, "k = {k}");
                d.finish().unwrap();
                // Without its trailer an ADOPT_MOSP of more than 32 trees lacks deltas.
                if let OpParams::AdoptMosp { .. } = c.params {
                    let mut narrow = c.clone();
                    if let OpParams::AdoptMosp { prefs, deltas, .. } = &mut narrow.params {
                        prefs.truncate(32);
                        deltas.truncate(32);
                    }
                    let mut e = Enc::default();
                    narrow.put(&mut e);
                    assert!(Call::get(&mut Dec::new(&e.0)).is_err(), "k = {k} with 32 deltas");
                }
            }
        }
        let narrow = OpParams::AdoptMosp { source: 0, k: 32, prefs: prefs[..32].to_vec(), canonicalize: false, deltas: deltas[..32].to_vec(), view_mask: 0, assign_id: 0, fallback: 3, light: None };
        assert!(!narrow.is_wide());
        let c = Call { reply_mode: 0, call_flags: 0, deadline_ms: 0, expected_epoch: EPOCH_ANY, result_id: 0, params: narrow, inputs: vec![] };
        round_with_policy(&c);
        // 65 trees, and more deltas than trees.
        let mut e = Enc::default();
        Call { params: OpParams::AdoptMosp { source: 0, k: 65, prefs: vec![], canonicalize: false, deltas: vec![0; 65], view_mask: 0, assign_id: 0, fallback: 3, light: None }, ..c.clone() }.put(&mut e);
        assert!(Call::get(&mut Dec::new(&e.0)).is_err());
        let mut e = Enc::default();
        Call { params: OpParams::AdoptMosp { source: 0, k: 33, prefs: vec![], canonicalize: false, deltas: vec![0; 40], view_mask: 0, assign_id: 0, fallback: 3, light: None }, ..c }.put(&mut e);
        assert!(Call::get(&mut Dec::new(&e.0)).is_err());
    }

    /// Extension 4: an adoption as the originals check carries one weight bound per tree, last
    /// (ADOPT_MOSP after extension 3's trailer, empty within 32 trees). Without the bounds the
    /// bytes are the full verification's, as before the extension; a record cut anywhere decodes
    /// to an error or, cut where the bounds, the empty trailer or the policy byte begin, to the
    /// call without them; bounds that do not fit the trees are refused.
    #[test]
    fn light_adoptions_round_trip_after_every_other_trailer() {
        let base = Call { reply_mode: 0, call_flags: 0, deadline_ms: 0, expected_epoch: EPOCH_ANY, result_id: 0, params: OpParams::Echo, inputs: vec![] };
        let desc = ArrayDesc { kind: kind::DIST, dtype: DTYPE_I64, fd_idx: 0, cols: 1, offset: 4096, count: 11, xxh3: 0 };
        let prefs: Vec<u32> = (0..40).map(|p| 1 + p % 3).collect();
        let all = [
            OpParams::AdoptSssp { source: 2, objective: 1, canonicalize: true, delta: 7, view_mask: 3, assign_id: 4, fallback: 0, light: Some(vec![9]) },
            OpParams::AdoptMosp { source: 1, k: 3, prefs: vec![4, 1, 2], canonicalize: false, deltas: vec![0, 9, 3], view_mask: 0, assign_id: 5, fallback: 2, light: Some(vec![5, 0, 7]) },
            OpParams::AdoptMosp { source: 1, k: 40, prefs, canonicalize: false, deltas: (0..40).collect(), view_mask: 0, assign_id: 5, fallback: 1, light: Some((0..40).collect()) },
        ];
        for params in all {
            let c = Call { params, inputs: vec![desc], ..base.clone() };
            let trees = c.params.light().unwrap().len();
            let mut e = Enc::default();
            c.put(&mut e);
            let bytes = e.0;
            let mut d = Dec::new(&bytes);
            assert_eq!(Call::get(&mut d).unwrap(), c);
            d.finish().unwrap();
            let mut full = c.clone();
            if let OpParams::AdoptSssp { light, .. } | OpParams::AdoptMosp { light, .. } = &mut full.params {
                *light = None;
            }
            let mut e = Enc::default();
            full.put(&mut e);
            let narrow_mosp = matches!(c.params, OpParams::AdoptMosp { .. }) && !c.params.is_wide();
            let empty_wide = if narrow_mosp { 4 } else { 0 };
            assert_eq!(bytes.len(), e.0.len() + empty_wide + 2 + 8 * trees, "{:?}", c.params);
            assert_eq!(&bytes[..e.0.len()], &e.0[..], "the full verification's bytes come first");
            if narrow_mosp {
                assert_eq!(&bytes[e.0.len()..e.0.len() + 4], &[0u8; 4], "an empty extension-3 trailer");
            }
            // Cut before the policy byte: the call of a host without extension 2.
            let mut old = full.clone();
            *old.params.fallback_mut().unwrap() = FALLBACK_ADOPT;
            assert_ne!(old, full);
            let accepted: Vec<(usize, bool)> = (0..bytes.len())
                .filter_map(|len| {
                    let mut d = Dec::new(&bytes[..len]);
                    let back = Call::get(&mut d).and_then(|c| d.finish().map(|_| c)).ok()?;
                    assert!(back == full || back == old, "prefix {len}: {back:?}");
                    Some((len, back == full))
                })
                .collect();
            // (Not for more than 32 trees, whose deltas the fixed part cannot hold.)
            let mut cuts = if c.params.is_wide() { vec![] } else { vec![(e.0.len() - 1, false)] };
            cuts.push((e.0.len(), true));
            if narrow_mosp {
                cuts.push((e.0.len() + 4, true));
            }
            assert_eq!(accepted, cuts, "{:?}", c.params);
            // One bound too many or too few, and a negative one.
            let at = bytes.len() - 2 - 8 * trees;
            for n in [trees - 1, trees + 1] {
                let mut bad = bytes.clone();
                bad[at..at + 2].copy_from_slice(&(n as u16).to_le_bytes());
                assert!(Call::get(&mut Dec::new(&bad)).is_err(), "{n} bounds for {trees}");
            }
            let mut bad = bytes.clone();
            let last = bad.len() - 8;
            bad[last..].copy_from_slice(&(-1i64).to_le_bytes());
            assert!(Call::get(&mut Dec::new(&bad)).is_err(), "a negative bound");
        }
        // An op without trees carries no bounds.
        assert_eq!(OpParams::Echo.light(), None);
    }

    #[test]
    fn handshake_bodies_round_trip_with_pinned_sizes() {
        let h = Hello { worker_pid: 42, caps: CAP_FUTURE_WRITE, page_size: 4096, max_block_bytes: 1 << 30, ..Default::default() };
        assert_eq!(round(&h, Hello::put, Hello::get).len(), 20 + 4 + 8 + 4 + 8 + 2 + 16 + 8);
        let w = Welcome { spawn_id: 9, generation: 3, next_result_id: 5, backend: 1, ..Default::default() };
        assert_eq!(round(&w, Welcome::put, Welcome::get).len(), 8 + 4 + 2 + 8 + 4 * 4 + 1 + 8);
        let r = Ready { epoch: 1, pool_blocks: 2, pool_bytes: 3 };
        assert_eq!(round(&r, Ready::put, Ready::get).len(), 20);
        let hb = Heartbeat { running_call: 4, progress: 5, phase: 1, credit_starved: 1, mono_ns: 6 };
        assert_eq!(round(&hb, Heartbeat::put, Heartbeat::get).len(), 27);
        let p = Pong { nonce: 1, epoch: 7, results: 2, ..Default::default() };
        assert_eq!(round(&p, Pong::put, Pong::get).len(), 8 * 8 + 4 * 4);
    }

    #[test]
    fn calls_round_trip_for_every_op() {
        let d = ArrayDesc { kind: kind::ROW_PTR, dtype: DTYPE_I32, fd_idx: 0, cols: 1, offset: 4096, count: 11, xxh3: 0 };
        let all = vec![
            OpParams::LoadGraph { n: 10, m: 20, kg: 2, base_epoch: 0 },
            OpParams::SsspCompute { source: 3, objective: 1, delta: 0, view_mask: 3, assign_id: 0, fallback: 1 },
            OpParams::MospCompute { source: 0, k: 2, prefs: vec![1, 2], delta: 5, view_mask: 0, assign_id: 9, fallback: 2 },
            OpParams::Update { result_ids: vec![1, 2, 3] },
            OpParams::View { view_mask: 4, objective: 1 },
            OpParams::DropResult,
            OpParams::ReleaseWorkspaces,
            OpParams::WorkspaceBytes,
            OpParams::Stats,
            OpParams::Checkpoint,
            OpParams::Echo,
            OpParams::AdoptSssp { source: 2, objective: 1, canonicalize: true, delta: 7, view_mask: 3, assign_id: 4, fallback: 0, light: None },
            OpParams::AdoptMosp { source: 1, k: 2, prefs: vec![4, 1], canonicalize: false, deltas: vec![0, 9], view_mask: 0, assign_id: 5, fallback: 1, light: None },
        ];
        for params in all {
            let c = Call { reply_mode: 1, call_flags: 1, deadline_ms: 5, expected_epoch: EPOCH_ANY, result_id: 2, params, inputs: vec![d] };
            if c.params.fallback().is_some() {
                round_with_policy(&c);
            } else {
                round(&c, Call::put, Call::get);
            }
        }
        let mosp = Call { reply_mode: 0, call_flags: 0, deadline_ms: 0, expected_epoch: 0, result_id: 0,
            params: OpParams::MospCompute { source: 0, k: 0, prefs: vec![], delta: 0, view_mask: 0, assign_id: 0, fallback: 1 }, inputs: vec![] };
        let mut e = Enc::default();
        mosp.put(&mut e);
        // The spec's fields, no descriptors, then extension 2's policy byte.
        assert_eq!(e.0.len(), 25 + 4 + 2 + 2 + 128 + 8 + 4 + 8 + 1 + 1);
        // A host without extension 2 sends no policy byte: the op's default. A code that is not a
        // policy is a protocol error.
        let mut old = e.0.clone();
        old.pop();
        let back = Call::get(&mut Dec::new(&old)).unwrap();
        assert_eq!(back.params.fallback(), Some(FALLBACK_COMPUTE));
        let mut bad = e.0.clone();
        *bad.last_mut().unwrap() = 4;
        assert!(Call::get(&mut Dec::new(&bad)).is_err());
        // The extension's layouts (docs/worker.md) are pinned too.
        let mut c = mosp.clone();
        c.params = OpParams::AdoptSssp { source: 0, objective: 0, canonicalize: false, delta: 0, view_mask: 0, assign_id: 0, fallback: 0, light: None };
        let mut e = Enc::default();
        c.put(&mut e);
        assert_eq!(e.0.len(), 25 + 4 + 2 + 1 + 8 + 4 + 8 + 1 + 1);
        let mut old = e.0.clone();
        old.pop();
        assert_eq!(Call::get(&mut Dec::new(&old)).unwrap().params.fallback(), Some(FALLBACK_ADOPT));
        c.params = OpParams::AdoptMosp { source: 0, k: 1, prefs: vec![], canonicalize: false, deltas: vec![0], view_mask: 0, assign_id: 0, fallback: 3, light: None };
        let mut e = Enc::default();
        c.put(&mut e);
        assert_eq!(e.0.len(), 25 + 4 + 2 + 2 + 128 + 1 + 256 + 4 + 8 + 1 + 1);
        // A flag byte other than 0/1 and a tree count outside 1..32 are protocol errors.
        let mut bad = e.0.clone();
        bad[25 + 4 + 2 + 2 + 128] = 2;
        assert!(Call::get(&mut Dec::new(&bad)).is_err());
        let mut bad = e.0.clone();
        bad[25 + 4..25 + 6].copy_from_slice(&0u16.to_le_bytes());
        assert!(Call::get(&mut Dec::new(&bad)).is_err());
    }

    #[test]
    fn result_stats_round_trip_and_old_workers_parse() {
        let o = ObjectiveStats { objective: 1, invalidated: 2, iterations: 3, epochs: 4, pushes: 5, packed: true, affected: 6, fallback_used: true };
        let mosp = ResultStats { kind: 2, epoch: 3, compute_ns: 9, objectives: vec![o, o],
            combined: Some(CombinedStats { edges: 7, scale: 4, delta: 40, iterations: 8, pushes: 9 }) };
        let sssp = ResultStats { kind: 1, epoch: 1, compute_ns: 2, objectives: vec![o], combined: None };
        for (r, len) in [(&mosp, 1 + 8 + 8 + 1 + 2 * 35 + 36 + 2 * 9), (&sssp, 1 + 8 + 8 + 1 + 35 + 9)] {
            let mut e = Enc::default();
            r.put(&mut e);
            assert_eq!(e.0.len(), len);
            let mut d = Dec::new(&e.0);
            assert_eq!(&ResultStats::get(&mut d).unwrap(), r);
            d.finish().unwrap();
            // The spec's struct without the trailer (a worker without the extension) parses with
            // zeros; every other strict prefix is rejected.
            let spec_len = len - 9 * r.objectives.len();
            for cut in 0..len {
                let got = ResultStats::get(&mut Dec::new(&e.0[..cut]));
                if cut == spec_len {
                    let back = got.unwrap();
                    assert_eq!((back.objectives[0].affected, back.objectives[0].fallback_used), (0, false));
                    assert_eq!(back.objectives[0].pushes, 5);
                } else {
                    assert!(got.is_err(), "prefix {cut} accepted");
                }
            }
        }
    }


    #[test]
    fn replies_round_trip() {
        let ok = ReplyOk { epoch: 3, result_id: 4, compute_ns: 5, block_id: 6, lend_seq: 7, total_len: 8192,
            arrays: vec![ArrayDesc { kind: 1, dtype: 2, count: 3, offset: 4096, cols: 1, ..Default::default() }], extra: vec![1, 0, 0, 0] };
        let mut e = Enc::default();
        ok.put(&mut e);
        assert_eq!(ReplyOk::get(&mut Dec::new(&e.0)).unwrap(), ok);
        let err = ReplyErr { status: 2, condition: cond::EPOCH, retryable: 0, state_lost: false, detail: "dyng: x".into(), tlvs: vec![(2, 17)] };
        let mut e = Enc::default();
        err.put(&mut e);
        let back = ReplyErr::get(&mut Dec::new(&e.0)).unwrap();
        assert_eq!(back, err);
        assert_eq!(back.tlv(2), Some(17));
        let acks = vec![Ack { call_id: 1, block_id: 2, lend_seq: 3 }; 3];
        let mut e = Enc::default();
        put_consumed(&mut e, &acks);
        assert_eq!(e.0.len(), 2 + 3 * 20);
        assert_eq!(get_consumed(&mut Dec::new(&e.0)).unwrap(), acks);
        let mut e = Enc::default();
        put_retired(&mut e, &[(1, 2)]);
        assert_eq!(get_retired(&mut Dec::new(&e.0)).unwrap(), vec![(1, 2)]);
    }

    #[test]
    fn malformed_bodies_are_rejected() {
        let mut e = Enc::default();
        e.u16(99).u8(0).u16(0).u32(0).u64(0).u64(0).u8(0);
        assert!(Call::get(&mut Dec::new(&e.0)).is_err(), "unknown op");
        let mut e = Enc::default();
        e.u16(op::ECHO).u8(0).u16(0).u32(0).u64(0).u64(0).u8(200);
        assert!(Call::get(&mut Dec::new(&e.0)).is_err(), "too many arrays");
        let mut e = Enc::default();
        e.u16(op::UPDATE).u8(0).u16(0).u32(0).u64(0).u64(0).u32(u32::MAX);
        assert!(Call::get(&mut Dec::new(&e.0)).is_err(), "huge result list");
        let mut e = Enc::default();
        e.u16(u16::MAX);
        assert!(get_consumed(&mut Dec::new(&e.0)).is_err());
        let big = ArrayDesc { dtype: DTYPE_I64, count: u64::MAX, ..Default::default() };
        assert!(big.byte_len().is_err());
        assert!(ArrayDesc { dtype: 9, ..Default::default() }.byte_len().is_err());
    }
}
