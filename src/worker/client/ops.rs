//! The operations a client offers, mirrored from the in-process library, and their inputs'
//! wire forms.

use super::*;

impl Client {
    pub(super) fn input(&self, arrays: &[ArraySrc<'_>]) -> Result<Input> {
        let seq = self.input_seq.fetch_add(1, Ordering::SeqCst) + 1;
        let (fd, descs) = sealed_input(seq, arrays, self.opts.checksums)?;
        Ok(Input { fd: Arc::new(fd), descs })
    }

    /// Loads `csr` as the worker's graph (replacing any previous one and its results).
    pub fn load_graph(&self, csr: &Csr) -> Result<GraphInfo> {
        let (n, m, k) = (csr.n(), csr.m(), csr.k());
        let input = self.input(&[
            ArraySrc { kind: kind::ROW_PTR, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(csr.row_ptr()) },
            ArraySrc { kind: kind::COL_IND, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(csr.col_ind()) },
            ArraySrc { kind: kind::WEIGHTS, dtype: DTYPE_I32, cols: k as u32, bytes: as_bytes(csr.weights()) },
        ])?;
        let params = OpParams::LoadGraph { n: n as u32, m: m as u64, kg: k as u16, base_epoch: 0 };
        let mut req = Request::new(params.clone());
        req.input = Some(input.clone());
        // Journaled as a pending base right before it is sent (12.2 rule 2).
        let mut saved = None;
        let journal = |core: &mut Core| {
            let next = core.epoch + 1;
            let old = std::mem::take(&mut core.journal);
            core.journal.base = Some((input, params, next));
            saved = Some((old, core.epoch, core.graph));
            core.epoch = next;
        };
        match self.call_journaled(req, Some(journal)) {
            Ok(r) => {
                let mut core = self.core.lock();
                core.epoch = r.epoch;
                if let Some(b) = &mut core.journal.base {
                    b.2 = r.epoch;
                }
                let info = GraphInfo { n, m, k, epoch: r.epoch };
                core.graph = Some(info);
                Ok(info)
            }
            Err(e) => {
                let mut core = self.core.lock();
                if let (false, Some(saved)) = (matches!(e, Error::WorkerLost(_)), saved) {
                    core.journal = saved.0;
                    core.epoch = saved.1;
                    core.graph = saved.2;
                }
                Err(e)
            }
        }
    }

    pub(super) fn push_result(&self, id: u64, params: OpParams, epoch: u64, adopted: Option<Input>) {
        let mut core = self.core.lock();
        core.max_result_id = core.max_result_id.max(id);
        if self.opts.journal {
            let adopted = adopted.map(|input| (input, epoch));
            core.journal.results.push(ResultDesc { id, params, epoch, adopted });
        }
    }

    /// Computes an SSSP tree resident in the worker.
    pub fn sssp_compute(&self, source: usize, objective: usize, opt: &SsspOptions) -> Result<RemoteResult> {
        let params = OpParams::SsspCompute {
            source: wire_source(source)?,
            objective: wire_objective(objective)?,
            delta: wire_delta(opt.delta)?,
            view_mask: 0,
            assign_id: 0,
            fallback: opt.fallback.code() as u8,
        };
        let r = self.call(Request::new(params.clone()))?;
        self.push_result(r.result_id, params, r.epoch, None);
        Ok(RemoteResult { id: r.result_id, k: 0, scale: 0, epoch: r.epoch })
    }

    /// Computes a MOSP result resident in the worker.
    pub fn mosp_compute(&self, source: usize, opt: &MospOptions) -> Result<RemoteResult> {
        // K as the in-process call checks it (a K the wire cannot carry is refused the same way).
        let k = match (opt.k, self.graph_info()) {
            (Some(k), Some(g)) => crate::mosp::resolve_objectives(g.k, Some(k))?,
            (Some(k), None) => k,
            (None, _) => 0,
        };
        if opt.preferences.len() > crate::graph::MAX_OBJECTIVES {
            crate::mosp::Preferences::new(k.max(1), &opt.preferences)?;
        }
        let params = OpParams::MospCompute {
            source: wire_source(source)?,
            k: u16::try_from(k).map_err(|_| Error::invalid(format!("dyng: K = {k} objectives requested; no graph is loaded")))?,
            prefs: opt.preferences.clone(),
            delta: wire_delta(opt.delta)?,
            view_mask: 0,
            assign_id: 0,
            fallback: opt.fallback.code() as u8,
        };
        let r = self.call(Request::new(params.clone()))?;
        let scale = Dec::new(&r.extra).u32().unwrap_or(0);
        self.push_result(r.result_id, params, r.epoch, None);
        let k = opt.k.or_else(|| self.graph_info().map(|g| g.k)).unwrap_or(0);
        Ok(RemoteResult { id: r.result_id, k, scale, epoch: r.epoch })
    }

    /// Adopts a caller's tree of `objective` (ADOPT_SSSP, an extension op) exactly as
    /// [`crate::SsspResult::from_arrays`] does in-process, and keeps it resident. The arrays go
    /// in one sealed input block, which the journal keeps to adopt the tree again after a crash.
    pub fn adopt_sssp(
        &self,
        source: usize,
        objective: usize,
        dist: &[i64],
        parent: &[i32],
        canonicalize: bool,
        opt: &SsspOptions,
    ) -> Result<RemoteResult> {
        self.adopt_sssp_with(source, objective, dist, parent, canonicalize, opt, None)
    }

    /// [`Client::adopt_sssp`] with the tree checked only as the originals check theirs
    /// (extension 4): the worker runs [`crate::SsspResult::from_arrays_unverified`] with
    /// `max_weight`, the objective's largest weight the tree's next batch brings (0 = the
    /// graph's own). `NOT_SUPPORTED`, nothing sent, from a worker without the LIGHT_ADOPT
    /// capability.
    #[allow(clippy::too_many_arguments)]
    pub fn adopt_sssp_as_originals(
        &self,
        source: usize,
        objective: usize,
        dist: &[i64],
        parent: &[i32],
        canonicalize: bool,
        max_weight: i64,
        opt: &SsspOptions,
    ) -> Result<RemoteResult> {
        self.adopt_sssp_with(source, objective, dist, parent, canonicalize, opt, Some(light_bounds(&[max_weight])?))
    }

    #[allow(clippy::too_many_arguments)]
    fn adopt_sssp_with(
        &self,
        source: usize,
        objective: usize,
        dist: &[i64],
        parent: &[i32],
        canonicalize: bool,
        opt: &SsspOptions,
        light: Option<Vec<i64>>,
    ) -> Result<RemoteResult> {
        let params = OpParams::AdoptSssp {
            source: wire_source(source)?,
            objective: wire_objective(objective)?,
            canonicalize,
            delta: wire_delta(opt.delta)?,
            view_mask: 0,
            assign_id: 0,
            fallback: opt.fallback.code() as u8,
            light,
        };
        let input = self.trees_input(&[(dist, parent)])?;
        let r = self.call_adopt(params, input)?;
        Ok(RemoteResult { id: r.result_id, k: 0, scale: 0, epoch: r.epoch })
    }

    /// Combines K caller trees (objectives 0..K-1, each `(distances, parents)` of n vertices)
    /// into a resident MOSP result (ADOPT_MOSP, an extension op): the worker adopts each tree as
    /// `from_arrays` does (with `canonicalize` and `deltas[j]`; every tree runs `fallback`:
    /// `Fallback::AdaptiveCounted` where the drop-in driver adopts), then runs
    /// `from_trees` with `preferences`, as `dyng mosp --validate` does in-process.
    #[allow(clippy::too_many_arguments)]
    pub fn adopt_mosp(
        &self,
        source: usize,
        trees: &[(&[i64], &[i32])],
        canonicalize: bool,
        deltas: &[Option<i64>],
        fallback: crate::Fallback,
        preferences: &[u32],
    ) -> Result<RemoteResult> {
        self.adopt_mosp_with(source, trees, canonicalize, deltas, fallback, preferences, None)
    }

    /// [`Client::adopt_mosp`] as `dyng mosp` adopts in process (extension 4): tree j checked only
    /// as the originals check theirs ([`crate::SsspResult::from_arrays_unverified`] with
    /// `max_weights[j]`, 0 = the graph's own largest weight), and the K trees combined by the
    /// result's first update ([`crate::MospResult::from_trees_deferred`]): until then a VIEW of
    /// the combined arrays is refused. `NOT_SUPPORTED`, nothing sent, from a worker without the
    /// LIGHT_ADOPT capability.
    #[allow(clippy::too_many_arguments)]
    pub fn adopt_mosp_as_originals(
        &self,
        source: usize,
        trees: &[(&[i64], &[i32])],
        canonicalize: bool,
        deltas: &[Option<i64>],
        fallback: crate::Fallback,
        preferences: &[u32],
        max_weights: &[i64],
    ) -> Result<RemoteResult> {
        if max_weights.len() != trees.len() {
            return Err(Error::invalid(format!("dyng: {} weight bounds for {} trees", max_weights.len(), trees.len())));
        }
        self.adopt_mosp_with(source, trees, canonicalize, deltas, fallback, preferences, Some(light_bounds(max_weights)?))
    }

    #[allow(clippy::too_many_arguments)]
    fn adopt_mosp_with(
        &self,
        source: usize,
        trees: &[(&[i64], &[i32])],
        canonicalize: bool,
        deltas: &[Option<i64>],
        fallback: crate::Fallback,
        preferences: &[u32],
        light: Option<Vec<i64>>,
    ) -> Result<RemoteResult> {
        let k = trees.len();
        let max = crate::graph::MAX_OBJECTIVES;
        if k == 0 || k > max || deltas.len() != k {
            return Err(Error::invalid(format!("dyng: {k} trees ({} deltas); a MOSP result takes 1..{max} trees", deltas.len())));
        }
        if preferences.len() > max {
            // The op carries at most 64; the in-process check words the refusal.
            crate::mosp::Preferences::new(k, preferences)?;
        }
        let params = OpParams::AdoptMosp {
            source: wire_source(source)?,
            k: k as u16,
            prefs: preferences.to_vec(),
            canonicalize,
            deltas: deltas.iter().map(|d| wire_delta(*d)).collect::<Result<_>>()?,
            view_mask: 0,
            assign_id: 0,
            fallback: fallback.code() as u8,
            light,
        };
        let input = self.trees_input(trees)?;
        let r = self.call_adopt(params, input)?;
        let scale = Dec::new(&r.extra).u32()?;
        Ok(RemoteResult { id: r.result_id, k, scale, epoch: r.epoch })
    }

    /// The input block of ADOPT_SSSP (one tree) or ADOPT_MOSP (K trees): DIST and PARENT with
    /// K columns, objective-major as WEIGHTS (tree j's n values at [j*n, (j+1)*n)).
    pub(super) fn trees_input(&self, trees: &[(&[i64], &[i32])]) -> Result<Input> {
        let concat: (Vec<i64>, Vec<i32>);
        let (dist, parent) = match trees {
            // One tree goes without the copy.
            [(d, p)] => (*d, *p),
            _ => {
                concat = (trees.iter().flat_map(|(d, _)| d.iter().copied()).collect(), trees.iter().flat_map(|(_, p)| p.iter().copied()).collect());
                (&concat.0[..], &concat.1[..])
            }
        };
        let k = trees.len() as u32;
        self.input(&[
            ArraySrc { kind: kind::DIST, dtype: DTYPE_I64, cols: k, bytes: as_bytes(dist) },
            ArraySrc { kind: kind::PARENT, dtype: DTYPE_I32, cols: k, bytes: as_bytes(parent) },
        ])
    }

    /// Sends an adopt op with its input block and journals the result with that block.
    pub(super) fn call_adopt(&self, params: OpParams, input: Input) -> Result<Reply> {
        let mut req = Request::new(params.clone());
        req.input = Some(input.clone());
        let r = self.call(req)?;
        self.push_result(r.result_id, params, r.epoch, Some(input));
        Ok(r)
    }

    /// The counters of a resident result's last computation, adoption or update (STATS). They
    /// are not journaled: after a worker restart they are those of the replay (spec 12.2).
    pub fn result_stats(&self, result: u64) -> Result<ResultStats> {
        if result == 0 {
            return Err(Error::invalid("dyng worker: result id 0 names the worker; use worker_stats"));
        }
        let mut req = Request::new(OpParams::Stats);
        req.result_id = result;
        let r = self.call(req)?;
        let mut d = Dec::new(&r.extra);
        let stats = ResultStats::get(&mut d)?;
        d.finish()?;
        Ok(stats)
    }

    /// Applies `batch` once to the worker's graph and updates the listed results; returns the
    /// new epoch. An update in flight when the worker dies is replayed exactly once. The batch is
    /// applied exactly when this returns `Ok`: after an error the worker's state (rebuilt from
    /// the journal if it was lost) does not have it.
    pub fn update(&self, batch: &BatchView<'_>, results: &[u64]) -> Result<u64> {
        let input = self.batch_input(batch)?;
        let mut req = Request::new(OpParams::Update { result_ids: results.to_vec() });
        req.input = Some(input.clone());
        // Journaled right before it is sent (12.2 rule 1); listed results move to the new epoch.
        let mut before = None;
        let journal = |core: &mut Core| {
            let prev = core.epoch;
            before = Some((prev, core.journal.results.clone()));
            core.epoch += 1;
            let after = core.epoch;
            if self.opts.journal {
                core.journal.batches.push((input.clone(), after));
                core.journal.unconfirmed = true;
                for r in core.journal.results.iter_mut().filter(|r| results.contains(&r.id) && r.epoch == prev) {
                    r.epoch = after;
                }
            }
        };
        let out = self.call_journaled(req, Some(journal));
        let mut core = self.core.lock();
        core.journal.unconfirmed = false;
        match out {
            Ok(r) => {
                core.epoch = r.epoch;
                if let Some(g) = &mut core.graph {
                    g.epoch = r.epoch;
                }
                // Between calls and under the same lock, so no call sees a half-made base.
                self.maybe_checkpoint(&mut core);
                Ok(r.epoch)
            }
            Err(e) => {
                // A failed update is not applied: the worker validates before it changes
                // anything, and a worker lost with the batch is rebuilt without it. So the batch
                // leaves the journal (unless the poison rule took it out already) and the epoch
                // and the results go back. A worker restarted without a journal reset them itself.
                if let Some((prev_epoch, prev_results)) = before {
                    let ours = core.journal.batches.iter().rposition(|(i, _)| Arc::ptr_eq(&i.fd, &input.fd));
                    if let Some(i) = ours {
                        core.journal.batches.remove(i);
                    }
                    let poisoned = matches!(&e, Error::WorkerLost(m) if m.contains("dropped"));
                    let unjournaled_failure = !self.opts.journal && !matches!(e, Error::WorkerLost(_));
                    if ours.is_some() || poisoned || unjournaled_failure {
                        core.journal.results = prev_results;
                        core.epoch = prev_epoch;
                    }
                }
                Err(e)
            }
        }
    }

    /// The input block of an UPDATE.
    pub(super) fn batch_input(&self, batch: &BatchView<'_>) -> Result<Input> {
        let k = batch.k as u32;
        self.input(&[
            ArraySrc { kind: kind::INSERT_FROM, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.ins_src) },
            ArraySrc { kind: kind::INSERT_TO, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.ins_dst) },
            ArraySrc { kind: kind::INSERT_WEIGHTS, dtype: DTYPE_I32, cols: k, bytes: as_bytes(batch.ins_weights) },
            ArraySrc { kind: kind::DELETE_FROM, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.del_src) },
            ArraySrc { kind: kind::DELETE_TO, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.del_dst) },
        ])
    }

    /// A zero-copy view of arrays of a result (`mask`: bit kind-1; 0 = the defaults of 5.3).
    pub fn view(&self, result: u64, mask: u32, objective: usize) -> Result<View> {
        let mut req = Request::new(OpParams::View { view_mask: mask, objective: objective as u16 });
        req.result_id = result;
        self.call(req)?.view.ok_or_else(|| protocol("VIEW reply without a block"))
    }

    /// Copies one array (`kind`) of a result into a new vector; the lent block is released at once.
    pub fn copy_i64(&self, result: u64, kind: u16, objective: usize) -> Result<Vec<i64>> {
        let v = self.view(result, 1 << (kind - 1), objective)?;
        v.i64s(kind).map(copy_out).ok_or_else(|| protocol(format!("array kind {kind} missing or not I64")))
    }

    /// As [`copy_i64`](Self::copy_i64), for an i32 array.
    pub fn copy_i32(&self, result: u64, kind: u16, objective: usize) -> Result<Vec<i32>> {
        let v = self.view(result, 1 << (kind - 1), objective)?;
        v.i32s(kind).map(copy_out).ok_or_else(|| protocol(format!("array kind {kind} missing or not I32")))
    }

    /// Frees a resident result.
    pub fn drop_result(&self, result: u64) -> Result<()> {
        {
            let mut core = self.core.lock();
            core.journal.results.retain(|r| r.id != result);
        }
        let mut req = Request::new(OpParams::DropResult);
        req.result_id = result;
        self.call(req).map(drop)
    }

    /// Frees the worker's idle workspaces and FREE pool blocks; returns the bytes released.
    pub fn release_workspaces(&self) -> Result<u64> {
        let r = self.call(Request::new(OpParams::ReleaseWorkspaces))?;
        Ok(Dec::new(&r.extra).u64().unwrap_or(0))
    }

    /// (bytes of idle workspaces, bytes of the reply pool) in the worker.
    pub fn workspace_bytes(&self) -> Result<(u64, u64)> {
        let r = self.call(Request::new(OpParams::WorkspaceBytes))?;
        let mut d = Dec::new(&r.extra);
        Ok((d.u64()?, d.u64()?))
    }

    /// The worker's counters (the PONG body).
    pub fn worker_stats(&self) -> Result<Pong> {
        let r = self.call(Request::new(OpParams::Stats))?;
        let mut body = vec![0u8; 8];
        body.extend_from_slice(&r.extra);
        Pong::get(&mut Dec::new(&body))
    }

    /// The worker's current graph (ROW_PTR, COL_IND, WEIGHTS objective-major), lent.
    pub fn checkpoint(&self) -> Result<View> {
        self.call(Request::new(OpParams::Checkpoint))?.view.ok_or_else(|| protocol("CHECKPOINT reply without a block"))
    }

    /// Sends `bytes` through an input block and gets them back in a lent block.
    pub fn echo(&self, bytes: &[u8]) -> Result<View> {
        let mut req = Request::new(OpParams::Echo);
        req.input = Some(self.input(&[ArraySrc { kind: kind::ECHO_BYTES, dtype: DTYPE_U8, cols: 1, bytes }])?);
        self.call(req)?.view.ok_or_else(|| protocol("ECHO reply without a block"))
    }
}

