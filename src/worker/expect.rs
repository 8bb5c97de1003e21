//! What the host expects of a REPLY_OK, field by field (section 11): a reply that differs is a
//! protocol violation, so the worker is killed and replaced and the journal replayed, as for a
//! block that fails validation. Trusting a field instead let one corrupted `epoch` make every
//! later call fail with `STALE_RESULT` about versions the API never reported.
//!
//! The host knows each of them: the epoch the worker must be at after the call (the journal's),
//! the id a new result gets (the worker numbers results from WELCOME's `next_result_id` on, one
//! per compute or adoption), the shape of each op's extra fields, whether the op lends a block,
//! and which arrays of which sizes that block holds (the graph's n, KG from LOAD_GRAPH, the view
//! mask, the input of an ECHO). Only the values of the arrays, the counters and the timings are
//! the worker's to say.

use super::client::GraphInfo;
use super::frame::{protocol, Dec};
use super::messages::*;
use crate::error::Result;

/// The fields a reply to one call must have.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    /// The worker's epoch after the call.
    pub epoch: u64,
    /// `result_id` of the reply: the new result's id (compute, adoption), the id asked about
    /// (VIEW, STATS), else 0.
    pub result_id: u64,
    /// The resident graph, when one is (array sizes).
    pub graph: Option<GraphInfo>,
}

/// Whether `params` makes a new result.
pub(crate) fn makes_result(params: &OpParams) -> bool {
    matches!(params, OpParams::SsspCompute { .. } | OpParams::MospCompute { .. } | OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. })
}

/// The `assign_id` of an op that makes a result (0: the worker picks the next id).
pub(crate) fn assigned_id(params: &OpParams) -> u64 {
    match params {
        OpParams::SsspCompute { assign_id, .. }
        | OpParams::MospCompute { assign_id, .. }
        | OpParams::AdoptSssp { assign_id, .. }
        | OpParams::AdoptMosp { assign_id, .. } => *assign_id,
        _ => 0,
    }
}

/// Checks `ok`, the reply to a call of `params` (with input arrays `inputs`), against `e`. The error names the field, what came and what was expected.
pub(crate) fn check_reply(params: &OpParams, inputs: &[ArrayDesc], e: &Expect, ok: &ReplyOk) -> Result<()> {
    let op = params.op();
    if ok.epoch != e.epoch {
        return Err(protocol(format!("the reply to op {op} says epoch {}, the host expects {}", ok.epoch, e.epoch)));
    }
    if ok.result_id != e.result_id {
        return Err(protocol(format!("the reply to op {op} says result id {}, the host expects {}", ok.result_id, e.result_id)));
    }
    check_extra(params, ok)?;
    let lends = matches!(params, OpParams::View { .. } | OpParams::Checkpoint | OpParams::Echo);
    let has_block = ok.total_len != 0 || !ok.arrays.is_empty() || ok.block_id != 0 || ok.lend_seq != 0;
    if lends != has_block {
        return Err(protocol(format!(
            "the reply to op {op} {} a block",
            if has_block { "lends" } else { "lacks" }
        )));
    }
    if lends {
        check_arrays(params, inputs, e.graph, &ok.arrays)?;
    }
    Ok(())
}

