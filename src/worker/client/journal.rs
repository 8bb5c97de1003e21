//! The journal: what a new worker replays after a death (the base graph, the batches, the
//! results), and the checkpoints that fold it into the present state.

use super::*;

impl Client {
    /// Rebuilds the worker's state from the journal (12.2, rule 4).
    pub(super) fn replay(&self, core: &mut Core) -> Result<()> {
        let Some((base, params, base_epoch)) = core.journal.base.clone() else { return Ok(()) };
        let mut epoch = base_epoch;
        let replay_flags = FLAG_REPLAY;
        let mut req = Request::new(params);
        if let OpParams::LoadGraph { base_epoch: b, .. } = &mut req.params {
            *b = base_epoch;
        }
        req.flags = replay_flags;
        req.input = Some(base);
        req.reply_epoch = Some(base_epoch);
        self.replay_step(core, &req)?;
        self.replay_results(core, epoch)?;
        let batches = core.journal.batches.clone();
        for (i, (input, after)) in batches.iter().enumerate() {
            // Adopted results are updated through the batches the caller updated them with.
            let listed = core
                .journal
                .results
                .iter()
                .filter(|r| r.adopted.as_ref().is_some_and(|(_, born)| *born < *after) && r.epoch >= *after)
                .map(|r| r.id)
                .collect();
            let mut req = Request::new(OpParams::Update { result_ids: listed });
            req.flags = replay_flags;
            req.expected_epoch = epoch;
            req.input = Some(input.clone());
            req.reply_epoch = Some(*after);
            if let Err(e) = self.replay_step(core, &req) {
                if e.kind() == crate::ErrorKind::WorkerLost && i + 1 == batches.len() && core.journal.unconfirmed {
                    // The worker died again executing the newest batch: a poison batch.
                    core.journal.batches.pop();
                }
                return Err(e);
            }
            epoch = *after;
            self.replay_results(core, epoch)?;
        }
        if epoch != core.epoch {
            // The worker's state is not the journal's (section 11): discard both.
            self.bury(core);
            core.journal = Journal::default();
            return Err(worker_lost(format!(
                "replay reached epoch {epoch}, the journal says {}; the application must reload",
                core.epoch
            )));
        }
        Ok(())
    }

    /// Recreates the results that exist from `epoch` on: computed results current at `epoch`
    /// (recomputed there), and results adopted at `epoch` (adopted again from their inputs).
    pub(super) fn replay_results(&self, core: &mut Core, epoch: u64) -> Result<()> {
        let descs: Vec<ResultDesc> = core
            .journal
            .results
            .iter()
            .filter(|r| match &r.adopted {
                Some((_, born)) => *born == epoch,
                None => r.epoch == epoch,
            })
            .cloned()
            .collect();
        for d in descs {
            let mut params = d.params.clone();
            match &mut params {
                OpParams::SsspCompute { assign_id, view_mask, .. }
                | OpParams::MospCompute { assign_id, view_mask, .. }
                | OpParams::AdoptSssp { assign_id, view_mask, .. }
                | OpParams::AdoptMosp { assign_id, view_mask, .. } => {
                    *assign_id = d.id;
                    *view_mask = 0;
                }
                _ => {}
            }
            let mut req = Request::new(params);
            req.flags = FLAG_REPLAY;
            req.input = d.adopted.as_ref().map(|(input, _)| input.clone());
            req.reply_epoch = Some(epoch);
            let r = self.replay_step(core, &req)?;
            if r.result_id != d.id {
                return Err(worker_lost(format!("replay gave result id {} for {}", r.result_id, d.id)));
            }
        }
        Ok(())
    }

    pub(super) fn replay_step(&self, core: &mut Core, req: &Request) -> Result<Reply> {
        match self.exchange(core, req, None) {
            Ok(r) => Ok(r),
            Err(Lost::Died(why)) => {
                self.bury(core);
                Err(worker_lost(format!("died during journal replay ({why})")))
            }
            Err(Lost::Killed(e)) => {
                self.bury(core);
                Err(e)
            }
            Err(Lost::Fail(e)) => {
                self.bury(core);
                core.journal = Journal::default();
                Err(worker_lost(format!("journal replay failed, the application must reload: {e}")))
            }
        }
    }

