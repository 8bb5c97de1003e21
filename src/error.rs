//! The one error type of the library and its classification.
//!
//! Every fallible function of the Rust API returns [`Error`]; each variant has one stable
//! [`ErrorKind`], whose number ([`ErrorKind::code`]) is the C ABI's `dyng_status_t` and what the
//! worker protocol carries. Messages name the argument, the value and the rule that was broken,
//! and I/O errors name the path (and the line and column where a parser stopped).

use std::path::Path;

/// What went wrong, as a stable category with a stable number ([`ErrorKind::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
#[non_exhaustive]
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

impl ErrorKind {
    /// Every kind, in the order of their codes.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::InvalidArgument,
        ErrorKind::StaleResult,
        ErrorKind::Io,
        ErrorKind::Capacity,
        ErrorKind::NotSupported,
        ErrorKind::OutOfMemory,
        ErrorKind::Cuda,
        ErrorKind::WorkerLost,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Internal,
        ErrorKind::Resource,
    ];

    /// The kind's stable number: the C ABI's `DYNG_ERR_*` status of this kind, and the status a
    /// worker reply carries. (The C ABI's own conditions, a NULL argument, a busy handle and a
    /// caught panic, are codes of the boundary, not kinds.)
    pub const fn code(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => 2,
            ErrorKind::StaleResult => 3,
            ErrorKind::Io => 4,
            ErrorKind::Capacity => 5,
            ErrorKind::NotSupported => 6,
            ErrorKind::OutOfMemory => 7,
            ErrorKind::Cuda => 8,
            ErrorKind::WorkerLost => 9,
            ErrorKind::Timeout => 10,
            ErrorKind::Protocol => 11,
            ErrorKind::Internal => 12,
            ErrorKind::Resource => 14,
        }
    }

    /// The kind numbered `code` ([`ErrorKind::code`]).
    pub fn from_code(code: i32) -> Option<Self> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
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

    /// An error of `kind` with `message` (an I/O error gets `path` for its path).
    pub fn of_kind(kind: ErrorKind, path: &str, message: String) -> Self {
        match kind {
            ErrorKind::InvalidArgument => Error::InvalidArgument(message),
            ErrorKind::StaleResult => Error::StaleResult(message),
            ErrorKind::Io => Error::Io { path: path.into(), source: std::io::Error::other(message) },
            ErrorKind::Capacity => Error::Capacity(message),
            ErrorKind::NotSupported => Error::NotSupported(message),
            ErrorKind::OutOfMemory => Error::OutOfMemory(message),
            ErrorKind::Cuda => Error::Cuda(message),
            ErrorKind::WorkerLost => Error::WorkerLost(message),
            ErrorKind::Timeout => Error::Timeout(message),
            ErrorKind::Protocol => Error::Protocol(message),
            ErrorKind::Resource => Error::Resource(message),
            ErrorKind::Internal => Error::Internal(message),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_round_trip() {
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(k.code()), Some(k));
            assert_eq!(Error::of_kind(k, "p", "m".into()).kind(), k);
        }
        for c in [0, 1, 13, 15, 16, -1] {
            assert_eq!(ErrorKind::from_code(c), None, "code {c} is not a kind's");
        }
    }
}