/// The op's extra reply fields, exactly.
fn check_extra(params: &OpParams, ok: &ReplyOk) -> Result<()> {
    let op = params.op();
    let mut d = Dec::new(&ok.extra);
    match params {
        OpParams::MospCompute { .. } | OpParams::AdoptMosp { .. } => {
            let scale = d.u32()?;
            if scale == 0 || u64::from(scale) > crate::mosp::preferences::MAX_SCALE {
                return Err(protocol(format!("the reply to op {op} says L = {scale}, outside [1, 2^20]")));
            }
        }
        OpParams::Update { result_ids } => {
            let n = d.u32()?;
            if n as usize != result_ids.len() {
                return Err(protocol(format!("the reply to UPDATE counts {n} results, the call listed {}", result_ids.len())));
            }
        }
        OpParams::ReleaseWorkspaces => {
            d.u64()?;
        }
        OpParams::WorkspaceBytes => {
            d.u64()?;
            d.u64()?;
        }
        OpParams::Stats if ok.result_id != 0 => {
            let s = ResultStats::get(&mut d)?;
            if s.epoch != ok.epoch {
                return Err(protocol(format!("STATS at epoch {} in a reply at epoch {}", s.epoch, ok.epoch)));
            }
        }
        OpParams::Stats => {
            let mut body = vec![0u8; 8];
            body.extend_from_slice(&ok.extra);
            let mut b = Dec::new(&body);
            let p = Pong::get(&mut b)?;
            b.finish()?;
            if p.epoch != ok.epoch {
                return Err(protocol(format!("the worker's STATS say epoch {} in a reply at epoch {}", p.epoch, ok.epoch)));
            }
            return Ok(());
        }
        _ => {}
    }
    d.finish().map_err(|_| protocol(format!("the reply to op {op} carries {} bytes of extra fields it should not", d.remaining())))
}

/// (dtype, element count) each array kind of a view must have on graph `g`.
fn result_array(kind_: u16, g: Option<GraphInfo>) -> (u8, Option<u64>) {
    let n = g.map(|g| g.n as u64);
    match kind_ {
        kind::DIST | kind::COMBINED_DIST => (DTYPE_I64, n),
        kind::PATH_COSTS => (DTYPE_I64, g.map(|g| (g.n * g.k) as u64)),
        _ => (DTYPE_I32, n),
    }
}

