//! The host side: spawning `dyng-worker`, the handshake, calls with deadlines and hang detection,
//! zero-copy views whose drop sends the consumed ack, and restart with journal replay.
//!
//! [`Client`] mirrors the in-process API (load a graph, compute SSSP/MOSP results, update, view,
//! copy); everything it returns is plain data or a [`View`] of a lent block.

use super::block::{as_bytes, sealed_input, ArraySrc, BlockHeader, HostBlock};
use super::expect::{assigned_id, check_reply, makes_result, Expect};
use super::fault;
use super::locate::resolve_worker_path;
use super::frame::{announced_fds, decode_frame, encode_frame, protocol, Dec, Enc, Header, MAX_FRAME};
use super::messages::*;
use super::sys;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{BatchView, Csr};
use crate::mosp::MospOptions;
use crate::sssp::SsspOptions;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How to run the worker. `Default` gives the spec's defaults (13.3).
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The executable; `None` = `$DYNG_WORKER`, else the installation's (see [`super::locate`]).
    pub worker_path: Option<PathBuf>,
    pub spawn_timeout: Duration,
    pub heartbeat_ms: u32,
    /// A running call with no frame for this long means a hung worker.
    pub hang_timeout: Duration,
    /// Deadline of every call; `None` = no deadline.
    pub call_timeout: Option<Duration>,
    pub cancel_grace: Duration,
    pub lend_ttl_ms: u32,
    /// Limit on bytes lent and not yet acknowledged; 0 = no limit.
    pub max_lent_bytes: u64,
    /// Keep the journal that rebuilds a restarted worker (12.2).
    pub journal: bool,
    /// A checkpoint (12.3) replaces the journal's base and batches once it holds more than this
    /// many UPDATE batches; 0 = no limit on the count. Default 64.
    pub checkpoint_batches: usize,
    /// ... or more than this many bytes of journaled batch input; 0 = no limit on the bytes.
    /// Default 256 MiB. Both 0: no checkpoints, the journal grows until the next LOAD_GRAPH.
    pub checkpoint_bytes: u64,
    /// Retries of idempotent calls after a worker death.
    pub max_retries: u32,
    /// The crash-loop guard (section 11): after this many worker deaths within
    /// `crash_loop_window` the client stops respawning and every call gives `WorkerLost`
    /// ("unstable"). Default 3 in 60 s (13.3); `usize::MAX` turns the guard off (the chaos
    /// soak kills on purpose).
    pub crash_loop_deaths: usize,
    pub crash_loop_window: Duration,
    /// 0 AUTO, 1 CPU, 2 CUDA.
    pub backend: u8,
    pub allow_build_skew: bool,
    /// XXH3-64 checksums of every array in both directions (6.6, `strict_flags.CHECKSUMS`): the
    /// worker hashes its replies and the host verifies them before handing out a view, the host
    /// hashes its inputs and the worker verifies them. A mismatch is `Protocol`. Off by default:
    /// it costs a hash of every array on each side (measured in docs/worker.md).
    pub checksums: bool,
    /// Extra environment for the worker process only (tests pass `DYNG_FAULT` this way).
    pub env: Vec<(String, String)>,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            worker_path: None,
            spawn_timeout: Duration::from_secs(30),
            heartbeat_ms: 500,
            hang_timeout: Duration::from_secs(10),
            call_timeout: None,
            cancel_grace: Duration::from_secs(2),
            lend_ttl_ms: 60_000,
            max_lent_bytes: 0,
            journal: true,
            checkpoint_batches: 64,
            checkpoint_bytes: 256 << 20,
            max_retries: 1,
            crash_loop_deaths: 3,
            crash_loop_window: Duration::from_secs(60),
            backend: 0,
            allow_build_skew: false,
            checksums: false,
            env: Vec::new(),
        }
    }
}

