"""The exceptions of dyng: one class per kind of error of the library (its `ErrorKind`).

Every class derives from `DyngError`; some also from the builtin a Python program would catch
(an invalid argument is a `ValueError`, a file error an `OSError`, ...). The message is the
library's, naming the argument, the value and the rule (and for files: path, line, column).
"""


class DyngError(Exception):
    """Base class of every error dyng raises."""

    #: The library's ErrorKind (the class name).
    kind = "DyngError"


class InvalidArgument(DyngError, ValueError):
    """An argument or input value breaks a documented rule (nothing was changed)."""

    kind = "InvalidArgument"


class StaleResult(DyngError):
    """A result of another graph, or of an older state of this graph."""

    kind = "StaleResult"


class Io(DyngError, OSError):
    """The operating system refused a file operation (the message names the path)."""

    kind = "Io"


class Capacity(DyngError):
    """A size limit of the data model (32-bit ids and offsets, 62-bit distances) is exceeded."""

    kind = "Capacity"


class NotSupported(DyngError):
    """The backend or feature is not available on this machine, in this build or for this object."""

    kind = "NotSupported"


class OutOfMemory(MemoryError, DyngError):
    """An allocation failed."""

    # MemoryError first: it has a constructor of its own, which unpickling (Dask sends errors
    # back pickled) may only call on a class whose layout base it is.

    kind = "OutOfMemory"


class Cuda(DyngError):
    """The CUDA driver or NVRTC reported an error."""

    kind = "Cuda"


class WorkerLost(DyngError):
    """The worker process died, hung or kept crashing (worker isolation)."""

    kind = "WorkerLost"


class Timeout(DyngError, TimeoutError):
    """A deadline passed before the call completed (worker isolation)."""

    kind = "Timeout"


class Protocol(DyngError):
    """A malformed message between the library and its worker."""

    kind = "Protocol"


class Resource(DyngError):
    """The operating system refused a resource (a thread, a process)."""

    kind = "Resource"


class Internal(DyngError):
    """A broken internal invariant: a bug in dyng, please report it."""

    kind = "Internal"


class Busy(DyngError):
    """An object is in use by a call on another thread against its rule (worker isolation)."""

    kind = "Busy"


__all__ = [
    "DyngError", "InvalidArgument", "StaleResult", "Io", "Capacity", "NotSupported", "OutOfMemory",
    "Cuda", "WorkerLost", "Timeout", "Protocol", "Resource", "Internal", "Busy",
]
