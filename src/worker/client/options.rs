//! What a client is asked to do, and what it tells about itself: the worker's options, the
//! host counters, the resident graph and results.

use super::*;
use crate::resources::Backend;

/// How to run the worker. `Default` gives the spec's defaults (13.3).
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The executable; `None` = `$DYNG_WORKER`, else the installation's (see
    /// [`resolve_worker_path`](crate::worker::resolve_worker_path)).
    pub worker_path: Option<PathBuf>,
    /// How long a spawn and its handshake may take.
    pub spawn_timeout: Duration,
    /// How often a busy worker sends a heartbeat; the worker takes at least 10 ms. Sent in
    /// whole milliseconds.
    pub heartbeat: Duration,
    /// A running call with no frame for this long means a hung worker.
    pub hang_timeout: Duration,
    /// Deadline of every call; `None` = no deadline.
    pub call_timeout: Option<Duration>,
    /// How long a cancelled call may take to stop before the worker is killed.
    pub cancel_grace: Duration,
    /// How long the worker keeps a lent block that no ack came back for, then retires it. Sent
    /// in whole milliseconds.
    pub lend_ttl: Duration,
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
    /// The window of `crash_loop_deaths`.
    pub crash_loop_window: Duration,
    /// The worker's engine; `None` leaves the choice to the worker (the parallel engine).
    pub backend: Option<Backend>,
    /// Accept a worker of another build of dyng (normally refused at the handshake).
    pub allow_build_skew: bool,
    /// XXH3-64 checksums of every array in both directions (6.6, `strict_flags.CHECKSUMS`): the
    /// worker hashes its replies and the host verifies them before handing out a view, the host
    /// hashes its inputs and the worker verifies them. A mismatch is `Protocol`. Off by default:
    /// it costs a hash of every array on each side (measured in docs/worker.md).
    pub checksums: bool,
    /// Extra environment for the worker process only (tests pass `DYNG_FAULT` this way).
    pub env: Vec<(String, String)>,
}

impl WorkerOptions {
    /// WELCOME `backend`: the protocol's number for [`backend`](Self::backend).
    pub(crate) fn wire_backend(&self) -> u8 {
        match self.backend {
            None => BACKEND_AUTO,
            Some(Backend::Sequential) => BACKEND_SEQUENTIAL,
            Some(Backend::Parallel) => BACKEND_CPU,
            Some(Backend::Cuda) => BACKEND_CUDA,
        }
    }
}

/// A duration in whole milliseconds, as WELCOME carries it (saturating at `u32::MAX`).
pub(crate) fn wire_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            worker_path: None,
            spawn_timeout: Duration::from_secs(30),
            heartbeat: Duration::from_millis(500),
            hang_timeout: Duration::from_secs(10),
            call_timeout: None,
            cancel_grace: Duration::from_secs(2),
            lend_ttl: Duration::from_secs(60),
            max_lent_bytes: 0,
            journal: true,
            checkpoint_batches: 64,
            checkpoint_bytes: 256 << 20,
            max_retries: 1,
            crash_loop_deaths: 3,
            crash_loop_window: Duration::from_secs(60),
            backend: None,
            allow_build_skew: false,
            checksums: false,
            env: Vec::new(),
        }
    }
}

/// Counters of the host side (13.3), for tests and diagnostics.
#[derive(Debug, Default)]
pub struct HostCounters {
    /// The running worker's generation: 1 for the first spawn, one more per respawn.
    pub generation: AtomicU32,
    /// Workers respawned after a death.
    pub restarts: AtomicU64,
    /// Views alive now (lent blocks mapped and not yet dropped).
    pub live_replies: AtomicU64,
    /// CONSUMED acks sent for dropped views.
    pub acks_sent: AtomicU64,
    /// Acks not sent: their worker generation was gone, or the send failed.
    pub acks_dropped: AtomicU64,
    /// Blocks the worker reported retired (BLOCK_RETIRED entries).
    pub retired_seen: AtomicU64,
    /// Heartbeats received.
    pub heartbeats: AtomicU64,
    /// Checkpoints that replaced the journal's base (12.3).
    pub checkpoints: AtomicU64,
    /// Checkpoints given up (the worker refused or died); the journal stayed as it was.
    pub checkpoint_failures: AtomicU64,
}

/// Facts about the graph resident in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphInfo {
    /// Vertices.
    pub n: usize,
    /// Edges.
    pub m: usize,
    /// Objectives (weights per edge).
    pub k: usize,
    /// The worker's epoch right after the graph was loaded (every LOAD_GRAPH and UPDATE
    /// advances it).
    pub epoch: u64,
}

/// A result resident in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteResult {
    /// The worker's id of the result, what the calls on it take.
    pub id: u64,
    /// Objectives of a MOSP result (0 for SSSP).
    pub k: usize,
    /// The combined graph's scale L (MOSP only).
    pub scale: u32,
    /// The worker's epoch the result is up to date with.
    pub epoch: u64,
}
