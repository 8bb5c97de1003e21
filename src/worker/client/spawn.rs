//! Starting a worker: the spawner thread (every fork on one long-lived thread), the child's
//! set-up, the handshake, burying a dead worker and starting the next one, the platform probe.

use super::*;

/// The spawner thread (spec 2.2): `PR_SET_PDEATHSIG` fires when the thread that forked exits, so
/// every fork happens on this one long-lived thread.
pub(super) type SpawnJob = Box<dyn FnOnce() + Send>;

/// The spawner's queue, starting the thread on first use (and again if the system refused it).
pub(super) fn spawner() -> Result<mpsc::Sender<SpawnJob>> {
    static TX: Mutex<Option<mpsc::Sender<SpawnJob>>> = Mutex::new(None);
    let mut slot = TX.lock();
    if let Some(tx) = &*slot {
        return Ok(tx.clone());
    }
    let (tx, rx) = mpsc::channel::<SpawnJob>();
    std::thread::Builder::new()
        .name("dyng-spawner".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .map_err(|e| Error::Resource(format!("dyng worker: cannot start the spawner thread: {e}")))?;
    *slot = Some(tx.clone());
    Ok(tx)
}

pub(super) fn on_spawner<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    spawner()?
        .send(Box::new(move || {
            let _ = tx.send(f());
        }))
        .map_err(|_| Error::Internal("the dyng spawner thread is gone".into()))?;
    rx.recv().map_err(|_| Error::Internal("the dyng spawner thread is gone".into()))
}

impl Client {
    pub(super) fn start(&self, core: &mut Core) -> Result<Conn> {
        let path = resolve_worker_path(self.opts.worker_path.as_deref())?;
        let generation = self.counters.generation.load(Ordering::SeqCst) + 1;
        let (host_end, child_end) = sys::seqpacket_pair().map_err(|e| Error::Io { path: "socketpair".into(), source: e })?;
        let env = self.opts.env.clone();
        let parent = std::process::id() as i32;
        let starttime = sys::process_starttime(parent).unwrap_or(0);
        let child = on_spawner(move || -> std::io::Result<Child> {
            let child_raw = child_end.as_raw_fd();
            let mut cmd = Command::new(&path);
            cmd.env("DYNG_WORKER_FD", "3")
                .env("DYNG_PARENT_PID", parent.to_string())
                .env("DYNG_PARENT_STARTTIME", starttime.to_string())
                .env("DYNG_PROTO", "1")
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // SAFETY: the closure runs in the forked child before exec and only makes
            // async-signal-safe calls (dup2, fcntl, close_range, getrlimit, setsid, prctl,
            // getppid, _exit).
            unsafe {
                use std::os::unix::process::CommandExt;
                cmd.pre_exec(move || {
                    if libc::dup2(child_raw, 3) < 0 || libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The worker gets stdio (/dev/null) and the protocol socket at fd 3, nothing
                    // of the host's: a host fd without close-on-exec would leak into it.
                    sys::cloexec_from(4);
                    libc::setsid();
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(0);
                    }
                    Ok(())
                });
            }
            let child = cmd.spawn();
            drop(child_end);
            child
        })?
        .map_err(|e| match e.raw_os_error() {
            // fork refused: a process limit or memory, not a file problem.
            Some(libc::EAGAIN | libc::ENOMEM) => Error::Resource(format!("dyng worker: cannot start dyng-worker: {e}")),
            _ => Error::Io { path: "dyng worker: spawning dyng-worker".into(), source: e },
        })?;
        let mut child = child;
        let pidfd = match sys::pidfd_open(child.id() as i32) {
            Ok(p) => p,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::NotSupported(format!("dyng worker: pidfd_open: {e}")));
            }
        };
        fault::hit("H1");
        match self.handshake(core, &host_end, &pidfd, &child, generation) {
            Ok((spawn_id, caps)) => {
                self.counters.generation.store(generation, Ordering::SeqCst);
                let sock = Arc::new(host_end);
                let sink = Arc::new(AckSink { sock: sock.clone(), spawn_id, generation, counters: self.counters.clone() });
                Ok(Conn { sock, child, pidfd, spawn_id, generation, caps, sink })
            }
            Err(e) => {
                let _ = sys::pidfd_signal(pidfd.as_raw_fd(), libc::SIGKILL);
                let _ = child.wait();
                Err(e)
            }
        }
    }

    pub(super) fn handshake(&self, core: &mut Core, sock: &OwnedFd, pidfd: &OwnedFd, child: &Child, generation: u32) -> Result<(u64, u64)> {
        let deadline = Instant::now() + self.opts.spawn_timeout;
        let (h, body) = recv_until(sock, pidfd, &mut core.buf, deadline, "HELLO")?;
        if h.msg_type != msg::HELLO {
            return Err(protocol(format!("expected HELLO, got type {:#x}", h.msg_type)));
        }
        let hello = Hello::get(&mut Dec::new(&body))?;
        if hello.build_id != crate::worker::server::build_id() && !self.opts.allow_build_skew {
            return Err(protocol("the worker comes from another build of dyng"));
        }
        // SO_PEERCRED of a socketpair names the process that created the pair (this one), not
        // the child, so the spawned pid is checked through HELLO and the uid through the socket.
        let (pid, uid) = sys::peer_cred(sock.as_raw_fd()).map_err(|e| protocol(format!("SO_PEERCRED: {e}")))?;
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        if hello.worker_pid != child.id() || pid as u32 != std::process::id() || uid != me {
            return Err(protocol(format!(
                "HELLO from pid {} (socket peer pid {pid} uid {uid}), not the spawned worker {}",
                hello.worker_pid,
                child.id()
            )));
        }
        let spawn_id = sys::random_u64();
        let w = Welcome {
            spawn_id,
            generation,
            max_outstanding: 1,
            max_lent_bytes: self.opts.max_lent_bytes,
            lend_ttl_ms: wire_ms(self.opts.lend_ttl),
            heartbeat_ms: wire_ms(self.opts.heartbeat),
            log_rate_per_s: 0,
            strict_flags: if self.opts.checksums { STRICT_CHECKSUMS } else { 0 },
            backend: self.opts.wire_backend(),
            next_result_id: core.max_result_id + 1,
        };
        // The sequential engine is an extension value: a worker without it gets the spec's CPU.
        let w = Welcome { backend: if w.backend == BACKEND_SEQUENTIAL && hello.caps & CAP_ADOPT == 0 { BACKEND_CPU } else { w.backend }, ..w };
        let mut e = Enc::default();
        w.put(&mut e);
        let f = encode_frame(Header { msg_type: msg::WELCOME, spawn_id, generation, ..Default::default() }, &e.0, 0)?;
        sys::send_record(sock.as_raw_fd(), &f, &[], false).map_err(|e| worker_lost(format!("sending WELCOME: {e}")))?;
        let (h, body) = recv_until(sock, pidfd, &mut core.buf, deadline, "READY")?;
        if h.msg_type != msg::READY || h.spawn_id != spawn_id {
            return Err(protocol(format!("expected READY, got type {:#x}", h.msg_type)));
        }
        Ready::get(&mut Dec::new(&body))?;
        Ok((spawn_id, hello.caps))
    }

    /// Kills (if needed) and reaps the worker; records the death for the crash-loop guard.
    pub(super) fn bury(&self, core: &mut Core) {
        if let Some(mut conn) = core.conn.take() {
            let _ = sys::pidfd_signal(conn.pidfd.as_raw_fd(), libc::SIGKILL);
            let _ = conn.child.wait();
            let now = Instant::now();
            core.deaths.push_back(now);
            while core.deaths.front().is_some_and(|t| now.duration_since(*t) > self.opts.crash_loop_window) {
                core.deaths.pop_front();
            }
            if core.deaths.len() >= self.opts.crash_loop_deaths {
                core.unstable = true;
            }
        }
    }

    /// Makes sure a worker runs, respawning and replaying the journal if the last one died. A
    /// replacement that dies while replaying the journal (not while replaying the newest batch,
    /// which makes that batch a poison batch) is replaced again, until the crash-loop guard
    /// declares the worker unstable.
    pub(super) fn ensure_live(&self, core: &mut Core) -> Result<()> {
        loop {
            if core.conn.is_some() {
                return Ok(());
            }
            if core.unstable {
                return Err(worker_lost(format!(
                    "unstable: the worker died {} times within {} s; create a new resources handle",
                    self.opts.crash_loop_deaths,
                    self.opts.crash_loop_window.as_secs()
                )));
            }
            let conn = self.start(core)?;
            core.conn = Some(conn);
            self.counters.restarts.fetch_add(1, Ordering::SeqCst);
            if !self.opts.journal {
                core.journal = Journal::default();
                core.graph = None;
                core.epoch = 0;
                return Ok(());
            }
            let batches = core.journal.batches.len();
            match self.replay(core) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let died_mid_replay = e.kind() == crate::ErrorKind::WorkerLost
                        && core.conn.is_none()
                        && core.journal.batches.len() == batches
                        && core.journal.base.is_some();
                    if !died_mid_replay {
                        return Err(e);
                    }
                }
            }
        }
    }
}