    /// (UPDATE batches, bytes of their input) in the journal since its base.
    pub fn journal_size(&self) -> (usize, u64) {
        let core = self.core.lock();
        (core.journal.batches.len(), core.journal.batches.iter().map(|(i, _)| i.array_bytes()).sum())
    }

    /// Replaces the journal's base, batches and computed-result descriptors by a checkpoint
    /// (12.3) once the batches pass `checkpoint_batches` or `checkpoint_bytes`. A checkpoint that
    /// fails leaves the journal as it was (it still rebuilds the worker), so the update that
    /// triggered it still succeeds; a worker that died or broke the protocol meanwhile is
    /// buried, and the next call replays the old journal.
    pub(super) fn maybe_checkpoint(&self, core: &mut Core) {
        let (batches, bytes) = {
            let j = &core.journal;
            (j.batches.len() as u64, j.batches.iter().map(|(i, _)| i.array_bytes()).sum::<u64>())
        };
        let over = |limit: u64, v: u64| limit != 0 && v > limit;
        let due = over(self.opts.checkpoint_batches as u64, batches) || over(self.opts.checkpoint_bytes, bytes);
        // The replay of a checkpoint adopts, so the worker must have the ADOPT extension (its
        // replacement is the same executable).
        let adopts = core.conn.as_ref().is_some_and(|c| c.caps & CAP_ADOPT != 0);
        if !self.opts.journal || !due || !adopts || core.journal.unconfirmed || core.journal.base.is_none() {
            return;
        }
        match self.take_checkpoint(core) {
            Ok(journal) => {
                core.journal = journal;
                self.counters.checkpoints.fetch_add(1, Ordering::SeqCst);
            }
            Err(lost) => {
                self.counters.checkpoint_failures.fetch_add(1, Ordering::SeqCst);
                if let Lost::Died(_) | Lost::Killed(_) = lost {
                    self.bury(core);
                }
            }
        }
    }

    /// The journal that rebuilds the worker's present state without the batches: the graph at
    /// epoch E (CHECKPOINT) as the base, and every result current at E as an adoption at E of its
    /// present arrays (VIEW), with its id and options. Adopted with `canonicalize` off, a tree
    /// comes back byte for byte, canonical or not; a MOSP result's combined graph and tree are
    /// rebuilt from its K trees by `from_trees`, as every update rebuilds them. Each is verified
    /// against the graph, one adopted as the originals check (extension 4) too, whose combined
    /// arrays must come back with it (the checkpoint follows the update that combined it); a
    /// tree the verification refuses (one of another graph the update did not find out) fails
    /// the checkpoint, which keeps the journal as it was. A stale result
    /// cannot be viewed and needs no arrays, only to be resident and stale under its id: it is
    /// recomputed on the base at epoch E - 1, and an empty batch (it moves the graph's version)
    /// takes the base to E, leaving it stale as it was.
    pub(super) fn take_checkpoint(&self, core: &mut Core) -> std::result::Result<Journal, Lost> {
        let epoch = core.epoch;
        let Some((_, OpParams::LoadGraph { n, kg, .. }, _)) = core.journal.base.clone() else {
            return Err(Lost::Fail(Error::Internal("dyng worker: a checkpoint needs a LOAD_GRAPH base".into())));
        };
        let lent = |r: Reply| r.view.ok_or_else(|| Lost::Fail(protocol("a lending reply without a block")));
        // Bounded like one call: a checkpoint is part of the update that triggers it.
        let deadline = self.opts.call_timeout.map(|t| Instant::now() + t);
        let graph = lent(self.exchange(core, &Request::new(OpParams::Checkpoint), deadline)?)?;
        if graph.epoch() != epoch {
            return Err(Lost::Fail(Error::Internal(format!("dyng worker: checkpoint at epoch {}, the host is at {epoch}", graph.epoch()))));
        }
        let arrays: Vec<ArraySrc<'_>> = graph
            .arrays()
            .iter()
            .map(|d| ArraySrc { kind: d.kind, dtype: d.dtype, cols: d.cols, bytes: graph.bytes(d.kind).unwrap_or(&[]) })
            .collect();
        let m = graph.arrays().iter().find(|d| d.kind == kind::COL_IND).map_or(0, |d| d.count);
        let base = self.input(&arrays)?;
        drop(graph);
        let stale_at = epoch.saturating_sub(1);
        let mut results = Vec::with_capacity(core.journal.results.len());
        for r in core.journal.results.clone() {
            if r.epoch != epoch {
                results.push(ResultDesc { id: r.id, params: stale_placeholder(&r.params), epoch: stale_at, adopted: None });
                continue;
            }
            let Some((params, objectives)) = adoption_of(&r.params, kg) else {
                return Err(Lost::Fail(Error::Internal(format!("dyng worker: result {} has no computing op in the journal", r.id))));
            };
            let mut views = Vec::with_capacity(objectives);
            for j in 0..objectives {
                let mut req = Request::new(OpParams::View { view_mask: (1 << (kind::DIST - 1)) | (1 << (kind::PARENT - 1)), objective: j as u16 });
                req.result_id = r.id;
                views.push(lent(self.exchange(core, &req, deadline)?)?);
            }
            let trees: Vec<(&[i64], &[i32])> = views
                .iter()
                .map(|v| (v.i64s(kind::DIST).unwrap_or(&[]), v.i32s(kind::PARENT).unwrap_or(&[])))
                .collect();
            if trees.iter().any(|(d, p)| d.len() != n as usize || p.len() != n as usize) {
                return Err(Lost::Fail(protocol(format!("VIEW of result {} without its n = {n} distances and parents", r.id))));
            }
            let input = self.trees_input(&trees)?;
            results.push(ResultDesc { id: r.id, params, epoch, adopted: Some((input, epoch)) });
        }
        let load = OpParams::LoadGraph { n, m, kg, base_epoch: 0 };
        let mut journal = Journal { base: Some((base, load, epoch)), batches: vec![], results, unconfirmed: false };
        if journal.results.iter().any(|r| r.adopted.is_none()) {
            let empty = BatchView { k: kg as usize, ins_src: &[], ins_dst: &[], ins_weights: &[], del_src: &[], del_dst: &[] };
            journal.batches.push((self.batch_input(&empty)?, epoch));
            if let Some(b) = &mut journal.base {
                b.2 = stale_at;
            }
        }
        Ok(journal)
    }
}

