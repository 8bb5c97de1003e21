//! Thin, checked wrappers over the Linux calls the protocol needs: SEQPACKET socket pairs with
//! `SCM_RIGHTS`, memfds and seals, shared mappings, and pidfds.
//!
//! Every wrapper returns `io::Result` and owns what it creates (`OwnedFd`, [`Mapping`]), so a
//! failure on any path closes fds and unmaps memory by drop.

use super::frame::{MAX_FDS, MAX_FRAME};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// `socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC)` with 256 KiB buffers on both ends.
pub fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    cvt(unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) })?;
    // SAFETY: socketpair succeeded, so both fds are open and owned by nobody else.
    let (a, b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [&a, &b] {
        for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
            let v: libc::c_int = 256 * 1024;
            // SAFETY: valid socket fd and a pointer to an int of the stated size.
            cvt(unsafe {
                libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, opt, &v as *const _ as *const libc::c_void, 4)
            })?;
        }
    }
    Ok((a, b))
}

/// Marks every fd from `first` up close-on-exec, so that an `exec` that follows closes them all
/// (a child's inherited fds must not reach the worker). Async-signal-safe (it runs between fork
/// and exec): `close_range(CLOSE_RANGE_CLOEXEC)` (Linux 5.11), else `fcntl` on every fd below
/// the soft `RLIMIT_NOFILE` (at most 2^20). Marking rather than closing keeps the pipe through
/// which the standard library reports a failed `exec`, itself close-on-exec.
pub fn cloexec_from(first: u32) {
    // SAFETY: close_range takes plain integers; a kernel without it (or the flag) says ENOSYS or
    // EINVAL and changes nothing.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
    if r != 0 {
        cloexec_each_from(first);
    }
}

/// [`cloexec_from`] for kernels without `close_range(CLOSE_RANGE_CLOEXEC)`.
fn cloexec_each_from(first: u32) {
    // SAFETY: an all-zero rlimit is valid for getrlimit to fill.
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to an rlimit.
    let limit = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0 { rl.rlim_cur.min(1 << 20) } else { 1 << 20 };
    for fd in first as u64..limit {
        // SAFETY: fcntl on a closed fd is EBADF and harmless.
        unsafe { libc::fcntl(fd as libc::c_int, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// One received record.
pub struct Received {
    pub len: usize,
    pub fds: Vec<OwnedFd>,
    pub truncated: bool,
    pub ctruncated: bool,
}

const CMSG_SPACE: usize = 64 + MAX_FDS * 4;

/// Sends one record with `fds` attached; `MSG_NOSIGNAL` so a dead peer gives `EPIPE`, not SIGPIPE.
pub fn send_record(sock: RawFd, data: &[u8], fds: &[RawFd], dontwait: bool) -> io::Result<()> {
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    let mut cbuf = [0u64; CMSG_SPACE / 8];
    // SAFETY: an all-zero msghdr is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        let bytes = std::mem::size_of_val(fds) as u32;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        // SAFETY: CMSG_SPACE is a pure computation.
        msg.msg_controllen = unsafe { libc::CMSG_SPACE(bytes) } as _;
        // SAFETY: the control buffer is large enough for one cmsg with up to MAX_FDS fds (it is
        // 8-byte aligned and CMSG_SPACE(4 * MAX_FDS) <= its size).
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(bytes) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c) as *mut RawFd, fds.len());
        }
    }
    let flags = libc::MSG_NOSIGNAL | if dontwait { libc::MSG_DONTWAIT } else { 0 };
    loop {
        // SAFETY: msg points at live buffers for the duration of the call.
        let r = unsafe { libc::sendmsg(sock, &msg, flags) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Receives one record into `buf` (at least `MAX_FRAME` bytes). `len == 0` with no fds means EOF.
/// Every fd that arrived is owned by the result, whatever else is wrong with the record.
pub fn recv_record(sock: RawFd, buf: &mut [u8], dontwait: bool) -> io::Result<Received> {
    debug_assert!(buf.len() >= MAX_FRAME);
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    let mut cbuf = [0u64; CMSG_SPACE / 8];
    // SAFETY: an all-zero msghdr is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    let flags = libc::MSG_CMSG_CLOEXEC | if dontwait { libc::MSG_DONTWAIT } else { 0 };
    let len = loop {
        // SAFETY: msg points at live buffers for the duration of the call.
        let r = unsafe { libc::recvmsg(sock, &mut msg, flags) };
        if r >= 0 {
            break r as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut fds = Vec::new();
    // SAFETY: the kernel filled msg_control; the CMSG macros walk it within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c) as *const RawFd;
                let n = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                for i in 0..n {
                    // Each fd was installed in this process by the kernel and belongs to nobody else.
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(Received {
        len,
        fds,
        truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
        ctruncated: msg.msg_flags & libc::MSG_CTRUNC != 0,
    })
}

/// Polls `fds` for readability (or hang-up) for up to `timeout_ms` (-1 = forever). Returns the
/// `revents` of each.
pub fn poll_in(fds: &[RawFd], timeout_ms: i32) -> io::Result<Vec<i16>> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd { fd, events: libc::POLLIN | libc::POLLRDHUP, revents: 0 })
        .collect();
    // SAFETY: `p` is a valid array of pollfd of the given length.
    let r = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![0; fds.len()]);
        }
        return Err(e);
    }
    Ok(p.iter().map(|x| x.revents).collect())
}

/// `memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING)`.
pub fn memfd(name: &str) -> io::Result<OwnedFd> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let fd = cvt(unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) })?;
    // SAFETY: a fresh fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn ftruncate(fd: &OwnedFd, len: u64) -> io::Result<()> {
    // SAFETY: plain syscall on an owned fd.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) }).map(drop)
}

