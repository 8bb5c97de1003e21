//! The host side: spawning `dyng-worker`, the handshake, calls with deadlines and hang detection,
//! zero-copy views whose drop sends the consumed ack, and restart with journal replay.
//!
//! [`Client`] mirrors the in-process API (load a graph, compute SSSP/MOSP results, update, view,
//! copy); everything it returns is plain data or a [`View`] of a lent block. Here: the client's
//! state (its connection, journal and counters); `spawn.rs` starts a worker and buries one,
//! `exchange.rs` runs one call, `journal.rs` replays and checkpoints, `ops.rs` has the
//! operations, `view.rs` the views and their acks, `options.rs` the options and facts.

mod exchange;
mod journal;
mod ops;
mod options;
mod spawn;
mod view;

pub use options::{GraphInfo, HostCounters, RemoteResult, WorkerOptions};
use options::wire_ms;
use spawn::probe_platform;
pub use view::View;
use ops::*;
use view::AckSink;

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

    /// The host-side counters.
    pub fn counters(&self) -> &HostCounters {
        &self.counters
    }

    /// The worker's pid, if one is running.
    pub fn worker_pid(&self) -> Option<u32> {
        self.core.lock().conn.as_ref().map(|c| c.child.id())
    }

    /// The current worker generation (see [`HostCounters::generation`]).
    pub fn generation(&self) -> u32 {
        self.counters.generation.load(Ordering::SeqCst)
    }

    /// The resident graph, if one is loaded.
    pub fn graph_info(&self) -> Option<GraphInfo> {
        self.core.lock().graph
    }
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
