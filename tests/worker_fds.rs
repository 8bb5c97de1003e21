//! The worker inherits nothing of its host but stdio (`/dev/null`) and the protocol socket: host
//! fds without close-on-exec (a file at fd 50, a pipe at fd 251) used to reach it. Its own file
//! (one test) so that the fds it plants collide with no other test's.

mod worker_util;

use dyng::worker::Client;
use std::os::fd::AsRawFd;

#[test]
fn host_fds_do_not_reach_the_worker() {
    let dir = std::env::temp_dir().join(format!("dyng-fds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host-secret.txt");
    let file = std::fs::File::create(&path).unwrap();
    let mut pipe = [0i32; 2];
    // SAFETY: pipe fills two ints; dup2 onto unused numbers above what this process opened;
    // plain dup2 leaves close-on-exec off, as a careless host would.
    unsafe {
        assert_eq!(libc::pipe(pipe.as_mut_ptr()), 0);
        assert_eq!(libc::dup2(file.as_raw_fd(), 50), 50);
        assert_eq!(libc::dup2(pipe[0], 251), 251);
    }
    let c = Client::spawn(worker_util::opts()).unwrap();
    let wpid = c.worker_pid().unwrap();
    let fds: Vec<(String, String)> = std::fs::read_dir(format!("/proc/{wpid}/fd"))
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read_link(e.path()).map(|t| t.display().to_string()).unwrap_or_default()))
        .collect();
    let pipe_inode = std::fs::read_link(format!("/proc/self/fd/{}", pipe[0])).unwrap().display().to_string();
    for (fd, target) in &fds {
        assert!(fd != "50" && fd != "251", "worker fd {fd} -> {target}: {fds:?}");
        assert!(!target.contains("host-secret") && *target != pipe_inode, "worker fd {fd} -> {target}: {fds:?}");
    }
    // Its stdio is /dev/null and fd 3 the socket.
    for (fd, want) in [("0", "/dev/null"), ("1", "/dev/null"), ("2", "/dev/null"), ("3", "socket:")] {
        let t = &fds.iter().find(|(f, _)| f == fd).unwrap_or_else(|| panic!("no fd {fd}: {fds:?}")).1;
        assert!(t.starts_with(want), "fd {fd} -> {t}");
    }
    drop(c);
    // SAFETY: closing the fds opened above.
    unsafe {
        libc::close(50);
        libc::close(251);
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    std::fs::remove_dir_all(dir).ok();
}
