//! The `dyng-worker` process: handshake, a reader thread that handles acks, cancels, pings and
//! liveness at once, and one compute thread that executes CALLs in order on resident state.
//!
//! The graph, the results and the workspaces live here; replies travel in pool blocks lent to the
//! host. The worker exits at once (`_exit`) when its parent dies or the socket hangs up: the kernel
//! reclaims every block and mapping, so nothing needs cleaning up.

use super::block::{as_bytes, layout, ArraySrc, BlockHeader, InputBlock, Pool};
use super::fault;
use super::frame::{decode_frame, encode_frame, protocol, Dec, Enc, Header, MAX_FRAME};
use super::messages::*;
use super::sys;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{BatchView, Csr, Graph, WeightLayout};
use crate::mosp::{MospOptions, MospResult};
use crate::resources::{Backend, Resources, ResourcesOptions};
use crate::sssp::{SsspOptions, SsspResult};
use crate::update::{update, ResultMut};
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, HashSet, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A build identity shared by the library and the worker of the same build.
pub fn build_id() -> [u8; 20] {
    let mut id = [0u8; 20];
    let v = concat!(env!("CARGO_PKG_NAME"), "-", env!("CARGO_PKG_VERSION"), "-drwp1");
    let b = v.as_bytes();
    id[..b.len().min(20)].copy_from_slice(&b[..b.len().min(20)]);
    id
}

fn exit_now(code: i32) -> ! {
    // SAFETY: immediate exit without cleanup by design (spec 2.5): the kernel reclaims everything.
    unsafe { libc::_exit(code) }
}

struct Job {
    call_id: u64,
    call: Call,
    fds: Vec<OwnedFd>,
}

struct Shared {
    sock: OwnedFd,
    spawn_id: u64,
    generation: u32,
    welcome: Welcome,
    pool: Mutex<Pool>,
    pool_cv: Condvar,
    queue: Mutex<VecDeque<Job>>,
    queue_cv: Condvar,
    cancelled: Mutex<HashSet<u64>>,
    running: AtomicU64,
    progress: AtomicU64,
    credit_starved: AtomicU32,
    epoch: AtomicU64,
    results: AtomicU32,
    send_lock: Mutex<()>,
}

impl Shared {
    fn send(&self, msg_type: u16, call_id: u64, body: &[u8], fds: &[RawFd]) -> Result<()> {
        let h = Header { msg_type, call_id, spawn_id: self.spawn_id, generation: self.generation, ..Default::default() };
        let frame = encode_frame(h, body, fds.len())?;
        let _g = self.send_lock.lock();
        sys::send_record(self.sock.as_raw_fd(), &frame, fds, false)
            .map_err(|e| Error::Io { path: "dyng worker: send".into(), source: e })
    }

    /// Whether the host negotiated checksums (6.6): replies carry them, inputs must match them.
    fn checksums(&self) -> bool {
        self.welcome.strict_flags & STRICT_CHECKSUMS != 0
    }

    fn pong(&self, nonce: u64) -> Pong {
        let c = self.pool.lock().snapshot();
        Pong {
            nonce,
            queued: self.queue.lock().len() as u32,
            running_call: self.running.load(Ordering::SeqCst),
            lent_blocks: c.lent_blocks,
            lent_bytes: c.lent_bytes,
            pool_blocks: c.pool_blocks,
            pool_bytes: c.pool_bytes,
            retired_total: c.retired_total,
            acks_ignored: c.acks_ignored,
            rss_bytes: rss_bytes(),
            epoch: self.epoch.load(Ordering::SeqCst),
            results: self.results.load(Ordering::SeqCst),
        }
    }

    fn reply_err(&self, call_id: u64, f: &Fail) {
        let mut e = Enc::default();
        ReplyErr {
            status: f.status,
            condition: f.condition,
            retryable: f.retryable as u8,
            state_lost: f.state_lost,
            detail: f.detail.clone(),
            tlvs: f.tlvs.clone(),
        }
        .put(&mut e);
        let _ = self.send(msg::REPLY_ERR, call_id, &e.0, &[]);
    }
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split(' ').nth(1).and_then(|v| v.parse::<u64>().ok()))
        .map_or(0, |pages| pages * sys::page_size() as u64)
}

/// Why a call failed, as REPLY_ERR carries it.
#[derive(Debug, Clone)]
struct Fail {
    status: u32,
    condition: u16,
    retryable: bool,
    state_lost: bool,
    detail: String,
    tlvs: Vec<(u16, u64)>,
}

impl Fail {
    fn cond(condition: u16, detail: impl Into<String>) -> Self {
        let kind = match condition {
            cond::INVALID_ARG => ErrorKind::InvalidArgument,
            cond::NOT_FOUND | cond::EPOCH => ErrorKind::StaleResult,
            cond::UNSUPPORTED => ErrorKind::NotSupported,
            cond::CANCELLED => ErrorKind::Timeout,
            cond::BACKPRESSURE => ErrorKind::Capacity,
            cond::OOM => ErrorKind::OutOfMemory,
            _ => ErrorKind::Internal,
        };
        Fail { status: kind.code() as u32, condition, retryable: false, state_lost: false, detail: detail.into(), tlvs: vec![] }
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        let condition = if e.kind() == ErrorKind::OutOfMemory { cond::OOM } else { cond::NONE };
        Fail {
            status: e.kind().code() as u32,
            condition,
            retryable: condition == cond::OOM,
            state_lost: false,
            detail: e.to_string(),
            tlvs: vec![],
        }
    }
}

