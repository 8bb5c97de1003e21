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
    /// An argument or input breaks a documented rule: a vertex id out of range, a wrong number
    /// of weights, a negative weight, a malformed file ([`Error::InvalidArgument`],
    /// [`Error::Parse`]). C code 2, `DYNG_ERR_INVALID_ARGUMENT`.
    InvalidArgument,
    /// A result was handed a graph it does not belong to, or one that changed since the result
    /// was last brought up to date ([`Error::StaleResult`]). C code 3, `DYNG_ERR_STALE_RESULT`.
    StaleResult,
    /// The operating system refused to open, read or write a file ([`Error::Io`]). C code 4,
    /// `DYNG_ERR_IO`.
    Io,
    /// A size limit of the data model (32-bit vertex ids and edge offsets, 62-bit distances) or
    /// of an output buffer would be exceeded ([`Error::Capacity`]). C code 5, `DYNG_ERR_CAPACITY`.
    Capacity,
    /// The requested backend or feature is not available in this build or on this machine: no
    /// CUDA driver, no worker executable ([`Error::NotSupported`]). C code 6,
    /// `DYNG_ERR_NOT_SUPPORTED`.
    NotSupported,
    /// An allocation, on the host or on the device, failed ([`Error::OutOfMemory`]). C code 7,
    /// `DYNG_ERR_OUT_OF_MEMORY`.
    OutOfMemory,
    /// The CUDA driver or NVRTC reported an error ([`Error::Cuda`]). C code 8, `DYNG_ERR_CUDA`.
    Cuda,
    /// The worker process died, hung or kept crashing ([`Error::WorkerLost`]). C code 9,
    /// `DYNG_ERR_WORKER_LOST`.
    WorkerLost,
    /// The worker did not answer before the call's deadline ([`Error::Timeout`]). C code 10,
    /// `DYNG_ERR_TIMEOUT`.
    Timeout,
    /// The library and the worker exchanged a malformed or unexpected message, block or
    /// handshake ([`Error::Protocol`]). C code 11, `DYNG_ERR_PROTOCOL`.
    Protocol,
    /// The operating system refused a resource dyng needed: a thread, its stack, a process
    /// ([`Error::Resource`]). C code 14, `DYNG_ERR_RESOURCE`.
    Resource,
    /// A broken internal invariant, a bug in dyng ([`Error::Internal`]). C code 12,
    /// `DYNG_ERR_INTERNAL`.
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
        /// The file the operation was on, as given.
        path: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A file's content is malformed; `line` and `column` are 1-based (0 = not applicable).
    #[error("{}", located(path, *line, *column, message))]
    Parse {
        /// The file being read, as given.
        path: String,
        /// 1-based line where the parser stopped; 0 when the error is not tied to a line.
        line: usize,
        /// 1-based column within `line`; 0 when not applicable.
        column: usize,
        /// The rule that was broken and the offending text.
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
    ///
    /// ```
    /// use dyng::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::InvalidArgument.code(), 2); // DYNG_ERR_INVALID_ARGUMENT
    /// assert_eq!(ErrorKind::from_code(3), Some(ErrorKind::StaleResult));
    /// assert_eq!(ErrorKind::from_code(1), None); // DYNG_ERR_NULL_ARGUMENT: the C boundary's own
    /// ```
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
