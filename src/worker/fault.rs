//! Test-only fault injection (spec 17.1): `DYNG_FAULT=<point>:<action>[:<nth>]`.
//!
//! Compiled in only with the `fault-injection` cargo feature, which refuses release builds; without
//! it [`hit`] is an empty inline function. Points are named W1-W9 (worker) and H1-H7 (host); each
//! process acts only on the points it reaches. Test extension: a comma-separated list of specs, each
//! with an optional 4th field naming the only worker generation it applies to.

#[cfg(all(feature = "fault-injection", not(debug_assertions)))]
compile_error!("the fault-injection feature must never be enabled in release builds");

#[cfg(feature = "fault-injection")]
mod imp {
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

    pub fn hit(point: &str) {
        let gen = GENERATION.load(Ordering::SeqCst);
        let Some(spec) = specs().iter().find(|s| {
            s.point == point && s.generation.is_none_or(|g| g == gen) && s.hits.fetch_add(1, Ordering::SeqCst) + 1 == s.nth
        }) else {
            return;
        };
        match spec.action.as_str() {
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
}

#[cfg(not(feature = "fault-injection"))]
mod imp {
    #[inline(always)]
    pub fn hit(_point: &str) {}
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
}

pub use imp::{hanging, hit, no_adopt, no_future_write, set_generation};