/// The arrays of a lent block: the kinds the op asks for, each with its dtype and size.
fn check_arrays(params: &OpParams, inputs: &[ArrayDesc], g: Option<GraphInfo>, arrays: &[ArrayDesc]) -> Result<()> {
    let op = params.op();
    let kinds: Vec<u16> = arrays.iter().map(|a| a.kind).collect();
    let bad = |why: String| Err(protocol(format!("the block lent for op {op}: {why}")));
    match params {
        OpParams::View { view_mask, .. } => {
            let wanted = |mask: u32| (1..=5u16).filter(|k| mask & (1 << (k - 1)) != 0).collect::<Vec<_>>();
            // Mask 0 asks for the result's defaults: its tree (SSSP) or the combined arrays (MOSP).
            let ok = match view_mask {
                0 => kinds == wanted(0b11) || kinds == wanted(0b11100),
                m => kinds == wanted(*m),
            };
            if !ok {
                return bad(format!("array kinds {kinds:?} for view mask {view_mask:#x}"));
            }
            for a in arrays {
                let (dtype, count) = result_array(a.kind, g);
                if a.dtype != dtype || count.is_some_and(|c| c != a.count) {
                    return bad(format!("array kind {} has dtype {} and {} elements, the host expects dtype {dtype} and {count:?}", a.kind, a.dtype, a.count));
                }
            }
        }
        OpParams::Checkpoint => {
            if kinds != [kind::ROW_PTR, kind::COL_IND, kind::WEIGHTS] || arrays.iter().any(|a| a.dtype != DTYPE_I32) {
                return bad(format!("array kinds {kinds:?}, the host expects ROW_PTR, COL_IND, WEIGHTS as I32"));
            }
            if let Some(g) = g {
                let (rp, ci, w) = (&arrays[0], &arrays[1], &arrays[2]);
                if rp.count != g.n as u64 + 1 || w.cols as usize != g.k || Some(w.count) != ci.count.checked_mul(g.k as u64) {
                    return bad(format!(
                        "{} row pointers, {} columns, {} weights in {} columns for n = {}, K = {}",
                        rp.count, ci.count, w.count, w.cols, g.n, g.k
                    ));
                }
            }
        }
        OpParams::Echo => {
            let sent = inputs.iter().map(|a| a.count).sum::<u64>();
            if kinds != [kind::ECHO_BYTES] || arrays[0].dtype != DTYPE_U8 || arrays[0].count != sent {
                return bad(format!("array kinds {kinds:?} of {:?} elements for an ECHO of {sent} bytes", arrays.iter().map(|a| a.count).collect::<Vec<_>>()));
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view_reply(arrays: Vec<ArrayDesc>) -> ReplyOk {
        ReplyOk { epoch: 3, result_id: 9, total_len: 4096, block_id: 1, lend_seq: 1, arrays, ..Default::default() }
    }

    fn desc(kind_: u16, dtype: u8, count: u64) -> ArrayDesc {
        ArrayDesc { kind: kind_, dtype, cols: 1, count, ..Default::default() }
    }

    #[test]
    fn every_field_is_checked() {
        let g = Some(GraphInfo { n: 10, m: 30, k: 2, epoch: 3 });
        let e = Expect { epoch: 3, result_id: 9, graph: g };
        let view = OpParams::View { view_mask: 0b11, objective: 0 };
        let good = view_reply(vec![desc(kind::DIST, DTYPE_I64, 10), desc(kind::PARENT, DTYPE_I32, 10)]);
        check_reply(&view, &[], &e, &good).unwrap();
        let cases: Vec<(ReplyOk, &str)> = vec![
            (ReplyOk { epoch: 4, ..good.clone() }, "epoch 4, the host expects 3"),
            (ReplyOk { result_id: 8, ..good.clone() }, "result id 8, the host expects 9"),
            (ReplyOk { extra: vec![0], ..good.clone() }, "extra fields"),
            (view_reply(vec![desc(kind::DIST, DTYPE_I64, 10)]), "array kinds [1]"),
            (view_reply(vec![desc(kind::DIST, DTYPE_I64, 11), desc(kind::PARENT, DTYPE_I32, 10)]), "11 elements"),
            (view_reply(vec![desc(kind::DIST, DTYPE_I32, 10), desc(kind::PARENT, DTYPE_I32, 10)]), "dtype 1"),
            (ReplyOk { total_len: 0, arrays: vec![], block_id: 0, lend_seq: 0, ..good.clone() }, "lacks a block"),
        ];
        for (r, want) in cases {
            let err = check_reply(&view, &[], &e, &r).unwrap_err().to_string();
            assert!(err.contains(want), "{err} (want {want})");
        }
        let update = OpParams::Update { result_ids: vec![9, 10] };
        let e0 = Expect { result_id: 0, ..e };
        let mut extra = Vec::new();
        extra.extend_from_slice(&2u32.to_le_bytes());
        let ok = ReplyOk { epoch: 3, extra: extra.clone(), ..Default::default() };
        check_reply(&update, &[], &e0, &ok).unwrap();
        assert!(check_reply(&update, &[], &e0, &ReplyOk { extra: 1u32.to_le_bytes().to_vec(), ..ok.clone() }).is_err());
        assert!(check_reply(&update, &[], &e0, &ReplyOk { total_len: 4096, ..ok.clone() }).unwrap_err().to_string().contains("lends a block"));
        let mosp = OpParams::MospCompute { source: 0, k: 2, prefs: vec![], delta: 0, view_mask: 0, assign_id: 0, fallback: 0 };
        let e9 = Expect { result_id: 9, ..e };
        let ok = ReplyOk { epoch: 3, result_id: 9, extra: 6u32.to_le_bytes().to_vec(), ..Default::default() };
        check_reply(&mosp, &[], &e9, &ok).unwrap();
        assert!(check_reply(&mosp, &[], &e9, &ReplyOk { extra: 0u32.to_le_bytes().to_vec(), ..ok.clone() }).is_err());
        assert!(check_reply(&mosp, &[], &e9, &ReplyOk { extra: vec![], ..ok }).is_err());
    }
}