/// The adoption that recreates a result current at a checkpoint from its present trees, and
/// how many trees it takes: the result's op and options (source, objective or K and
/// preferences, delta per tree), `canonicalize` off so the trees come back as they are, verified
/// and combined at once (no extension-4 bounds: the combined arrays must come back too).
pub(super) fn adoption_of(params: &OpParams, graph_k: u16) -> Option<(OpParams, usize)> {
    match params.clone() {
        OpParams::SsspCompute { source, objective, delta, fallback, .. } | OpParams::AdoptSssp { source, objective, delta, fallback, .. } => {
            Some((OpParams::AdoptSssp { source, objective, canonicalize: false, delta, view_mask: 0, assign_id: 0, fallback, light: None }, 1))
        }
        OpParams::MospCompute { source, k, prefs, delta, fallback, .. } => {
            // K = 0 asks for all objectives of the graph, whose K no update changes.
            let k = if k == 0 { graph_k } else { k };
            let deltas = vec![delta; k as usize];
            Some((OpParams::AdoptMosp { source, k, prefs, canonicalize: false, deltas, view_mask: 0, assign_id: 0, fallback, light: None }, k as usize))
        }
        OpParams::AdoptMosp { source, k, prefs, deltas, fallback, .. } => {
            Some((OpParams::AdoptMosp { source, k, prefs, canonicalize: false, deltas, view_mask: 0, assign_id: 0, fallback, light: None }, k as usize))
        }
        _ => None,
    }
}

/// What recreates a stale result at a checkpoint: a compute of its kind, source and objectives.
/// Its arrays are never read (VIEW and UPDATE refuse a stale result), so a compute on the
/// checkpoint's graph does, where the adopted trees of an earlier graph might not even adopt.
pub(super) fn stale_placeholder(params: &OpParams) -> OpParams {
    match params.clone() {
        OpParams::AdoptSssp { source, objective, delta, fallback, .. } => OpParams::SsspCompute { source, objective, delta, view_mask: 0, assign_id: 0, fallback },
        OpParams::AdoptMosp { source, k, prefs, fallback, .. } => OpParams::MospCompute { source, k, prefs, delta: 0, view_mask: 0, assign_id: 0, fallback },
        other => other,
    }
}
