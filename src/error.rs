//! The one error type of the library and its classification.
//!
//! Every fallible function of the Rust API returns [`Error`]; the C ABI maps each variant to one
//! stable `dyng_status_t` through [`Error::kind`]. Messages name the argument, the value and the rule
//! that was broken, and I/O errors name the path (and the line and column where a parser stopped).

use std::path::Path;

/// What went wrong, as a stable category (the C ABI's status codes are derived from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidArgument,
    StaleResult,
    Io,
    Capacity,
    NotSupported,
    OutOfMemory,
    Cuda,
    WorkerLost,
    Timeout,
    Protocol,
    Resource,
    Internal,
}

/// The library's error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument or input value breaks a documented rule.
    #[error("{0}")]
    InvalidArgument(String),
    /// A result that belongs to another graph, or to an older state of this graph.
    #[error("{0}")]
    StaleResult(String),
    /// The operating system refused a file operation.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is malformed; `line` and `column` are 1-based (0 = not applicable).
    #[error("{}", located(path, *line, *column, message))]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A size limit of the data model (32-bit ids and offsets, 62-bit distances) is exceeded.
    #[error("{0}")]
    Capacity(String),
    /// The requested backend or feature is not available on this machine or build.
    #[error("{0}")]
    NotSupported(String),
    /// An allocation failed.
    #[error("{0}")]
    OutOfMemory(String),
    /// The CUDA driver or NVRTC reported an error.
    #[error("{0}")]
    Cuda(String),
    /// The worker process died, hung or kept crashing (worker isolation).
    #[error("{0}")]
    WorkerLost(String),
    /// A deadline passed before the call completed (worker isolation).
    #[error("{0}")]
    Timeout(String),
    /// A malformed message, block or handshake between library and worker.
    #[error("{0}")]
    Protocol(String),
    /// The operating system refused a resource (a thread, a process); the message gives its error.
    #[error("{0}")]
    Resource(String),
    /// A broken internal invariant (a bug in dyng).
    #[error("internal error: {0}")]
    Internal(String),
}

fn located(path: &str, line: usize, column: usize, message: &str) -> String {
    match (line, column) {
        (0, _) => format!("{path}: {message}"),
        (l, 0) => format!("{path}:{l}: {message}"),
        (l, c) => format!("{path}:{l}:{c}: {message}"),
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable category of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidArgument(_) | Error::Parse { .. } => ErrorKind::InvalidArgument,
            Error::StaleResult(_) => ErrorKind::StaleResult,
            Error::Io { .. } => ErrorKind::Io,
            Error::Capacity(_) => ErrorKind::Capacity,
            Error::NotSupported(_) => ErrorKind::NotSupported,
            Error::OutOfMemory(_) => ErrorKind::OutOfMemory,
            Error::Cuda(_) => ErrorKind::Cuda,
            Error::WorkerLost(_) => ErrorKind::WorkerLost,
            Error::Timeout(_) => ErrorKind::Timeout,
            Error::Protocol(_) => ErrorKind::Protocol,
            Error::Resource(_) => ErrorKind::Resource,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// A parse error at `line`:`column` (1-based) of `path`.
    pub fn parse(path: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        Error::Parse {
            path: path.display().to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}
