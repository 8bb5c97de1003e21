//! `dyng-worker`: the persistent worker process of dyng's worker isolation.
//!
//! Spawned by the library with its end of a socket pair at `DYNG_WORKER_FD`; it is not meant to be
//! started by hand. All logic lives in the library's worker server.

fn main() {
    std::process::exit(dyng::internals::worker_main());
}