/// Counters of the host side (13.3), for tests and diagnostics.
#[derive(Debug, Default)]
pub struct HostCounters {
    pub generation: AtomicU32,
    pub restarts: AtomicU64,
    pub live_replies: AtomicU64,
    pub acks_sent: AtomicU64,
    pub acks_dropped: AtomicU64,
    pub retired_seen: AtomicU64,
    pub heartbeats: AtomicU64,
    /// Checkpoints that replaced the journal's base (12.3).
    pub checkpoints: AtomicU64,
    /// Checkpoints given up (the worker refused or died); the journal stayed as it was.
    pub checkpoint_failures: AtomicU64,
}

/// Facts about the graph resident in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphInfo {
    pub n: usize,
    pub m: usize,
    pub k: usize,
    pub epoch: u64,
}

/// A result resident in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteResult {
    pub id: u64,
    /// Objectives of a MOSP result (0 for SSSP).
    pub k: usize,
    /// The combined graph's scale L (MOSP only).
    pub scale: u32,
    pub epoch: u64,
}

/// Where CONSUMED acks go; bound to one worker generation.
struct AckSink {
    sock: Arc<OwnedFd>,
    spawn_id: u64,
    generation: u32,
    counters: Arc<HostCounters>,
}

impl AckSink {
    fn ack(&self, a: Ack) {
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
    block: Option<HostBlock>,
    ack: Ack,
    sink: Arc<AckSink>,
    epoch: u64,
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

/// A decoded reply.
struct Reply {
    epoch: u64,
    result_id: u64,
    extra: Vec<u8>,
    view: Option<View>,
}

/// A sealed input block kept for (re)sending: the journal holds these.
#[derive(Clone)]
struct Input {
    fd: Arc<OwnedFd>,
    descs: Vec<ArrayDesc>,
}

impl Input {
    /// Bytes of the arrays (what the checkpoint's byte threshold counts).
    fn array_bytes(&self) -> u64 {
        // The descriptors were laid out here from known dtypes, so the size is always known.
        self.descs.iter().map(|d| d.count * dtype_size(d.dtype).unwrap_or(0)).sum()
    }
}

/// A request before it gets a call id.
#[derive(Clone)]
struct Request {
    params: OpParams,
    result_id: u64,
    flags: u16,
    expected_epoch: u64,
    reply_mode: u8,
    input: Option<Input>,
    /// The worker's epoch after the call, where it is not the journal's (`Core::epoch`): the
    /// steps of a replay, which walk up to it.
    reply_epoch: Option<u64>,
}

impl Request {
    fn new(params: OpParams) -> Self {
        let reply_mode = if matches!(params, OpParams::View { .. } | OpParams::Checkpoint | OpParams::Echo) { REPLY_LENT } else { REPLY_NONE };
        let flags = match params {
            OpParams::View { .. } | OpParams::Stats | OpParams::WorkspaceBytes | OpParams::Checkpoint | OpParams::Echo => FLAG_IDEMPOTENT,
            _ => 0,
        };
        Request { params, result_id: 0, flags, expected_epoch: EPOCH_ANY, reply_mode, input: None, reply_epoch: None }
    }
}

/// What the journal remembers of a resident result (12.2).
#[derive(Clone)]
struct ResultDesc {
    id: u64,
    params: OpParams,
    /// The epoch the result is current at (older than the graph = stale, as in-process).
    epoch: u64,
    /// An adopted result: its input arrays and the epoch they were adopted at. An adopted tree
    /// need not be canonical, so it cannot be recomputed at `epoch`; the replay adopts it again
    /// at that epoch and lists it in the replayed UPDATEs up to `epoch`, as the caller's UPDATEs
    /// did.
    adopted: Option<(Input, u64)>,
}

#[derive(Default)]
struct Journal {
    base: Option<(Input, OpParams, u64)>,
    batches: Vec<(Input, u64)>,
    results: Vec<ResultDesc>,
    /// The newest batch is the UPDATE in flight, not yet confirmed by its REPLY_OK: only that
    /// batch can be a poison batch (12.2 rule 5). A confirmed batch whose replay meets a death
    /// is replayed again by the next worker.
    unconfirmed: bool,
}

struct Conn {
    sock: Arc<OwnedFd>,
    child: Child,
    pidfd: OwnedFd,
    spawn_id: u64,
    generation: u32,
    caps: u64,
    sink: Arc<AckSink>,
}

struct Core {
    conn: Option<Conn>,
    journal: Journal,
    /// Epoch the worker is (or, after a replay, will be) at.
    epoch: u64,
    graph: Option<GraphInfo>,
    next_call_id: u64,
    max_result_id: u64,
    deaths: VecDeque<Instant>,
    unstable: bool,
    buf: Vec<u8>,
}

/// Why one exchange did not produce a reply.
enum Lost {
    /// The worker died or was killed (hung); the message says which.
    Died(String),
    /// Any other error: returned to the caller as is.
    Fail(Error),
    /// The worker must go: it ignored a cancel (and was killed), or it broke the protocol and can
    /// no longer be trusted (section 11). The caller buries it and returns the error; the next
    /// call starts a fresh worker and replays the journal.
    Killed(Error),
}

impl From<Error> for Lost {
    fn from(e: Error) -> Self {
        Lost::Fail(e)
    }
}

/// A handle on one persistent worker process. Thread-safe: calls are serialized.
pub struct Client {
    opts: WorkerOptions,
    core: Mutex<Core>,
    counters: Arc<HostCounters>,
    /// Numbers input memfds (their names); outside `core` so that an input can be made while
    /// the core is locked (a checkpoint copies its arrays under the lock).
    input_seq: AtomicU64,
}

fn worker_lost(msg: impl Into<String>) -> Error {
    Error::WorkerLost(format!("dyng worker: {}", msg.into()))
}

/// The spawner thread (spec 2.2): `PR_SET_PDEATHSIG` fires when the thread that forked exits, so
/// every fork happens on this one long-lived thread.
type SpawnJob = Box<dyn FnOnce() + Send>;

/// The spawner's queue, starting the thread on first use (and again if the system refused it).
fn spawner() -> Result<mpsc::Sender<SpawnJob>> {
    static TX: Mutex<Option<mpsc::Sender<SpawnJob>>> = Mutex::new(None);
    let mut slot = TX.lock();
    if let Some(tx) = &*slot {
        return Ok(tx.clone());
    }
    let (tx, rx) = mpsc::channel::<SpawnJob>();
    std::thread::Builder::new()
        .name("dyng-spawner".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .map_err(|e| Error::Resource(format!("dyng worker: cannot start the spawner thread: {e}")))?;
    *slot = Some(tx.clone());
    Ok(tx)
}

fn on_spawner<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    spawner()?
        .send(Box::new(move || {
            let _ = tx.send(f());
        }))
        .map_err(|_| Error::Internal("the dyng spawner thread is gone".into()))?;
    rx.recv().map_err(|_| Error::Internal("the dyng spawner thread is gone".into()))
}

impl Client {
    /// Spawns the worker and completes the handshake.
    pub fn spawn(opts: WorkerOptions) -> Result<Client> {
        probe_platform()?;
        let client = Client {
            opts,
            core: Mutex::new(Core {
                conn: None,
                journal: Journal::default(),
                epoch: 0,
                graph: None,
                next_call_id: 1,
                max_result_id: 0,
                deaths: VecDeque::new(),
                unstable: false,
                buf: vec![0; MAX_FRAME],
            }),
            counters: Arc::new(HostCounters::default()),
            input_seq: AtomicU64::new(0),
        };
        {
            let mut core = client.core.lock();
            let conn = client.start(&mut core)?;
            core.conn = Some(conn);
        }
        Ok(client)
    }

    pub fn counters(&self) -> &HostCounters {
        &self.counters
    }

    /// The worker's pid, if one is running.
    pub fn worker_pid(&self) -> Option<u32> {
        self.core.lock().conn.as_ref().map(|c| c.child.id())
    }

    pub fn generation(&self) -> u32 {
        self.counters.generation.load(Ordering::SeqCst)
    }

    pub fn graph_info(&self) -> Option<GraphInfo> {
        self.core.lock().graph
    }

    fn start(&self, core: &mut Core) -> Result<Conn> {
        let path = resolve_worker_path(self.opts.worker_path.as_deref())?;
        let generation = self.counters.generation.load(Ordering::SeqCst) + 1;
        let (host_end, child_end) = sys::seqpacket_pair().map_err(|e| Error::Io { path: "socketpair".into(), source: e })?;
        let env = self.opts.env.clone();
        let parent = std::process::id() as i32;
        let starttime = sys::process_starttime(parent).unwrap_or(0);
        let child = on_spawner(move || -> std::io::Result<Child> {
            let child_raw = child_end.as_raw_fd();
            let mut cmd = Command::new(&path);
            cmd.env("DYNG_WORKER_FD", "3")
                .env("DYNG_PARENT_PID", parent.to_string())
                .env("DYNG_PARENT_STARTTIME", starttime.to_string())
                .env("DYNG_PROTO", "1")
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // SAFETY: the closure runs in the forked child before exec and only makes
            // async-signal-safe calls (dup2, fcntl, close_range, getrlimit, setsid, prctl,
            // getppid, _exit).
            unsafe {
                use std::os::unix::process::CommandExt;
                cmd.pre_exec(move || {
                    if libc::dup2(child_raw, 3) < 0 || libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The worker gets stdio (/dev/null) and the protocol socket at fd 3, nothing
                    // of the host's: a host fd without close-on-exec would leak into it.
                    sys::cloexec_from(4);
                    libc::setsid();
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(0);
                    }
                    Ok(())
                });
            }
            let child = cmd.spawn();
            drop(child_end);
            child
        })?
        .map_err(|e| match e.raw_os_error() {
            // fork refused: a process limit or memory, not a file problem.
            Some(libc::EAGAIN | libc::ENOMEM) => Error::Resource(format!("dyng worker: cannot start dyng-worker: {e}")),
            _ => Error::Io { path: "dyng worker: spawning dyng-worker".into(), source: e },
        })?;
        let mut child = child;
        let pidfd = match sys::pidfd_open(child.id() as i32) {
            Ok(p) => p,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::NotSupported(format!("dyng worker: pidfd_open: {e}")));
            }
        };
        fault::hit("H1");
        match self.handshake(core, &host_end, &pidfd, &child, generation) {
            Ok((spawn_id, caps)) => {
                self.counters.generation.store(generation, Ordering::SeqCst);
                let sock = Arc::new(host_end);
                let sink = Arc::new(AckSink { sock: sock.clone(), spawn_id, generation, counters: self.counters.clone() });
                Ok(Conn { sock, child, pidfd, spawn_id, generation, caps, sink })
            }
            Err(e) => {
                let _ = sys::pidfd_signal(pidfd.as_raw_fd(), libc::SIGKILL);
                let _ = child.wait();
                Err(e)
            }
        }
    }

    fn handshake(&self, core: &mut Core, sock: &OwnedFd, pidfd: &OwnedFd, child: &Child, generation: u32) -> Result<(u64, u64)> {
        let deadline = Instant::now() + self.opts.spawn_timeout;
        let (h, body) = recv_until(sock, pidfd, &mut core.buf, deadline, "HELLO")?;
        if h.msg_type != msg::HELLO {
            return Err(protocol(format!("expected HELLO, got type {:#x}", h.msg_type)));
        }
        let hello = Hello::get(&mut Dec::new(&body))?;
        if hello.build_id != super::server::build_id() && !self.opts.allow_build_skew {
            return Err(protocol("the worker comes from another build of dyng"));
        }
        // SO_PEERCRED of a socketpair names the process that created the pair (this one), not
        // the child, so the spawned pid is checked through HELLO and the uid through the socket.
        let (pid, uid) = sys::peer_cred(sock.as_raw_fd()).map_err(|e| protocol(format!("SO_PEERCRED: {e}")))?;
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        if hello.worker_pid != child.id() || pid as u32 != std::process::id() || uid != me {
            return Err(protocol(format!(
                "HELLO from pid {} (socket peer pid {pid} uid {uid}), not the spawned worker {}",
                hello.worker_pid,
                child.id()
            )));
        }
        let spawn_id = sys::random_u64();
        let w = Welcome {
            spawn_id,
            generation,
            max_outstanding: 1,
            max_lent_bytes: self.opts.max_lent_bytes,
            lend_ttl_ms: self.opts.lend_ttl_ms,
            heartbeat_ms: self.opts.heartbeat_ms,
            log_rate_per_s: 0,
            strict_flags: if self.opts.checksums { STRICT_CHECKSUMS } else { 0 },
            backend: self.opts.backend,
            next_result_id: core.max_result_id + 1,
        };
        // The sequential engine is an extension value: a worker without it gets the spec's CPU.
        let w = Welcome { backend: if w.backend == BACKEND_SEQUENTIAL && hello.caps & CAP_ADOPT == 0 { BACKEND_CPU } else { w.backend }, ..w };
        let mut e = Enc::default();
        w.put(&mut e);
        let f = encode_frame(Header { msg_type: msg::WELCOME, spawn_id, generation, ..Default::default() }, &e.0, 0)?;
        sys::send_record(sock.as_raw_fd(), &f, &[], false).map_err(|e| worker_lost(format!("sending WELCOME: {e}")))?;
        let (h, body) = recv_until(sock, pidfd, &mut core.buf, deadline, "READY")?;
        if h.msg_type != msg::READY || h.spawn_id != spawn_id {
            return Err(protocol(format!("expected READY, got type {:#x}", h.msg_type)));
        }
        Ready::get(&mut Dec::new(&body))?;
        Ok((spawn_id, hello.caps))
    }

    /// Kills (if needed) and reaps the worker; records the death for the crash-loop guard.
    fn bury(&self, core: &mut Core) {
        if let Some(mut conn) = core.conn.take() {
            let _ = sys::pidfd_signal(conn.pidfd.as_raw_fd(), libc::SIGKILL);
            let _ = conn.child.wait();
            let now = Instant::now();
            core.deaths.push_back(now);
            while core.deaths.front().is_some_and(|t| now.duration_since(*t) > self.opts.crash_loop_window) {
                core.deaths.pop_front();
            }
            if core.deaths.len() >= self.opts.crash_loop_deaths {
                core.unstable = true;
            }
        }
    }

    /// Makes sure a worker runs, respawning and replaying the journal if the last one died. A
    /// replacement that dies while replaying the journal (not while replaying the newest batch,
    /// which makes that batch a poison batch) is replaced again, until the crash-loop guard
    /// declares the worker unstable.
    fn ensure_live(&self, core: &mut Core) -> Result<()> {
        loop {
            if core.conn.is_some() {
                return Ok(());
            }
            if core.unstable {
                return Err(worker_lost(format!(
                    "unstable: the worker died {} times within {} s; create a new resources handle",
                    self.opts.crash_loop_deaths,
                    self.opts.crash_loop_window.as_secs()
                )));
            }
            let conn = self.start(core)?;
            core.conn = Some(conn);
            self.counters.restarts.fetch_add(1, Ordering::SeqCst);
            if !self.opts.journal {
                core.journal = Journal::default();
                core.graph = None;
                core.epoch = 0;
                return Ok(());
            }
            let batches = core.journal.batches.len();
            match self.replay(core) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let died_mid_replay = e.kind() == crate::ErrorKind::WorkerLost
                        && core.conn.is_none()
                        && core.journal.batches.len() == batches
                        && core.journal.base.is_some();
                    if !died_mid_replay {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Rebuilds the worker's state from the journal (12.2, rule 4).
    fn replay(&self, core: &mut Core) -> Result<()> {
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
    fn replay_results(&self, core: &mut Core, epoch: u64) -> Result<()> {
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

    fn replay_step(&self, core: &mut Core, req: &Request) -> Result<Reply> {
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

    /// Runs one request, with restart, replay and retry per section 11.
    fn call(&self, req: Request) -> Result<Reply> {
        self.call_journaled(req, None::<fn(&mut Core)>)
    }

    /// [`Self::call`] for a journaled op: `journal` runs under the client's lock once a worker is
    /// live, right before the request is first sent, and enters the op in the journal there (12.2
    /// rules 1, 2). Entered any earlier, a replay made by this very call (its worker had died
    /// before) would apply the op, and sending it would apply it a second time.
    fn call_journaled(&self, req: Request, journal: Option<impl FnOnce(&mut Core)>) -> Result<Reply> {
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
    fn exchange(&self, core: &mut Core, req: &Request, deadline: Option<Instant>) -> std::result::Result<Reply, Lost> {
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

    fn kill_for_timeout(&self, generation: u32) -> Error {
        Error::Timeout(format!(
            "dyng worker: call deadline passed and the worker did not answer CANCEL within {} ms (generation {generation}); it was killed",
            self.opts.cancel_grace.as_millis()
        ))
    }

    fn death_reason(&self, conn: &mut Conn) -> String {
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
    fn receive_block(&self, conn: &Conn, call_id: u64, ok: &ReplyOk, fd: Option<OwnedFd>, ctrunc: bool) -> Result<Option<View>> {
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

    fn input(&self, arrays: &[ArraySrc<'_>]) -> Result<Input> {
        let seq = self.input_seq.fetch_add(1, Ordering::SeqCst) + 1;
        let (fd, descs) = sealed_input(seq, arrays, self.opts.checksums)?;
        Ok(Input { fd: Arc::new(fd), descs })
    }

    // -----------------------------------------------------------------------------------------
    // The API mirrored from the in-process library.

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

    fn push_result(&self, id: u64, params: OpParams, epoch: u64, adopted: Option<Input>) {
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
        let params = OpParams::AdoptSssp {
            source: wire_source(source)?,
            objective: wire_objective(objective)?,
            canonicalize,
            delta: wire_delta(opt.delta)?,
            view_mask: 0,
            assign_id: 0,
            fallback: opt.fallback.code() as u8,
        };
        let input = self.trees_input(&[(dist, parent)])?;
        let r = self.call_adopt(params, input)?;
        Ok(RemoteResult { id: r.result_id, k: 0, scale: 0, epoch: r.epoch })
    }

    /// Combines K caller trees (objectives 0..K-1, each `(distances, parents)` of n vertices)
    /// into a resident MOSP result (ADOPT_MOSP, an extension op): the worker adopts each tree as
    /// `from_arrays` does (with `canonicalize` and `deltas[j]`; every tree runs `fallback`:
    /// `Fallback::AdaptiveCounted` where the drop-in driver adopts), then runs
    /// `from_trees` with `preferences`, as `dyng mosp` does in-process.
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
        };
        let input = self.trees_input(trees)?;
        let r = self.call_adopt(params, input)?;
        let scale = Dec::new(&r.extra).u32()?;
        Ok(RemoteResult { id: r.result_id, k, scale, epoch: r.epoch })
    }

    /// The input block of ADOPT_SSSP (one tree) or ADOPT_MOSP (K trees): DIST and PARENT with
    /// K columns, objective-major as WEIGHTS (tree j's n values at [j*n, (j+1)*n)).
    fn trees_input(&self, trees: &[(&[i64], &[i32])]) -> Result<Input> {
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
    fn call_adopt(&self, params: OpParams, input: Input) -> Result<Reply> {
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
    fn batch_input(&self, batch: &BatchView<'_>) -> Result<Input> {
        let k = batch.k as u32;
        self.input(&[
            ArraySrc { kind: kind::INSERT_FROM, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.ins_src) },
            ArraySrc { kind: kind::INSERT_TO, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.ins_dst) },
            ArraySrc { kind: kind::INSERT_WEIGHTS, dtype: DTYPE_I32, cols: k, bytes: as_bytes(batch.ins_weights) },
            ArraySrc { kind: kind::DELETE_FROM, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.del_src) },
            ArraySrc { kind: kind::DELETE_TO, dtype: DTYPE_I32, cols: 1, bytes: as_bytes(batch.del_dst) },
        ])
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
    fn maybe_checkpoint(&self, core: &mut Core) {
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
    /// rebuilt from its K trees by `from_trees`, as every update rebuilds them. A stale result
    /// cannot be viewed and needs no arrays, only to be resident and stale under its id: it is
    /// recomputed on the base at epoch E - 1, and an empty batch (it moves the graph's version)
    /// takes the base to E, leaving it stale as it was.
    fn take_checkpoint(&self, core: &mut Core) -> std::result::Result<Journal, Lost> {
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
fn copy_out<T: Copy>(s: &[T]) -> Vec<T> {
    let (a, b) = s.split_at(s.len() / 2);
    let mut out = Vec::with_capacity(s.len());
    out.extend_from_slice(a);
    fault::hit("H5");
    out.extend_from_slice(b);
    out
}

/// A protocol violation found in what the worker sent (section 11): the worker can no longer be
/// trusted, so it is told (PROTOCOL_ERROR, best effort: it may be gone already) and condemned;
/// the caller kills it and the call fails with `e` (`Protocol`).
fn violation(conn: &Conn, code: u16, offending_type: u16, e: Error) -> Lost {
    let mut b = Enc::default();
    put_protocol_error(&mut b, code, offending_type);
    let h = Header { msg_type: msg::PROTOCOL_ERROR, spawn_id: conn.spawn_id, generation: conn.generation, ..Default::default() };
    if let Ok(f) = encode_frame(h, &b.0, 0) {
        let _ = sys::send_record(conn.sock.as_raw_fd(), &f, &[], false);
    }
    Lost::Killed(e)
}

fn core_conn_kill(conn: &mut Conn) -> u32 {
    let _ = sys::pidfd_signal(conn.pidfd.as_raw_fd(), libc::SIGKILL);
    conn.generation
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut core = self.core.lock();
        if let Some(mut conn) = core.conn.take() {
            let h = Header { msg_type: msg::SHUTDOWN, spawn_id: conn.spawn_id, generation: conn.generation, ..Default::default() };
            if let Ok(f) = encode_frame(h, &[1], 0) {
                let _ = sys::send_record(conn.sock.as_raw_fd(), &f, &[], false);
            }
            let exited = sys::poll_in(&[conn.pidfd.as_raw_fd()], 1000).is_ok_and(|r| r[0] != 0);
            if !exited {
                let _ = sys::pidfd_signal(conn.pidfd.as_raw_fd(), libc::SIGKILL);
            }
            let _ = conn.child.wait();
        }
        // Views still alive hold the socket; their acks go nowhere, which is fine: the process
        // that would read them is gone.
        self.counters.generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits for one handshake record, bounded by `deadline`, noticing a dead child.
fn recv_until(sock: &OwnedFd, pidfd: &OwnedFd, buf: &mut [u8], deadline: Instant, what: &str) -> Result<(Header, Vec<u8>)> {
    loop {
        let ms = deadline.saturating_duration_since(Instant::now()).as_millis() as i32;
        if ms <= 0 {
            return Err(Error::Timeout(format!("dyng worker: no {what} within the spawn timeout")));
        }
        let rev = sys::poll_in(&[sock.as_raw_fd(), pidfd.as_raw_fd()], ms).map_err(|e| Error::Io { path: "poll".into(), source: e })?;
        if rev[0] != 0 {
            let r = sys::recv_record(sock.as_raw_fd(), buf, true).map_err(|e| worker_lost(format!("recv during handshake: {e}")))?;
            if r.len == 0 && r.fds.is_empty() {
                return Err(worker_lost(format!("the worker exited before {what}")));
            }
            let (h, body) = decode_frame(&buf[..r.len], r.fds.len())?;
            return Ok((h, body.to_vec()));
        }
        if rev[1] != 0 {
            return Err(worker_lost(format!("the worker exited before {what}")));
        }
    }
}

/// The adoption that recreates a result current at a checkpoint from its present trees, and
/// how many trees it takes: the result's op and options (source, objective or K and
/// preferences, delta per tree), `canonicalize` off so the trees come back as they are.
fn adoption_of(params: &OpParams, graph_k: u16) -> Option<(OpParams, usize)> {
    match params.clone() {
        OpParams::SsspCompute { source, objective, delta, fallback, .. } | OpParams::AdoptSssp { source, objective, delta, fallback, .. } => {
            Some((OpParams::AdoptSssp { source, objective, canonicalize: false, delta, view_mask: 0, assign_id: 0, fallback }, 1))
        }
        OpParams::MospCompute { source, k, prefs, delta, fallback, .. } => {
            // K = 0 asks for all objectives of the graph, whose K no update changes.
            let k = if k == 0 { graph_k } else { k };
            let deltas = vec![delta; k as usize];
            Some((OpParams::AdoptMosp { source, k, prefs, canonicalize: false, deltas, view_mask: 0, assign_id: 0, fallback }, k as usize))
        }
        OpParams::AdoptMosp { source, k, prefs, deltas, fallback, .. } => {
            Some((OpParams::AdoptMosp { source, k, prefs, canonicalize: false, deltas, view_mask: 0, assign_id: 0, fallback }, k as usize))
        }
        _ => None,
    }
}

/// What recreates a stale result at a checkpoint: a compute of its kind, source and objectives.
/// Its arrays are never read (VIEW and UPDATE refuse a stale result), so a compute on the
/// checkpoint's graph does, where the adopted trees of an earlier graph might not even adopt.
fn stale_placeholder(params: &OpParams) -> OpParams {
    match params.clone() {
        OpParams::AdoptSssp { source, objective, delta, fallback, .. } => OpParams::SsspCompute { source, objective, delta, view_mask: 0, assign_id: 0, fallback },
        OpParams::AdoptMosp { source, k, prefs, fallback, .. } => OpParams::MospCompute { source, k, prefs, delta: 0, view_mask: 0, assign_id: 0, fallback },
        other => other,
    }
}

/// Refuses an extension op, or an op with an extension's field that a worker without the
/// extension would ignore, before it is sent to a worker that did not announce it in HELLO.
fn extension_supported(core: &Core, params: &OpParams) -> Result<()> {
    let adopts = matches!(params, OpParams::AdoptSssp { .. } | OpParams::AdoptMosp { .. });
    let caps = core.conn.as_ref().map_or(0, |c| c.caps);
    if adopts && caps & CAP_ADOPT == 0 {
        return Err(Error::NotSupported(format!(
            "dyng worker: op {} needs the ADOPT capability, which this worker does not announce (an older dyng-worker?)",
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

fn wire_source(source: usize) -> Result<i32> {
    i32::try_from(source).map_err(|_| Error::invalid(format!("dyng: source {source} is outside the 32-bit range")))
}

fn wire_objective(objective: usize) -> Result<u16> {
    u16::try_from(objective).map_err(|_| Error::invalid(format!("dyng: objective {objective} is outside [0, {})", crate::graph::MAX_OBJECTIVES)))
}

/// `None` travels as 0 (the default); an explicit 0 is refused here as in-process.
fn wire_delta(delta: Option<i64>) -> Result<i64> {
    match delta {
        Some(0) => Err(Error::invalid("dyng: delta = 0 must be > 0")),
        d => Ok(d.unwrap_or(0)),
    }
}

/// Maps a REPLY_ERR back to the library error the in-process call would give.
fn error_of(e: &ReplyErr) -> Error {
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

/// Probes the kernel features worker isolation needs (1.4), not the kernel version.
pub fn probe_platform() -> Result<()> {
    let unsupported = |what: &str, e: std::io::Error| Error::NotSupported(format!("dyng worker: {what} is unavailable: {e}"));
    sys::memfd("dyng:probe").map_err(|e| unsupported("memfd_create(MFD_ALLOW_SEALING)", e))?;
    sys::seqpacket_pair().map_err(|e| unsupported("AF_UNIX/SOCK_SEQPACKET", e))?;
    sys::pidfd_open(std::process::id() as i32).map_err(|e| unsupported("pidfd_open", e))?;
    Ok(())
}
