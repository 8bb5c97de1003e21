//! Worker isolation (DRWP/1): dyng's operations run in a persistent `dyng-worker` process and
//! results come back as zero-copy views of sealed memfd blocks.
//!
//! [`Client`] is the host side (spawn, calls, views, restart and journal replay); `server` is the
//! worker's loop. The design is `spec/worker-protocol.md`; what v1 implements is in `docs/worker.md`.

pub(crate) mod block;
mod client;
mod expect;
pub(crate) mod fault;
pub(crate) mod frame;
mod locate;
pub(crate) mod messages;
pub(crate) mod server;
pub(crate) mod sys;

pub use client::{Client, GraphInfo, HostCounters, RemoteResult, View, WorkerOptions};
pub use locate::resolve_worker_path;
pub use messages::{kind, ArrayDesc, CombinedStats, ObjectiveStats, Pong, ResultStats};
