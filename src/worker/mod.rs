//! Worker isolation (DRWP/1): dyng's operations run in a persistent `dyng-worker` process and
//! results come back as zero-copy views of sealed memfd blocks.
//!
//! [`Client`] is the host side (spawn, calls, views, restart and journal replay); [`server`] is the
//! worker's loop. The design is `spec/worker-protocol.md`; what v1 implements is in `docs/worker.md`.

pub mod block;
pub mod client;
mod expect;
pub(crate) mod fault;
pub mod frame;
pub mod locate;
pub mod messages;
pub mod server;
pub mod sys;

pub use locate::resolve_worker_path;
pub use client::{Client, GraphInfo, HostCounters, RemoteResult, View, WorkerOptions};
pub use messages::kind;
