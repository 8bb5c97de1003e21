//! Test-only fault injection (spec 17.1): `DYNG_FAULT=<point>:<action>[:<nth>]`.
//!
//! Compiled in only with the `fault-injection` cargo feature, which refuses release builds; without
//! it [`hit`] is an empty inline function. Points are named W1-W9 (worker) and H1-H7 (host). Both
//! processes read the same variable (the worker inherits the host's environment), and each acts
//! only on the points its own code reaches: the worker never calls `hit("H…")` and the host never
//! calls `hit("W…")`, so a host point fires only in the host. Test extension: a comma-separated
//! list of specs, each with an optional 4th field naming the only worker generation it applies to
//! (the host's generation is always 0, as is the worker's before WELCOME, at W1).
//!
//! Actions beyond the spec's: `SYNC` is the deterministic kill harness (17.1): the process
//! connects to the Unix socket named by `DYNG_TEST_SYNC`, writes `<point> <pid>\n` and blocks
//! until the runner writes a byte or closes the connection, so the runner can kill one or both
//! processes at a known step. The [`Tamper`] actions make [`hit`] return what the code at that
//! point must do to its output, to play a malicious or faulty worker (T4) whose reply the host
//! must refuse: at W4, `CORRUPT` flips a byte of the lent block's first array after hashing,
//! `UNSEALED` lends an unsealed copy of the block, `SHORT` a sealed copy one page shorter than
//! `total_len`, `BAD_HEADER` damages page 0, and `BAD_LEND_SEQ` announces another `lend_seq` in
//! REPLY_OK than page 0 holds; on any reply, `BAD_EPOCH`, `BAD_RESULT_ID` and `BAD_EXTRA` change
//! REPLY_OK's epoch, result id or extra fields (one byte more).

/// What a fault point asks the code there to do to its output (test-only, see the module doc).
/// Only the fault-injection build creates one; without it the code that acts on it is dead.
#[cfg_attr(not(feature = "fault-injection"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    Corrupt,
    Unsealed,
    Short,
    BadHeader,
    BadLendSeq,
    BadEpoch,
    BadResultId,
    BadExtra,
}

#[cfg(all(feature = "fault-injection", not(debug_assertions)))]
compile_error!("the fault-injection feature must never be enabled in release builds");

#[cfg(feature = "fault-injection")]
mod imp {
    use super::Tamper;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::OnceLock;

    static HANGING: AtomicBool = AtomicBool::new(false);
    static GENERATION: AtomicU32 = AtomicU32::new(0);

    struct Spec {
        point: String,
        action: String,
        nth: u32,
        generation: Option<u32>,
        hits: AtomicU32,
    }

    fn specs() -> &'static [Spec] {
        static SPECS: OnceLock<Vec<Spec>> = OnceLock::new();
        SPECS.get_or_init(|| {
            let v = std::env::var("DYNG_FAULT").unwrap_or_default();
            v.split(',')
                .filter_map(|one| {
                    let mut it = one.split(':');
                    Some(Spec {
                        point: it.next()?.to_string(),
                        action: it.next()?.to_string(),
                        nth: it.next().and_then(|n| n.parse().ok()).unwrap_or(1),
                        generation: it.next().and_then(|g| g.parse().ok()),
                        hits: AtomicU32::new(0),
                    })
                })
                .collect()
        })
    }

    /// Tells the fault points which worker generation this process is.
    pub fn set_generation(g: u32) {
        GENERATION.store(g, Ordering::SeqCst);
    }

    /// Runs the action of the spec that matches this hit of `point`; a [`Tamper`] action is
    /// returned for the code at the point to carry out.
    pub fn hit(point: &str) -> Option<Tamper> {
        let gen = GENERATION.load(Ordering::SeqCst);
        // `map_or`, not `is_none_or`: the MSRV is 1.80.
        let spec = specs().iter().find(|s| {
            s.point == point && s.generation.map_or(true, |g| g == gen) && s.hits.fetch_add(1, Ordering::SeqCst) + 1 == s.nth
        })?;
        match spec.action.as_str() {
            "CORRUPT" => return Some(Tamper::Corrupt),
            "UNSEALED" => return Some(Tamper::Unsealed),
            "SHORT" => return Some(Tamper::Short),
            "BAD_HEADER" => return Some(Tamper::BadHeader),
            "BAD_LEND_SEQ" => return Some(Tamper::BadLendSeq),
            "BAD_EPOCH" => return Some(Tamper::BadEpoch),
            "BAD_RESULT_ID" => return Some(Tamper::BadResultId),
            "BAD_EXTRA" => return Some(Tamper::BadExtra),
            "SYNC" => sync(point),
            "CRASH" => std::process::abort(),
            // SAFETY: signalling ourselves; the process ends here.
            "SIGKILL_SELF" => unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            },
            // SAFETY: immediate exit without cleanup is the point of this action.
            "EXIT0" => unsafe { libc::_exit(0) },
            "HANG" => {
                HANGING.store(true, Ordering::SeqCst);
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            "CLOSE_SOCKET" => {
                if let Some(fd) = std::env::var("DYNG_WORKER_FD").ok().and_then(|v| v.parse().ok()) {
                    // SAFETY: shutting the protocol socket down; both sides then see EOF.
                    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
                }
            }
            a if a.starts_with("DELAY_") => {
                let ms = a[6..].parse().unwrap_or(0);
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            _ => {}
        }
        None
    }

    /// Reports `point` and this pid to the runner and waits for its answer (any byte or EOF).
    fn sync(point: &str) {
        use std::io::{Read, Write};
        let Some(path) = std::env::var_os("DYNG_TEST_SYNC") else { return };
        let Ok(mut s) = std::os::unix::net::UnixStream::connect(path) else { return };
        if s.write_all(format!("{point} {}\n", std::process::id()).as_bytes()).is_ok() {
            let _ = s.read(&mut [0u8; 1]);
        }
    }

    pub fn hanging() -> bool {
        HANGING.load(Ordering::SeqCst)
    }

    pub fn no_future_write() -> bool {
        std::env::var("DYNG_TEST_NO_FUTURE_WRITE").is_ok_and(|v| v == "1")
    }

    /// The worker acts as one built before the ADOPT extension (no capability bit, no ops).
    pub fn no_adopt() -> bool {
        std::env::var("DYNG_TEST_NO_ADOPT").is_ok_and(|v| v == "1")
    }

    /// The worker acts as one built before extension 4 (no LIGHT_ADOPT bit).
    pub fn no_light_adopt() -> bool {
        std::env::var("DYNG_TEST_NO_LIGHT_ADOPT").is_ok_and(|v| v == "1")
    }
}

#[cfg(not(feature = "fault-injection"))]
mod imp {
    #[inline(always)]
    pub fn hit(_point: &str) -> Option<super::Tamper> {
        None
    }
    #[inline(always)]
    pub fn set_generation(_g: u32) {}
    #[inline(always)]
    pub fn hanging() -> bool {
        false
    }
    #[inline(always)]
    pub fn no_future_write() -> bool {
        false
    }
    #[inline(always)]
    pub fn no_adopt() -> bool {
        false
    }
    #[inline(always)]
    pub fn no_light_adopt() -> bool {
        false
    }
}

pub use imp::{hanging, hit, no_adopt, no_future_write, no_light_adopt, set_generation};