type CallResult<T> = std::result::Result<T, Fail>;

enum Resident {
    Sssp(SsspResult),
    Mosp(MospResult),
}

/// What the compute thread owns.
struct State {
    res: Resources,
    graph: Option<Graph>,
    epoch: u64,
    results: HashMap<u64, Resident>,
    next_result_id: u64,
}

/// What a successful call sends back.
#[derive(Default)]
struct Outcome {
    result_id: u64,
    extra: Vec<u8>,
    lent: Option<Lent>,
}

struct Lent {
    block_id: u32,
    lend_seq: u64,
    total_len: u64,
    arrays: Vec<ArrayDesc>,
    /// A duplicate of the block's fd, so a TTL retire between lend and send cannot close it.
    fd: OwnedFd,
}

/// Entry point of `dyng-worker`: returns the process exit code.
pub fn run_from_env() -> i32 {
    match serve() {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

fn env_num(name: &str) -> Option<i64> {
    std::env::var(name).ok()?.parse().ok()
}

fn recv_one(sock: RawFd, buf: &mut [u8]) -> Result<(Header, Vec<u8>, Vec<OwnedFd>)> {
    let r = sys::recv_record(sock, buf, false).map_err(|e| Error::Io { path: "dyng worker: recv".into(), source: e })?;
    if r.len == 0 && r.fds.is_empty() {
        exit_now(0); // the host hung up
    }
    if r.truncated || r.ctruncated {
        return Err(protocol("truncated record"));
    }
    let (h, body) = decode_frame(&buf[..r.len], r.fds.len())?;
    Ok((h, body.to_vec(), r.fds))
}

fn serve() -> Result<()> {
    let fd = env_num("DYNG_WORKER_FD").ok_or_else(|| Error::invalid("DYNG_WORKER_FD is not set"))? as RawFd;
    // SAFETY: the spawner placed our end of the socket pair at this fd and nothing else owns it.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let parent = env_num("DYNG_PARENT_PID").unwrap_or(0) as i32;
    // SAFETY: getppid has no preconditions.
    if parent != 0 && unsafe { libc::getppid() } != parent {
        exit_now(0);
    }
    let parent_fd = if parent != 0 { sys::pidfd_open(parent).ok() } else { None };
    if let (Some(want), Some(now)) = (env_num("DYNG_PARENT_STARTTIME"), sys::process_starttime(parent)) {
        if want as u64 != now {
            exit_now(0); // the pid was reused: our parent is already gone
        }
    }
    let future_write = super::block::probe_future_write() && !fault::no_future_write();
    let hello = Hello {
        build_id: build_id(),
        worker_pid: std::process::id(),
        worker_starttime: sys::process_starttime(std::process::id() as i32).unwrap_or(0),
        page_size: sys::page_size() as u32,
        caps: if fault::no_adopt() { 0 } else { CAP_ADOPT | CAP_POLICY | CAP_WIDE }
            | if fault::no_adopt() || fault::no_light_adopt() { 0 } else { CAP_LIGHT_ADOPT }
            | if future_write { CAP_FUTURE_WRITE } else { 0 },
        gpu_count: 0,
        gpu_uuid: [0; 16],
        max_block_bytes: 1 << 40,
    };
    let mut e = Enc::default();
    hello.put(&mut e);
    let frame = encode_frame(Header { msg_type: msg::HELLO, ..Default::default() }, &e.0, 0)?;
    sys::send_record(sock.as_raw_fd(), &frame, &[], false).map_err(|e| Error::Io { path: "send HELLO".into(), source: e })?;
    fault::hit("W1");
    let mut buf = vec![0u8; MAX_FRAME];
    let (h, body, _fds) = recv_one(sock.as_raw_fd(), &mut buf)?;
    if h.msg_type != msg::WELCOME {
        return Err(protocol(format!("expected WELCOME, got type {:#x}", h.msg_type)));
    }
    let welcome = Welcome::get(&mut Dec::new(&body))?;
    fault::set_generation(welcome.generation);
    let backend = match welcome.backend {
        BACKEND_CUDA => Backend::Cuda,
        BACKEND_SEQUENTIAL => Backend::Sequential,
        _ => Backend::Parallel,
    };
    let res = Resources::new(&ResourcesOptions { backend, ..Default::default() })?;
    let shared = Arc::new(Shared {
        sock,
        spawn_id: welcome.spawn_id,
        generation: welcome.generation,
        pool: Mutex::new(Pool::new(welcome.generation, future_write)),
        pool_cv: Condvar::new(),
        queue: Mutex::new(VecDeque::new()),
        queue_cv: Condvar::new(),
        cancelled: Mutex::new(HashSet::new()),
        running: AtomicU64::new(0),
        progress: AtomicU64::new(0),
        credit_starved: AtomicU32::new(0),
        epoch: AtomicU64::new(0),
        results: AtomicU32::new(0),
        send_lock: Mutex::new(()),
        welcome: welcome.clone(),
    });
    let mut e = Enc::default();
    Ready { epoch: 0, pool_blocks: 0, pool_bytes: 0 }.put(&mut e);
    shared.send(msg::READY, 0, &e.0, &[])?;
    let state = State { res, graph: None, epoch: 0, results: HashMap::new(), next_result_id: welcome.next_result_id.max(1) };
    let worker = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("dyng-worker-compute".into())
        .spawn(move || compute_loop(&worker, state))
        .map_err(|e| Error::Internal(format!("cannot start the compute thread: {e}")))?;
    reader_loop(&shared, parent_fd, &mut buf)
}

fn reader_loop(sh: &Arc<Shared>, parent_fd: Option<OwnedFd>, buf: &mut [u8]) -> Result<()> {
    let hb = Duration::from_millis(sh.welcome.heartbeat_ms.max(10) as u64);
    let ttl = Duration::from_millis(sh.welcome.lend_ttl_ms.max(1) as u64);
    let tick = hb.min(ttl / 2).max(Duration::from_millis(5));
    let mut last_hb = Instant::now();
    let mut last_call = Instant::now();
    let sock = sh.sock.as_raw_fd();
    let mut fds = vec![sock];
    if let Some(p) = &parent_fd {
        fds.push(p.as_raw_fd());
    }
    loop {
        let rev = sys::poll_in(&fds, tick.as_millis() as i32).map_err(|e| Error::Io { path: "poll".into(), source: e })?;
        if rev.get(1).is_some_and(|r| *r != 0) {
            exit_now(0); // the parent died: pidfd readable
        }
        if rev[0] & (libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR) != 0 && rev[0] & libc::POLLIN == 0 {
            exit_now(0);
        }
        let now = Instant::now();
        if !fault::hanging() {
            let running = sh.running.load(Ordering::SeqCst);
            if running != 0 && now.duration_since(last_hb) >= hb {
                last_hb = now;
                let mut e = Enc::default();
                Heartbeat {
                    running_call: running,
                    progress: sh.progress.load(Ordering::SeqCst),
                    phase: 0,
                    credit_starved: sh.credit_starved.load(Ordering::SeqCst) as u8,
                    mono_ns: now.elapsed().as_nanos() as u64,
                }
                .put(&mut e);
                let _ = sh.send(msg::HEARTBEAT, 0, &e.0, &[]);
            }
            let retired = {
                let mut pool = sh.pool.lock();
                let r = pool.retire_expired(ttl, now);
                if now.duration_since(last_call) > Duration::from_secs(60) {
                    pool.trim_idle(Duration::from_secs(60), now);
                }
                r
            };
            if !retired.is_empty() {
                fault::hit("W8");
                sh.pool_cv.notify_all();
                for chunk in retired.chunks(1024) {
                    let mut e = Enc::default();
                    put_retired(&mut e, chunk);
                    let _ = sh.send(msg::BLOCK_RETIRED, 0, &e.0, &[]);
                }
            }
        }
        if rev[0] & libc::POLLIN == 0 {
            continue;
        }
        let (h, body, fds_in) = match recv_one(sock, buf) {
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::Protocol => {
                let mut b = Enc::default();
                put_protocol_error(&mut b, perr::BAD_RECORD, 0);
                let _ = sh.send(msg::PROTOCOL_ERROR, 0, &b.0, &[]);
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        if h.spawn_id != sh.spawn_id || h.generation != sh.generation {
            continue; // not for this process; its fds are closed by drop
        }
        let mut d = Dec::new(&body);
        match h.msg_type {
            msg::CALL => {
                last_call = now;
                let call = Call::get(&mut d)?;
                sh.queue.lock().push_back(Job { call_id: h.call_id, call, fds: fds_in });
                sh.queue_cv.notify_all();
            }
            msg::CANCEL => {
                let queued = {
                    let mut q = sh.queue.lock();
                    q.iter().position(|j| j.call_id == h.call_id).and_then(|i| q.remove(i))
                };
                match queued {
                    Some(job) => sh.reply_err(job.call_id, &Fail::cond(cond::CANCELLED, "dyng worker: call cancelled before it started")),
                    None => {
                        sh.cancelled.lock().insert(h.call_id);
                    }
                }
            }
            msg::CONSUMED => {
                let acks = get_consumed(&mut d)?;
                fault::hit("W7");
                let mut pool = sh.pool.lock();
                for a in acks {
                    pool.consumed(a.block_id, a.lend_seq);
                }
                drop(pool);
                sh.pool_cv.notify_all();
            }
            msg::PING => {
                let nonce = d.u64()?;
                let mut e = Enc::default();
                sh.pong(nonce).put(&mut e);
                let _ = sh.send(msg::PONG, 0, &e.0, &[]);
            }
            msg::SHUTDOWN => {
                let mut e = Enc::default();
                e.u16(0);
                let _ = sh.send(msg::BYE, 0, &e.0, &[]);
                exit_now(0);
            }
            // The host found this process breaking the protocol and is killing it (section 11):
            // nothing it sends can be trusted any more, so stop at once.
            msg::PROTOCOL_ERROR => exit_now(0),
            t if h.flags & super::frame::FLAG_IGNORABLE != 0 => {
                let _ = t;
            }
            t => {
                let mut b = Enc::default();
                put_protocol_error(&mut b, perr::UNEXPECTED_TYPE, t);
                let _ = sh.send(msg::PROTOCOL_ERROR, 0, &b.0, &[]);
                return Err(protocol(format!("unexpected message type {t:#x}")));
            }
        }
    }
}

fn compute_loop(sh: &Arc<Shared>, mut st: State) {
    loop {
        let job = {
            let mut q = sh.queue.lock();
            loop {
                if let Some(j) = q.pop_front() {
                    break j;
                }
                sh.queue_cv.wait(&mut q);
            }
        };
        sh.running.store(job.call_id, Ordering::SeqCst);
        fault::hit("W2");
        let t0 = Instant::now();
        let out = if sh.cancelled.lock().remove(&job.call_id) {
            Err(Fail::cond(cond::CANCELLED, "dyng worker: call cancelled before it started"))
        } else {
            execute(sh, &mut st, job.call_id, &job.call, &job.fds)
        };
        // Inputs are unmapped (by `execute`) and closed before the reply: the reply tells the host
        // its input was read (6.7).
        drop(job.fds);
        sh.epoch.store(st.epoch, Ordering::SeqCst);
        sh.results.store(st.results.len() as u32, Ordering::SeqCst);
        match out {
            Ok(mut o) => {
                // W4: the block is filled, nothing is sent yet.
                let tamper = fault::hit("W4");
                if let (Some(t), Some(l)) = (tamper, o.lent.as_mut()) {
                    tamper_for_test(sh, t, l);
                }
                let mut e = Enc::default();
                let lent = o.lent.as_ref();
                let mut reply = ReplyOk {
                    epoch: st.epoch,
                    result_id: o.result_id,
                    compute_ns: t0.elapsed().as_nanos() as u64,
                    block_id: lent.map_or(0, |l| l.block_id),
                    lend_seq: lent.map_or(0, |l| l.lend_seq),
                    total_len: lent.map_or(0, |l| l.total_len),
                    arrays: lent.map_or(vec![], |l| l.arrays.clone()),
                    extra: o.extra,
                };
                if let Some(t) = tamper {
                    tamper_reply_for_test(t, &mut reply);
                }
                reply.put(&mut e);
                let fds: Vec<RawFd> = lent.map(|l| l.fd.as_raw_fd()).into_iter().collect();
                let _ = sh.send(msg::REPLY_OK, job.call_id, &e.0, &fds);
                fault::hit("W5");
            }
            Err(f) => {
                sh.reply_err(job.call_id, &f);
                if f.state_lost {
                    let mut e = Enc::default();
                    e.u16(1);
                    let _ = sh.send(msg::BYE, 0, &e.0, &[]);
                    exit_now(3);
                }
            }
        }
        sh.cancelled.lock().remove(&job.call_id);
        sh.running.store(0, Ordering::SeqCst);
        sh.progress.fetch_add(1, Ordering::SeqCst);
    }
}

/// Fault injection only (T4): plays a faulty or malicious worker on a filled block about to be
/// lent (see `fault.rs`); the host must refuse every one of these replies with `Protocol`.
fn tamper_for_test(sh: &Shared, t: fault::Tamper, l: &mut Lent) {
    use fault::Tamper;
    let mut pool = sh.pool.lock();
    match t {
        Tamper::Corrupt => {
            if let Some(d) = l.arrays.iter().find(|d| d.count != 0) {
                pool.flip_byte_for_test(l.block_id, d.offset);
            }
        }
        Tamper::BadHeader => pool.flip_byte_for_test(l.block_id, 44), // `epoch` in page 0 (6.3)
        Tamper::BadLendSeq => l.lend_seq += 1,
        Tamper::BadEpoch | Tamper::BadResultId | Tamper::BadExtra => {}
        Tamper::Unsealed | Tamper::Short => {
            let short = t == Tamper::Short;
            // One page short of `total_len` cuts into the last array, which the host would
            // read past the end of the file (SIGBUS) if it mapped before checking the size.
            let len = if short { l.total_len - sys::page_size() as u64 } else { l.total_len };
            if let Ok(fd) = pool.copy_for_test(l.block_id, len, short) {
                l.fd = fd;
            }
        }
    }
}

/// Fault injection only: plays a worker whose REPLY_OK fields are wrong (the host must refuse it).
fn tamper_reply_for_test(t: fault::Tamper, r: &mut ReplyOk) {
    use fault::Tamper;
    match t {
        Tamper::BadEpoch => r.epoch += 1000,
        Tamper::BadResultId => r.result_id += 7,
        Tamper::BadExtra => r.extra.push(0),
        _ => {}
    }
}

fn graph(st: &State) -> CallResult<&Graph> {
    st.graph.as_ref().ok_or_else(|| Fail::cond(cond::INVALID_ARG, "dyng worker: no graph is loaded"))
}

fn not_found(id: u64) -> Fail {
    let mut f = Fail::cond(cond::NOT_FOUND, format!("dyng worker: result {id} is not resident (stale handle or restarted worker)"));
    f.tlvs.push((3, id));
    f
}

fn check_epoch(st: &State, call: &Call) -> CallResult<()> {
    if call.call_flags & FLAG_REPLAY == 0 && call.expected_epoch != EPOCH_ANY && call.expected_epoch != st.epoch {
        let mut f = Fail::cond(cond::EPOCH, format!("dyng worker: expected epoch {}, worker is at {}", call.expected_epoch, st.epoch));
        f.tlvs.push((2, st.epoch));
        return Err(f);
    }
    Ok(())
}

fn new_result_id(st: &mut State, assign: u64, flags: u16) -> u64 {
    if flags & FLAG_REPLAY != 0 && assign != 0 {
        st.next_result_id = st.next_result_id.max(assign + 1);
        return assign;
    }
    let id = st.next_result_id;
    st.next_result_id += 1;
    id
}

fn nonzero(delta: i64) -> Option<i64> {
    (delta != 0).then_some(delta)
}

/// The adaptive-update policy a CALL carries (its decoder checked the code already).
fn policy(code: u8) -> CallResult<crate::Fallback> {
    crate::Fallback::from_code(code as u32)
        .ok_or_else(|| Fail::cond(cond::INVALID_ARG, format!("dyng worker: fallback = {code} is not a policy")))
}

fn source_index(source: i32) -> CallResult<usize> {
    usize::try_from(source).map_err(|_| Fail::cond(cond::INVALID_ARG, format!("dyng: source {source} is negative")))
}

/// Adopts one tree: verified against the graph, or with a weight bound (extension 4) checked as
/// the originals check theirs.
#[allow(clippy::too_many_arguments)]
fn adopt_tree(
    res: &Resources,
    g: &Graph,
    src: usize,
    objective: usize,
    dist: &[i64],
    parent: &[i32],
    canonicalize: bool,
    bound: Option<i64>,
    opt: &SsspOptions,
) -> Result<SsspResult> {
    match bound {
        None => SsspResult::from_arrays(g, src, objective, dist.to_vec(), parent.to_vec(), canonicalize, opt),
        Some(w) => SsspResult::from_arrays_unverified(res, g, src, objective, dist.to_vec(), parent.to_vec(), canonicalize, w, opt),
    }
}

/// Keeps a new result resident under a new id (`assign_id` under REPLAY), lends its view when
/// `view_mask` asks, and answers with the id (and L for a MOSP result).
fn keep(sh: &Shared, st: &mut State, call_id: u64, call: &Call, assign_id: u64, view_mask: u32, r: Resident) -> CallResult<Outcome> {
    let mut extra = Enc::default();
    if let Resident::Mosp(m) = &r {
        extra.u32(m.preferences().scale() as u32);
    }
    let id = new_result_id(st, assign_id, call.call_flags);
    st.results.insert(id, r);
    let lent = if view_mask != 0 { Some(view(sh, st, call_id, id, view_mask, 0)?) } else { None };
    Ok(Outcome { result_id: id, extra: extra.0, lent })
}

fn execute(sh: &Shared, st: &mut State, call_id: u64, call: &Call, fds: &[OwnedFd]) -> CallResult<Outcome> {
    if call.reply_mode > REPLY_LENT {
        return Err(Fail::cond(cond::UNSUPPORTED, format!("dyng worker: reply mode {} is reserved", call.reply_mode)));
    }
    if fault::no_adopt() && matches!(call.params, OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. }) {
        return Err(Fail::cond(cond::UNSUPPORTED, "dyng worker: unknown op (a worker built before the ADOPT extension)"));
    }
    let inputs = InputBlock::open(fds, &call.inputs, sh.checksums()).map_err(Fail::from)?;
    match &call.params {
        OpParams::LoadGraph { n, m, kg, base_epoch } => {
            check_epoch(st, call)?;
            let ib = inputs.ok_or_else(|| Fail::cond(cond::INVALID_ARG, "LOAD_GRAPH without inputs"))?;
            let (rp, ci, w) = (ib.i32s(kind::ROW_PTR)?, ib.i32s(kind::COL_IND)?, ib.i32s(kind::WEIGHTS)?);
            if ci.len() as u64 != *m || w.len() as u64 != *m * *kg as u64 {
                return Err(Fail::cond(cond::INVALID_ARG, format!("LOAD_GRAPH: m = {m}, KG = {kg} do not match the arrays")));
            }
            let csr = Csr::from_arrays(*n as usize, *kg as usize, rp.to_vec(), ci.to_vec(), w, WeightLayout::ObjectiveMajor)?;
            fault::hit("W3");
            st.graph = Some(Graph::new(csr));
            st.results.clear();
            st.epoch = if call.call_flags & FLAG_REPLAY != 0 { *base_epoch } else { st.epoch + 1 };
            Ok(Outcome::default())
        }
        OpParams::SsspCompute { source, objective, delta, view_mask, assign_id, fallback } => {
            let g = graph(st)?;
            let opt = SsspOptions { delta: nonzero(*delta), fallback: policy(*fallback)? };
            let src = source_index(*source)?;
            fault::hit("W3");
            let r = SsspResult::compute(&st.res, g, src, *objective as usize, &opt)?;
            keep(sh, st, call_id, call, *assign_id, *view_mask, Resident::Sssp(r))
        }
        OpParams::MospCompute { source, k, prefs, delta, view_mask, assign_id, fallback } => {
            let g = graph(st)?;
            let opt = MospOptions {
                k: (*k != 0).then_some(*k as usize),
                preferences: prefs.clone(),
                delta: nonzero(*delta),
                fallback: policy(*fallback)?,
            };
            let src = source_index(*source)?;
            fault::hit("W3");
            let r = MospResult::compute(&st.res, g, src, &opt)?;
            keep(sh, st, call_id, call, *assign_id, *view_mask, Resident::Mosp(r))
        }
        // The extension's ops run exactly what the in-process calls run (`dyng_sssp_from_arrays`:
        // `SsspResult::from_arrays`; `dyng mosp --validate`: `from_arrays` per tree, then
        // `from_trees`; with extension 4's bounds, `dyng mosp`: `from_arrays_unverified` per tree,
        // then `from_trees_deferred`), so validation errors come back with the in-process status
        // and text.
        OpParams::AdoptSssp { source, objective, canonicalize, delta, view_mask, assign_id, fallback, light } => {
            let g = graph(st)?;
            let ib = inputs.ok_or_else(|| Fail::cond(cond::INVALID_ARG, "ADOPT_SSSP without inputs"))?;
            let (dist, parent) = (ib.i64s(kind::DIST)?, ib.i32s(kind::PARENT)?);
            let opt = SsspOptions { delta: nonzero(*delta), fallback: policy(*fallback)? };
            let src = source_index(*source)?;
            fault::hit("W3");
            let bound = light.as_deref().map(|b| b[0]);
            let r = adopt_tree(&st.res, g, src, *objective as usize, dist, parent, *canonicalize, bound, &opt)?;
            keep(sh, st, call_id, call, *assign_id, *view_mask, Resident::Sssp(r))
        }
        OpParams::AdoptMosp { source, k, prefs, canonicalize, deltas, view_mask, assign_id, fallback, light } => {
            let g = graph(st)?;
            let ib = inputs.ok_or_else(|| Fail::cond(cond::INVALID_ARG, "ADOPT_MOSP without inputs"))?;
            let (dist, parent) = (ib.i64s(kind::DIST)?, ib.i32s(kind::PARENT)?);
            let (n, k) = (g.n(), *k as usize);
            if dist.len() != n * k || parent.len() != n * k {
                return Err(Fail::cond(cond::INVALID_ARG, format!(
                    "ADOPT_MOSP: {} distances and {} parents for k = {k} trees of n = {n} vertices",
                    dist.len(),
                    parent.len()
                )));
            }
            let src = source_index(*source)?;
            fault::hit("W3");
            let fallback = policy(*fallback)?;
            let trees = (0..k)
                .map(|j| {
                    let opt = SsspOptions { delta: nonzero(deltas[j]), fallback };
                    let (d, p) = (&dist[j * n..(j + 1) * n], &parent[j * n..(j + 1) * n]);
                    adopt_tree(&st.res, g, src, j, d, p, *canonicalize, light.as_deref().map(|b| b[j]), &opt)
                })
                .collect::<Result<Vec<_>>>()?;
            let r = match light {
                None => MospResult::from_trees(&st.res, g, src, trees, prefs)?,
                Some(_) => MospResult::from_trees_deferred(g, src, trees, prefs)?,
            };
            keep(sh, st, call_id, call, *assign_id, *view_mask, Resident::Mosp(r))
        }
        OpParams::Update { result_ids } => {
            check_epoch(st, call)?;
            let ib = inputs;
            let empty: &[i32] = &[];
            let get = |k| ib.as_ref().map_or(Ok(empty), |b| b.i32s(k));
            let kg = graph(st)?.k();
            let batch = BatchView {
                k: kg,
                ins_src: get(kind::INSERT_FROM)?,
                ins_dst: get(kind::INSERT_TO)?,
                ins_weights: get(kind::INSERT_WEIGHTS)?,
                del_src: get(kind::DELETE_FROM)?,
                del_dst: get(kind::DELETE_TO)?,
            };
            let mut seen = HashSet::new();
            for id in result_ids {
                if !st.results.contains_key(id) {
                    return Err(not_found(*id));
                }
                if !seen.insert(*id) {
                    return Err(Fail::cond(cond::INVALID_ARG, format!("dyng: result {id} is listed twice")));
                }
            }
            fault::hit("W3");
            let State { res, graph, results, .. } = st;
            let g = graph.as_mut().ok_or_else(|| Fail::cond(cond::INVALID_ARG, "dyng worker: no graph is loaded"))?;
            let mut listed: Vec<(u64, ResultMut<'_>)> = results
                .iter_mut()
                .filter(|(id, _)| seen.contains(*id))
                .map(|(id, r)| {
                    (*id, match r {
                        Resident::Sssp(s) => ResultMut::Sssp(s),
                        Resident::Mosp(m) => ResultMut::Mosp(m),
                    })
                })
                .collect();
            // The in-process call updates results in the order they are listed.
            listed.sort_by_key(|(id, _)| result_ids.iter().position(|x| x == id));
            let mut rs: Vec<ResultMut<'_>> = listed.into_iter().map(|(_, r)| r).collect();
            // `update` validates everything before it commits, so an error leaves the state as it
            // was (UNCHANGED); it never fails after the commit.
            update(res, g, &batch, &mut rs)?;
            st.epoch += 1;
            let mut e = Enc::default();
            e.u32(result_ids.len() as u32);
            Ok(Outcome { extra: e.0, ..Default::default() })
        }
        OpParams::View { view_mask, objective } => {
            let lent = view(sh, st, call_id, call.result_id, *view_mask, *objective)?;
            Ok(Outcome { result_id: call.result_id, extra: vec![], lent: Some(lent) })
        }
        OpParams::DropResult => {
            st.results.remove(&call.result_id).ok_or_else(|| not_found(call.result_id))?;
            Ok(Outcome::default())
        }
        OpParams::ReleaseWorkspaces => {
            let ws = st.res.workspace_bytes() as u64;
            st.res.release_workspaces();
            let pool = sh.pool.lock().trim();
            let mut e = Enc::default();
            e.u64(ws + pool);
            Ok(Outcome { extra: e.0, ..Default::default() })
        }
        OpParams::WorkspaceBytes => {
            let mut e = Enc::default();
            e.u64(st.res.workspace_bytes() as u64).u64(sh.pool.lock().snapshot().pool_bytes);
            Ok(Outcome { extra: e.0, ..Default::default() })
        }
        OpParams::Stats => {
            let mut e = Enc::default();
            if call.result_id == 0 {
                let mut p = Enc::default();
                sh.pong(0).put(&mut p);
                e.bytes(&p.0[8..]);
            } else {
                stats(st, call.result_id, &mut e)?;
            }
            Ok(Outcome { result_id: call.result_id, extra: e.0, lent: None })
        }
        OpParams::Checkpoint => {
            let g = graph(st)?;
            let kg = g.k() as u32;
            let csr = g.to_csr();
            let arrays = [
                ArraySrc { kind: kind::ROW_PTR, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(csr.row_ptr()) },
                ArraySrc { kind: kind::COL_IND, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(csr.col_ind()) },
                ArraySrc { kind: kind::WEIGHTS, dtype: DTYPE_I32, cols: kg, bytes: as_bytes(csr.weights()) },
            ];
            Ok(Outcome { lent: Some(lend(sh, st.epoch, call_id, &arrays)?), ..Default::default() })
        }
        OpParams::Echo => {
            let ib = inputs.ok_or_else(|| Fail::cond(cond::INVALID_ARG, "ECHO without input"))?;
            let bytes = ib.u8s(kind::ECHO_BYTES)?;
            let arrays = [ArraySrc { kind: kind::ECHO_BYTES, dtype: DTYPE_U8, cols: 1, bytes }];
            Ok(Outcome { lent: Some(lend(sh, st.epoch, call_id, &arrays)?), ..Default::default() })
        }
    }
}

fn stats(st: &State, id: u64, e: &mut Enc) -> CallResult<()> {
    let obj = |j: usize, s: &crate::sssp::UpdateStats| ObjectiveStats {
        objective: j as u16,
        invalidated: s.invalidated as u64,
        iterations: s.iterations as u64,
        epochs: s.epochs as u64,
        pushes: s.pushes as u64,
        packed: s.packed_parents,
        affected: s.affected as u64,
        fallback_used: s.fallback_used,
    };
    let r = match st.results.get(&id).ok_or_else(|| not_found(id))? {
        Resident::Sssp(r) => {
            let s = r.stats();
            ResultStats { kind: 1, epoch: st.epoch, compute_ns: s.elapsed_ns, objectives: vec![obj(r.objective(), &s)], combined: None }
        }
        Resident::Mosp(r) => {
            let c = r.combine_stats();
            ResultStats {
                kind: 2,
                epoch: st.epoch,
                compute_ns: c.elapsed_ns,
                objectives: r.objective_stats().iter().enumerate().map(|(j, s)| obj(j, s)).collect(),
                combined: Some(CombinedStats {
                    edges: c.edges as u64,
                    scale: c.scale as u32,
                    delta: c.delta,
                    iterations: c.search.iterations as u64,
                    pushes: c.search.pushes as u64,
                }),
            }
        }
    };
    r.put(e);
    Ok(())
}

/// Copies the arrays selected by `mask` of a resident result into a pool block and lends it.
fn view(sh: &Shared, st: &State, call_id: u64, id: u64, mask: u32, objective: u16) -> CallResult<Lent> {
    let g = graph(st)?;
    let r = st.results.get(&id).ok_or_else(|| not_found(id))?;
    let version = match r {
        Resident::Sssp(s) => s.graph_version(),
        Resident::Mosp(m) => m.graph_version(),
    };
    if version != g.version() {
        return Err(Fail::from(Error::StaleResult(format!(
            "dyng: result {id} was computed on an older state of the graph and not updated with it"
        ))));
    }
    let bad = |what: String| Fail::cond(cond::INVALID_ARG, what);
    let mut arrays = Vec::new();
    match r {
        Resident::Sssp(s) => {
            let mask = if mask == 0 { 0b11 } else { mask };
            if mask & !0b11 != 0 {
                return Err(bad(format!("dyng: view mask {mask:#x} names arrays an SSSP result does not have")));
            }
            if mask & 1 != 0 {
                arrays.push(ArraySrc { kind: kind::DIST, dtype: DTYPE_I64, cols: 1, bytes: as_bytes(s.distances()) });
            }
            if mask & 2 != 0 {
                arrays.push(ArraySrc { kind: kind::PARENT, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(s.parents()) });
            }
        }
        Resident::Mosp(m) => {
            let mask = if mask == 0 { 0b11100 } else { mask };
            if mask & !0b11111 != 0 {
                return Err(bad(format!("dyng: view mask {mask:#x} names unknown arrays")));
            }
            if mask & 0b11 != 0 && objective as usize >= m.k() {
                return Err(bad(format!("dyng: objective {objective} is outside [0, K = {})", m.k())));
            }
            if mask & 0b11100 != 0 && !m.is_combined() {
                return Err(bad(format!(
                    "dyng: result {id} was adopted as the originals check and is combined by its first update: it has no combined tree or path costs yet"
                )));
            }
            let t = m.trees().get(objective as usize);
            if let (true, Some(t)) = (mask & 1 != 0, t) {
                arrays.push(ArraySrc { kind: kind::DIST, dtype: DTYPE_I64, cols: 1, bytes: as_bytes(t.distances()) });
            }
            if let (true, Some(t)) = (mask & 2 != 0, t) {
                arrays.push(ArraySrc { kind: kind::PARENT, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(t.parents()) });
            }
            if mask & 4 != 0 {
                arrays.push(ArraySrc { kind: kind::COMBINED_DIST, dtype: DTYPE_I64, cols: 1, bytes: as_bytes(m.combined_distances()) });
            }
            if mask & 8 != 0 {
                arrays.push(ArraySrc { kind: kind::COMBINED_PARENT, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(m.combined_parents()) });
            }
            if mask & 16 != 0 {
                arrays.push(ArraySrc { kind: kind::PATH_COSTS, dtype: DTYPE_I64, cols: m.graph_k() as u32, bytes: as_bytes(m.path_costs()) });
            }
        }
    }
    lend(sh, st.epoch, call_id, &arrays)
}

/// Acquires a block within the lent-bytes limit (waiting up to `lend_wait_ms` for acks), fills
/// it and lends it.
fn lend(sh: &Shared, epoch: u64, call_id: u64, arrays: &[ArraySrc<'_>]) -> CallResult<Lent> {
    let (descs, total) = layout(arrays, sh.checksums())?;
    let limit = sh.welcome.max_lent_bytes;
    let need = total.div_ceil(2 << 20) * (2 << 20);
    if limit != 0 && need > limit {
        let mut f = Fail::cond(cond::BACKPRESSURE, format!("dyng worker: a reply of {need} bytes exceeds max_lent_bytes = {limit}"));
        f.tlvs.push((1, need));
        return Err(f);
    }
    let mut pool = sh.pool.lock();
    let wait_until = Instant::now() + Duration::from_millis(1000);
    while limit != 0 && pool.snapshot().lent_bytes + need > limit {
        sh.credit_starved.store(1, Ordering::SeqCst);
        if sh.pool_cv.wait_until(&mut pool, wait_until).timed_out() && pool.snapshot().lent_bytes + need > limit {
            sh.credit_starved.store(0, Ordering::SeqCst);
            let mut f = Fail::cond(cond::BACKPRESSURE, format!("dyng worker: lent bytes at the limit {limit}; release views"));
            f.retryable = true;
            f.tlvs.push((1, need));
            return Err(f);
        }
    }
    sh.credit_starved.store(0, Ordering::SeqCst);
    let id = pool.acquire(total)?;
    let header = BlockHeader {
        spawn_id: sh.spawn_id,
        generation: sh.generation,
        block_id: id,
        lend_seq: pool.next_lend_seq(),
        call_id,
        epoch,
        total_len: total,
        arrays: descs.clone(),
    };
    fault::hit("W9");
    if let Err(e) = pool.fill(id, &header, arrays) {
        pool.abort(id);
        return Err(e.into());
    }
    let (lend_seq, raw) = pool.lend(id, call_id)?;
    let fd = sys::dup(raw).map_err(|e| Error::Io { path: "dyng worker: dup of a block".into(), source: e })?;
    debug_assert_eq!(lend_seq, header.lend_seq);
    Ok(Lent { block_id: id, lend_seq, total_len: total, arrays: descs, fd })
}