/// Waits for one handshake record, bounded by `deadline`, noticing a dead child.
pub(super) fn recv_until(sock: &OwnedFd, pidfd: &OwnedFd, buf: &mut [u8], deadline: Instant, what: &str) -> Result<(Header, Vec<u8>)> {
    loop {
        let ms = deadline.saturating_duration_since(Instant::now()).as_millis() as i32;
        if ms <= 0 {
            return Err(Error::Timeout(format!("dyng worker: no {what} within the spawn timeout")));
        }
        let rev = sys::poll_in(&[sock.as_raw_fd(), pidfd.as_raw_fd()], ms).map_err(|e| Error::Io { path: "poll".into(), source: e })?;
        if rev[0] != 0 {
            let r = sys::recv_record(sock.as_raw_fd(), buf, true).map_err(|e| worker_lost(format!("recv during handshake: {e}")))?;
            if r.len == 0 && r.fds.is_empty() {
                return Err(worker_lost(format!("the worker exited before {what}")));
            }
            let (h, body) = decode_frame(&buf[..r.len], r.fds.len())?;
            return Ok((h, body.to_vec()));
        }
        if rev[1] != 0 {
            return Err(worker_lost(format!("the worker exited before {what}")));
        }
    }
}

/// Probes the kernel features worker isolation needs (1.4), not the kernel version.
pub(crate) fn probe_platform() -> Result<()> {
    let unsupported = |what: &str, e: std::io::Error| Error::NotSupported(format!("dyng worker: {what} is unavailable: {e}"));
    sys::memfd("dyng:probe").map_err(|e| unsupported("memfd_create(MFD_ALLOW_SEALING)", e))?;
    sys::seqpacket_pair().map_err(|e| unsupported("AF_UNIX/SOCK_SEQPACKET", e))?;
    sys::pidfd_open(std::process::id() as i32).map_err(|e| unsupported("pidfd_open", e))?;
    Ok(())
}
