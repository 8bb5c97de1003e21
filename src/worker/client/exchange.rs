//! One call to the worker: its exchange with deadlines, hang and death detection, the received
//! blocks' checks, protocol violations, and the errors a reply carries.

use super::*;

impl Client {
    /// Runs one request, with restart, replay and retry per section 11.
    pub(super) fn call(&self, req: Request) -> Result<Reply> {
        self.call_journaled(req, None::<fn(&mut Core)>)
    }

    /// [`Self::call`] for a journaled op: `journal` runs under the client's lock once a worker is
    /// live, right before the request is first sent, and enters the op in the journal there (12.2
    /// rules 1, 2). Entered any earlier, a replay made by this very call (its worker had died
    /// before) would apply the op, and sending it would apply it a second time.
    pub(super) fn call_journaled(&self, req: Request, journal: Option<impl FnOnce(&mut Core)>) -> Result<Reply> {
        let mut journal = journal;
        let mut core = self.core.lock();
        let deadline = self.opts.call_timeout.map(|t| Instant::now() + t);
        let journaled = self.opts.journal && matches!(req.params, OpParams::Update { .. } | OpParams::LoadGraph { .. });
        let mut retries = 0;
        loop {
            self.ensure_live(&mut core)?;
            extension_supported(&core, &req.params)?;
            if let Some(j) = journal.take() {
                j(&mut core);
            }
            match self.exchange(&mut core, &req, deadline) {
                Ok(r) => return Ok(r),
                Err(Lost::Fail(e)) => return Err(e),
                Err(Lost::Killed(e)) => {
                    self.bury(&mut core);
                    return Err(e);
                }
                Err(Lost::Died(why)) => {
                    self.bury(&mut core);
                    if journaled {
                        // The call is in the journal: the replay applies it exactly once.
                        let before = core.journal.batches.len();
                        match self.ensure_live(&mut core) {
                            Ok(()) => return Ok(Reply { epoch: core.epoch, result_id: 0, extra: vec![], view: None }),
                            Err(e) if core.journal.batches.len() < before => {
                                return Err(worker_lost(format!("died twice executing this batch; it was dropped ({e})")))
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    let retry_ok = req.flags & FLAG_IDEMPOTENT != 0
                        || matches!(
                            req.params,
                            OpParams::SsspCompute { .. }
                                | OpParams::MospCompute { .. }
                                | OpParams::AdoptSssp { .. }
                                | OpParams::AdoptMosp { .. }
                                | OpParams::DropResult
                                | OpParams::ReleaseWorkspaces
                        );
                    if retry_ok && self.opts.journal && retries < self.opts.max_retries {
                        retries += 1;
                        continue;
                    }
                    if !self.opts.journal {
                        return Err(worker_lost(format!("restarted without journal; reload ({why})")));
                    }
                    return Err(worker_lost(why));
                }
            }
        }
    }

    /// Sends one CALL and waits for its reply, heartbeats, hang and deadline.
    pub(super) fn exchange(&self, core: &mut Core, req: &Request, deadline: Option<Instant>) -> std::result::Result<Reply, Lost> {
        let call_id = core.next_call_id;
        core.next_call_id += 1;
        let expect = Expect {
            epoch: req.reply_epoch.unwrap_or(core.epoch),
            result_id: match &req.params {
                p if makes_result(p) && req.flags & FLAG_REPLAY != 0 && assigned_id(p) != 0 => assigned_id(p),
                // The worker numbers results from WELCOME's next_result_id, one per new result.
                p if makes_result(p) => core.max_result_id + 1,
                OpParams::View { .. } | OpParams::Stats => req.result_id,
                _ => 0,
            },
            graph: core.graph,
        };
        let Core { conn, buf, max_result_id, .. } = core;
        let conn = conn.as_mut().ok_or_else(|| Lost::Died("no worker".into()))?;
        let call = Call {
            reply_mode: req.reply_mode,
            call_flags: req.flags,
            deadline_ms: 0,
            expected_epoch: req.expected_epoch,
            result_id: req.result_id,
            params: req.params.clone(),
            inputs: req.input.as_ref().map_or(vec![], |i| i.descs.clone()),
        };
        let mut e = Enc::default();
        call.put(&mut e);
        let fds: Vec<RawFd> = req.input.as_ref().map(|i| i.fd.as_raw_fd()).into_iter().collect();
        let h = Header { msg_type: msg::CALL, spawn_id: conn.spawn_id, generation: conn.generation, call_id, ..Default::default() };
        let frame = encode_frame(h, &e.0, fds.len())?;
        if let Err(e) = sys::send_record(conn.sock.as_raw_fd(), &frame, &fds, false) {
            return Err(Lost::Died(format!("send failed: {e}")));
        }
        fault::hit("H2");
        let mut last_frame = Instant::now();
        let mut cancel_until: Option<Instant> = None;
        loop {
            let now = Instant::now();
            let mut wake = last_frame + self.opts.hang_timeout;
            if let Some(d) = deadline {
                wake = wake.min(cancel_until.unwrap_or(d));
            }
            let ms = wake.saturating_duration_since(now).as_millis().min(i32::MAX as u128) as i32;
            let rev = sys::poll_in(&[conn.sock.as_raw_fd(), conn.pidfd.as_raw_fd()], ms.max(1))
                .map_err(|e| Lost::Fail(Error::Io { path: "dyng worker: poll".into(), source: e }))?;
            let now = Instant::now();
            if rev[0] == 0 && rev[1] == 0 {
                if let Some(until) = cancel_until {
                    if now >= until {
                        return Err(Lost::Killed(self.kill_for_timeout(core_conn_kill(conn))));
                    }
                } else if deadline.is_some_and(|d| now >= d) {
                    let h = Header { msg_type: msg::CANCEL, spawn_id: conn.spawn_id, generation: conn.generation, call_id, ..Default::default() };
                    if let Ok(f) = encode_frame(h, &[], 0) {
                        let _ = sys::send_record(conn.sock.as_raw_fd(), &f, &[], false);
                    }
                    cancel_until = Some(now + self.opts.cancel_grace);
                    continue;
                }
                if now.duration_since(last_frame) >= self.opts.hang_timeout {
                    return Err(Lost::Died(format!(
                        "hung (no frame for {} ms, generation {})",
                        self.opts.hang_timeout.as_millis(),
                        conn.generation
                    )));
                }
                continue;
            }
            // Drain the socket before looking at the pidfd: a reply sent just before the worker
            // died is still delivered (section 11).
            loop {
                let r = match sys::recv_record(conn.sock.as_raw_fd(), buf, true) {
                    Ok(r) => r,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(Lost::Died(format!("recv failed: {e}"))),
                };
                if r.len == 0 && r.fds.is_empty() {
                    return Err(Lost::Died(self.death_reason(conn)));
                }
                last_frame = Instant::now();
                if r.truncated {
                    return Err(violation(conn, perr::BAD_RECORD, 0, protocol("truncated record")));
                }
                // MSG_CTRUNC alone (the host is out of fds) leaves an otherwise valid message:
                // it is decoded with the count it announces and its call fails with RESOURCE.
                let ctrunc = r.ctruncated;
                let fds_in = if ctrunc { announced_fds(&buf[..r.len]) } else { r.fds.len() };
                let (h, body) = decode_frame(&buf[..r.len], fds_in).map_err(|e| violation(conn, perr::BAD_RECORD, 0, e))?;
                if h.spawn_id != conn.spawn_id || h.generation != conn.generation {
                    continue;
                }
                let mut fds = r.fds;
                let mut d = Dec::new(body);
                match h.msg_type {
                    msg::REPLY_OK => {
                        fault::hit("H3"); // received, before any validation
                        let ok = ReplyOk::get(&mut d).map_err(|e| violation(conn, perr::BAD_BODY, h.msg_type, e))?;
                        if h.call_id == call_id {
                            let inputs = req.input.as_ref().map_or(&[][..], |i| &i.descs[..]);
                            check_reply(&req.params, inputs, &expect, &ok).map_err(|e| violation(conn, perr::BAD_BODY, h.msg_type, e))?;
                        } else {
                            // A late reply of an abandoned call (a compute past its deadline)
                            // may have taken a result id: the next one follows it.
                            *max_result_id = (*max_result_id).max(ok.result_id);
                        }
                        let fd = if ctrunc { None } else { fds.pop() };
                        let view = self.receive_block(conn, h.call_id, &ok, fd, ctrunc).map_err(|e| match e.kind() {
                            // A block that fails validation (6.3, I3, 6.6); RESOURCE is not one.
                            crate::ErrorKind::Protocol => violation(conn, perr::BAD_BLOCK, h.msg_type, e),
                            _ => Lost::Fail(e),
                        })?;
                        if h.call_id != call_id {
                            drop(view); // a late reply of an abandoned call: released and acknowledged
                            continue;
                        }
                        if cancel_until.is_some() && !matches!(req.params, OpParams::Update { .. } | OpParams::LoadGraph { .. }) {
                            // The result stays resident and took its id (see docs/worker.md).
                            *max_result_id = (*max_result_id).max(ok.result_id);
                            // The deadline passed: a read-only or compute result is not wanted
                            // any more (a computed result id is not kept; see docs/worker.md).
                            return Err(Lost::Fail(Error::Timeout(format!(
                                "dyng worker: call deadline passed (generation {})",
                                conn.generation
                            ))));
                        }
                        return Ok(Reply { epoch: ok.epoch, result_id: ok.result_id, extra: ok.extra, view });
                    }
                    msg::REPLY_ERR => {
                        if h.call_id != call_id {
                            continue;
                        }
                        let err = ReplyErr::get(&mut d).map_err(|e| violation(conn, perr::BAD_BODY, h.msg_type, e))?;
                        return Err(Lost::Fail(error_of(&err)));
                    }
                    msg::HEARTBEAT => {
                        self.counters.heartbeats.fetch_add(1, Ordering::SeqCst);
                    }
                    msg::BLOCK_RETIRED => {
                        let n = get_retired(&mut d).map_or(0, |v| v.len());
                        self.counters.retired_seen.fetch_add(n as u64, Ordering::SeqCst);
                    }
                    msg::PONG | msg::LOG | msg::BYE => {}
                    // The worker closes its socket after sending it (5.1): it is as good as dead.
                    msg::PROTOCOL_ERROR => return Err(Lost::Killed(protocol("the worker reported a protocol error"))),
                    t => return Err(violation(conn, perr::UNEXPECTED_TYPE, t, protocol(format!("unexpected message type {t:#x} from the worker")))),
                }
            }
            if rev[1] != 0 {
                return Err(Lost::Died(self.death_reason(conn)));
            }
        }
    }

    pub(super) fn kill_for_timeout(&self, generation: u32) -> Error {
        Error::Timeout(format!(
            "dyng worker: call deadline passed and the worker did not answer CANCEL within {} ms (generation {generation}); it was killed",
            self.opts.cancel_grace.as_millis()
        ))
    }

    pub(super) fn death_reason(&self, conn: &mut Conn) -> String {
        // The pidfd says the process is gone; reap to learn how.
        let _ = sys::poll_in(&[conn.pidfd.as_raw_fd()], 200);
        match conn.child.try_wait() {
            Ok(Some(st)) => {
                use std::os::unix::process::ExitStatusExt;
                match st.signal() {
                    Some(sig) => format!("died (signal {sig}, generation {})", conn.generation),
                    None => format!("died (exit status {}, generation {})", st.code().unwrap_or(-1), conn.generation),
                }
            }
            _ => format!("died (socket closed, generation {})", conn.generation),
        }
    }

    /// Validates and maps a lent block (I3, 6.3); on any failure the fd is closed and CONSUMED
    /// is still sent (I5). `ctrunc`: the kernel dropped the block's fd (`MSG_CTRUNC`), which is
    /// `RESOURCE` (the host is out of fds), not a protocol violation.
    pub(super) fn receive_block(&self, conn: &Conn, call_id: u64, ok: &ReplyOk, fd: Option<OwnedFd>, ctrunc: bool) -> Result<Option<View>> {
        if ok.total_len == 0 && ok.arrays.is_empty() {
            return Ok(None);
        }
        let ack = Ack { call_id, block_id: ok.block_id, lend_seq: ok.lend_seq };
        let Some(fd) = fd else {
            conn.sink.ack(ack);
            if ctrunc {
                return Err(Error::Io {
                    path: "dyng worker: receiving a reply block".into(),
                    source: std::io::Error::other("the host is out of file descriptors (MSG_CTRUNC; RLIMIT_NOFILE?)"),
                });
            }
            return Err(protocol("REPLY_OK announces a block but carries no fd"));
        };
        let expected = BlockHeader {
            spawn_id: conn.spawn_id,
            generation: conn.generation,
            block_id: ok.block_id,
            lend_seq: ok.lend_seq,
            call_id,
            epoch: ok.epoch,
            total_len: ok.total_len,
            arrays: ok.arrays.clone(),
        };
        match HostBlock::open(fd, &expected, conn.caps & CAP_FUTURE_WRITE != 0, self.opts.checksums) {
            Ok(block) => {
                self.counters.live_replies.fetch_add(1, Ordering::SeqCst);
                fault::hit("H4");
                Ok(Some(View { block: Some(block), ack, sink: conn.sink.clone(), epoch: ok.epoch }))
            }
            Err(e) => {
                conn.sink.ack(ack);
                Err(e)
            }
        }
    }
}

/// A protocol violation found in what the worker sent (section 11): the worker can no longer be
/// trusted, so it is told (PROTOCOL_ERROR, best effort: it may be gone already) and condemned;
/// the caller kills it and the call fails with `e` (`Protocol`).
pub(super) fn violation(conn: &Conn, code: u16, offending_type: u16, e: Error) -> Lost {
    let mut b = Enc::default();
    put_protocol_error(&mut b, code, offending_type);
    let h = Header { msg_type: msg::PROTOCOL_ERROR, spawn_id: conn.spawn_id, generation: conn.generation, ..Default::default() };
    if let Ok(f) = encode_frame(h, &b.0, 0) {
        let _ = sys::send_record(conn.sock.as_raw_fd(), &f, &[], false);
    }
    Lost::Killed(e)
}

pub(super) fn core_conn_kill(conn: &mut Conn) -> u32 {
    let _ = sys::pidfd_signal(conn.pidfd.as_raw_fd(), libc::SIGKILL);
    conn.generation
}

/// Maps a REPLY_ERR back to the library error the in-process call would give.
pub(super) fn error_of(e: &ReplyErr) -> Error {
    let d = e.detail.clone();
    match e.condition {
        cond::CANCELLED => return Error::Timeout(format!("dyng worker: call cancelled: {d}")),
        cond::BACKPRESSURE => return Error::Capacity(format!("dyng worker: back-pressure: {d}")),
        _ => {}
    }
    // The C boundary's own codes (a NULL argument, a busy handle, a panic), which a worker has
    // not, fall to Internal with the other values no worker sends; so does a worker that claims
    // to have lost itself.
    match ErrorKind::from_code(e.status as i32) {
        Some(ErrorKind::WorkerLost) | None => Error::Internal(d),
        Some(kind) => Error::of_kind(kind, "dyng worker", d),
    }
}