pub fn fstat_size(fd: RawFd) -> io::Result<u64> {
    // SAFETY: zeroed stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and out-pointer.
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st.st_size as u64)
}

pub const SEAL_SEAL: i32 = libc::F_SEAL_SEAL;
pub const SEAL_SHRINK: i32 = libc::F_SEAL_SHRINK;
pub const SEAL_GROW: i32 = libc::F_SEAL_GROW;
pub const SEAL_WRITE: i32 = libc::F_SEAL_WRITE;
pub const SEAL_FUTURE_WRITE: i32 = 0x0010;

pub fn add_seals(fd: RawFd, seals: i32) -> io::Result<()> {
    // A fork between a writable mmap and its MADV_DONTFORK (see `Mapping::new`) leaves a copy of
    // the mapping in the child until it execs or exits, and F_SEAL_WRITE fails with EBUSY
    // meanwhile: retry for up to about 100 ms before giving up.
    let mut tries = 0;
    loop {
        // SAFETY: fcntl with integer argument.
        match cvt(unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) }) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            r => return r.map(drop),
        }
    }
}

pub fn get_seals(fd: RawFd) -> io::Result<i32> {
    // SAFETY: fcntl without argument.
    cvt(unsafe { libc::fcntl(fd, libc::F_GET_SEALS) })
}

