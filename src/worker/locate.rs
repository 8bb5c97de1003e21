//! Where the worker executable comes from, and whether it can be trusted to run as the caller.
//!
//! The worker runs with the caller's rights, so it is taken only from places the installation
//! owns: an explicit path (`WorkerOptions::worker_path`, `dyng_resources_options_t.worker_path`),
//! else `$DYNG_WORKER`, else [`installed_worker_paths`]: the library's private folder
//! (`LIBDIR/dyng/`, where `scripts/install.sh` puts it), then the folder of the library itself. Never `$PATH`, never a folder above the library's (a
//! program with libdyng in `/tmp/victim/` ran `/tmp/dyng-worker`, planted by another user).
//!
//! Every candidate must pass [`check_trusted`]: the file and each folder above it owned by the
//! caller or root, and none writable by others (a sticky folder such as `/tmp` excepted above the
//! file's own folder). A refused candidate is reported with the reason.

use crate::error::{Error, Result};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The worker's place relative to the folder of the library (or of a program that links dyng
/// statically): `<libdir>/dyng/dyng-worker`, the library's private folder, where
/// `scripts/install.sh` installs it (`PREFIX/lib/dyng/dyng-worker`, or under a multiarch libdir;
/// the installed `bin/dyng-worker` is a link to it, which the CLI in `bin/` finds beside itself).
pub const INSTALLED_RELATIVE: &str = "dyng/dyng-worker";

/// The folder of the shared object or program this code lives in (symbolic links resolved).
pub fn library_dir() -> Option<PathBuf> {
    // SAFETY: dladdr only reads loader tables; the address is a function of this crate.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(library_dir as *const libc::c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            use std::os::unix::ffi::OsStrExt;
            let bytes = std::ffi::CStr::from_ptr(info.dli_fname).to_bytes();
            let p = std::fs::canonicalize(std::ffi::OsStr::from_bytes(bytes)).ok()?;
            return p.parent().map(Path::to_path_buf);
        }
    }
    None
}

/// The places an installation puts the worker, in search order, for a library in `lib_dir`:
/// its private folder ([`INSTALLED_RELATIVE`]), then `lib_dir` itself (the installed `bin/`
/// beside `dyng`, or a build folder, where cargo puts `dyng-worker` beside `dyng` and
/// `libdyng.so`).
pub fn installed_worker_paths(lib_dir: &Path) -> Vec<PathBuf> {
    vec![lib_dir.join(INSTALLED_RELATIVE), lib_dir.join("dyng-worker")]
}

fn owner_ok(uid: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    uid == 0 || uid == unsafe { libc::geteuid() }
}

/// Refuses `path` (absolute, symbolic links resolved) unless it is a regular file that the
/// caller or root owns and others cannot write, in folders that the caller or root own and
/// others cannot write (a sticky folder above the file's own, such as `/tmp`, is fine: others
/// cannot replace what they do not own there). Group-writable files and folders are trusted, as
/// the system trusts its own (`/usr/local` on Debian is group `staff` writable).
pub fn check_trusted(path: &Path) -> std::result::Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if !owner_ok(meta.uid()) {
        return Err(format!("it is owned by uid {}, neither the caller nor root", meta.uid()));
    }
    if meta.permissions().mode() & 0o002 != 0 {
        return Err(format!("it is writable by others (mode {:04o})", meta.permissions().mode() & 0o7777));
    }
    for (i, dir) in path.ancestors().skip(1).enumerate() {
        let m = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mode = m.permissions().mode();
        if !owner_ok(m.uid()) {
            return Err(format!("its folder {} is owned by uid {}, neither the caller nor root", dir.display(), m.uid()));
        }
        let sticky = mode & 0o1000 != 0;
        if mode & 0o002 != 0 && (i == 0 || !sticky) {
            return Err(format!("its folder {} is writable by others (mode {:04o})", dir.display(), mode & 0o7777));
        }
    }
    Ok(())
}

/// Resolves the worker executable to an absolute path: `opt`, else `$DYNG_WORKER`, else the
/// installation's places (`installed_worker_paths` of `library_dir`); each candidate must
/// pass `check_trusted`. `NotSupported` lists what was tried and why each was refused.
pub fn resolve_worker_path(opt: Option<&Path>) -> Result<PathBuf> {
    let candidates: Vec<PathBuf> = match (opt, std::env::var_os("DYNG_WORKER")) {
        (Some(p), _) => vec![p.to_path_buf()],
        (None, Some(p)) => vec![PathBuf::from(p)],
        (None, None) => library_dir().map(|d| installed_worker_paths(&d)).unwrap_or_default(),
    };
    let mut tried = Vec::new();
    for c in candidates {
        match std::fs::canonicalize(&c) {
            Ok(abs) => match check_trusted(&abs) {
                Ok(()) => return Ok(abs),
                Err(why) if abs == c => tried.push(format!("{} (refused: {why})", c.display())),
                Err(why) => tried.push(format!("{} = {} (refused: {why})", c.display(), abs.display())),
            },
            Err(_) => tried.push(format!("{} (missing)", c.display())),
        }
    }
    if tried.iter().any(|t| t.contains("(refused:")) {
        return Err(Error::NotSupported(format!(
            "dyng worker: no trusted dyng-worker executable (tried {}); the worker runs as the caller, so it must be owned by the caller or root and not writable by others, nor any folder above it",
            tried.join(", ")
        )));
    }
    Err(Error::NotSupported(format!("dyng worker: no dyng-worker executable found (tried {})", tried.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_stays_inside_the_installation() {
        let got = installed_worker_paths(Path::new("/opt/dyng/lib"));
        assert_eq!(got, [PathBuf::from("/opt/dyng/lib/dyng/dyng-worker"), PathBuf::from("/opt/dyng/lib/dyng-worker")]);
        // Never the folder above the library's.
        assert!(!got.contains(&PathBuf::from("/opt/dyng/dyng-worker")));
    }

    #[test]
    fn folders_writable_by_others_are_refused() {
        let base = std::env::temp_dir().join(format!("dyng-locate-{}", std::process::id()));
        let open = base.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let f = open.join("dyng-worker");
        std::fs::write(&f, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_trusted(&f.canonicalize().unwrap()).unwrap_err();
        assert!(e.contains("writable by others (mode 0777)") && e.contains("open"), "{e}");
        // Sticky (as /tmp) is fine above the file's own folder, not as that folder.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(check_trusted(&f.canonicalize().unwrap()).unwrap_err().contains("writable by others"));
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        check_trusted(&f.canonicalize().unwrap()).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o757)).unwrap();
        assert!(check_trusted(&f.canonicalize().unwrap()).unwrap_err().contains("it is writable by others"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
