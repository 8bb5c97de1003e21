//! Test-only fault injection (spec 17.1): `DYNG_FAULT=<point>:<action>[:<nth>]`.
//!
//! Compiled in only with the `fault-injection` cargo feature, which refuses release builds; without
//! it [`hit`] is an empty inline function. Points are named W1-W9 (worker) and H1-H7 (host); each
//! process acts only on the points it reaches.

#[cfg(all(feature = "fault-injection", not(debug_assertions)))]
compile_error!("the fault-injection feature must never be enabled in release builds");

#[cfg(feature = "fault-injection")]
mod imp {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::OnceLock;

    static HANGING: AtomicBool = AtomicBool::new(false);
    static HITS: AtomicU32 = AtomicU32::new(0);

    fn spec() -> &'static Option<(String, String, u32)> {
        static SPEC: OnceLock<Option<(String, String, u32)>> = OnceLock::new();
        SPEC.get_or_init(|| {
            let v = std::env::var("DYNG_FAULT").ok()?;
            let mut it = v.split(':');
            let point = it.next()?.to_string();
            let action = it.next()?.to_string();
            let nth = it.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            Some((point, action, nth))
        })
    }

    pub fn hit(point: &str) {
        let Some((p, action, nth)) = spec() else { return };
        if p != point || HITS.fetch_add(1, Ordering::SeqCst) + 1 != *nth {
            return;
        }
        match action.as_str() {
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
}

#[cfg(not(feature = "fault-injection"))]
mod imp {
    #[inline(always)]
    pub fn hit(_point: &str) {}
    #[inline(always)]
    pub fn hanging() -> bool {
        false
    }
    #[inline(always)]
    pub fn no_future_write() -> bool {
        false
    }
}

pub use imp::{hanging, hit, no_future_write};