/// The copy of copy-into, in two halves so that fault point H5 lies in the middle of it.
pub(super) fn copy_out<T: Copy>(s: &[T]) -> Vec<T> {
    let (a, b) = s.split_at(s.len() / 2);
    let mut out = Vec::with_capacity(s.len());
    out.extend_from_slice(a);
    fault::hit("H5");
    out.extend_from_slice(b);
    out
}

/// Refuses an extension op, or an op with an extension's field that a worker without the
/// extension would ignore, before it is sent to a worker that did not announce it in HELLO.
pub(super) fn extension_supported(core: &Core, params: &OpParams) -> Result<()> {
    let adopts = matches!(params, OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. });
    let caps = core.conn.as_ref().map_or(0, |c| c.caps);
    if adopts && caps & CAP_ADOPT == 0 {
        return Err(Error::NotSupported(format!(
            "dyng worker: op {} needs the ADOPT capability, which this worker does not announce (an older dyng-worker?)",
            params.op()
        )));
    }
    if params.light().is_some() && caps & CAP_LIGHT_ADOPT == 0 {
        return Err(Error::NotSupported(format!(
            "dyng worker: op {} adopting as the originals check needs the LIGHT_ADOPT capability, which this worker does not announce (an older dyng-worker?)",
            params.op()
        )));
    }
    if params.is_wide() && caps & CAP_WIDE == 0 {
        return Err(Error::NotSupported(format!(
            "dyng worker: op {} with more than {FIXED_ENTRIES} objectives needs the WIDE capability, which this worker does not announce (an older dyng-worker?)",
            params.op()
        )));
    }
    // A worker without the POLICY capability runs its op's default policy whatever the CALL says.
    if let (Some(f), Some(default)) = (params.fallback(), params.default_fallback()) {
        if f != default && caps & CAP_POLICY == 0 {
            return Err(Error::NotSupported(format!(
                "dyng worker: fallback policy {f} (DYNG_FALLBACK_*) needs the POLICY capability, which this worker does not announce (an older dyng-worker?); it would run policy {default}"
            )));
        }
    }
    Ok(())
}

/// Extension 4's weight bounds, refused host-side where negative (as the worker refuses them).
fn light_bounds(max_weights: &[i64]) -> Result<Vec<i64>> {
    match max_weights.iter().find(|w| **w < 0) {
        Some(w) => Err(Error::invalid(format!("dyng: weight bound {w} must be >= 0"))),
        None => Ok(max_weights.to_vec()),
    }
}

pub(super) fn wire_source(source: usize) -> Result<i32> {
    i32::try_from(source).map_err(|_| Error::invalid(format!("dyng: source {source} is outside the 32-bit range")))
}

pub(super) fn wire_objective(objective: usize) -> Result<u16> {
    u16::try_from(objective).map_err(|_| Error::invalid(format!("dyng: objective {objective} is outside [0, {})", crate::graph::MAX_OBJECTIVES)))
}

/// `None` travels as 0 (the default); an explicit 0 is refused here as in-process.
pub(super) fn wire_delta(delta: Option<i64>) -> Result<i64> {
    match delta {
        Some(0) => Err(Error::invalid("dyng: delta = 0 must be > 0")),
        d => Ok(d.unwrap_or(0)),
    }
}