/// A `MAP_SHARED` mapping, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; concurrent access rules are those of the slices handed out.
unsafe impl Send for Mapping {}
// SAFETY: as above; shared access only reads (host) or is serialised by the pool (worker).
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd`; `writable` selects `PROT_READ | PROT_WRITE`.
    pub fn new(fd: RawFd, len: usize, writable: bool) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a fresh mapping chosen by the kernel; the fd is valid for the call.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = Mapping { ptr: p as *mut u8, len };
        if writable {
            // A child forked by another thread of the program would inherit a writable shared
            // mapping, and while it lives the kernel refuses F_SEAL_WRITE (EBUSY): writable
            // mappings stay out of children.
            // SAFETY: advice on the mapping just created, for its whole length.
            cvt(unsafe { libc::madvise(p, len, libc::MADV_DONTFORK) })?;
        }
        Ok(map)
    }
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping is live for `len` bytes while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    /// Writable bytes; only for mappings created writable, by their single writer.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`; `&mut self` gives exclusive access within this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mmap returned.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// `fcntl(F_DUPFD_CLOEXEC)`.
pub fn dup(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl with an integer argument; the result is a fresh fd owned by nobody else.
    let r = cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Eight random bytes from the kernel (spawn ids).
pub fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: writes at most 8 bytes into `v`.
    let r = unsafe { libc::getrandom(&mut v as *mut u64 as *mut libc::c_void, 8, 0) };
    if r != 8 {
        // Uniqueness, not secrecy, is what spawn ids need.
        v = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
            ^ ((std::process::id() as u64) << 32);
    }
    v.max(1)
}

/// `pidfd_open(pid, 0)`.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: raw syscall with integer arguments.
    let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// `pidfd_send_signal(pidfd, sig)`: cannot hit a reused pid.
pub fn pidfd_signal(pidfd: RawFd, sig: i32) -> io::Result<()> {
    // SAFETY: raw syscall; a null siginfo is allowed.
    let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd, sig, std::ptr::null::<u8>(), 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Field 22 (starttime) of `/proc/<pid>/stat`, to rule out pid reuse.
pub fn process_starttime(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses; fields resume after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// The pid and uid of the peer of a UNIX socket (`SO_PEERCRED`).
pub fn peer_cred(sock: RawFd) -> io::Result<(i32, u32)> {
    // SAFETY: zeroed ucred is a valid out-buffer.
    let mut c: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: valid fd, out-buffer and length.
    cvt(unsafe { libc::getsockopt(sock, libc::SOL_SOCKET, libc::SO_PEERCRED, &mut c as *mut _ as *mut libc::c_void, &mut len) })?;
    Ok((c.pid, c.uid))
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_fds_and_eof_is_visible() {
        let (a, b) = seqpacket_pair().unwrap();
        let m = memfd("dyng:test").unwrap();
        send_record(a.as_raw_fd(), b"hello", &[m.as_raw_fd()], false).unwrap();
        let mut buf = vec![0u8; MAX_FRAME];
        let r = recv_record(b.as_raw_fd(), &mut buf, false).unwrap();
        assert_eq!((r.len, r.fds.len(), r.truncated, r.ctruncated), (5, 1, false, false));
        drop(a);
        let r = recv_record(b.as_raw_fd(), &mut buf, false).unwrap();
        assert_eq!((r.len, r.fds.len()), (0, 0));
    }

    #[test]
    fn seals_block_resizing() {
        let m = memfd("dyng:test").unwrap();
        ftruncate(&m, 8192).unwrap();
        add_seals(m.as_raw_fd(), SEAL_SHRINK | SEAL_GROW).unwrap();
        assert!(ftruncate(&m, 4096).is_err());
        assert_eq!(fstat_size(m.as_raw_fd()).unwrap(), 8192);
        assert_eq!(get_seals(m.as_raw_fd()).unwrap() & (SEAL_SHRINK | SEAL_GROW), SEAL_SHRINK | SEAL_GROW);
    }

    #[test]
    fn the_fallback_marks_every_fd_close_on_exec() {
        let (a, _b) = seqpacket_pair().unwrap();
        // SAFETY: dup without close-on-exec, as a careless host makes them.
        let fd = unsafe { libc::dup(a.as_raw_fd()) };
        assert!(fd > 0);
        // SAFETY: fcntl queries on an open fd.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC, 0);
        cloexec_each_from(fd as u32);
        // SAFETY: as above; closing the dup made here.
        unsafe {
            assert_eq!(libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
            libc::close(fd);
        }
    }

    #[test]
    fn starttime_of_self_is_known() {
        assert!(process_starttime(std::process::id() as i32).is_some());
    }
}
