//! `dyng`: the command-line driver.
//!
//! `dyng mosp` and `dyng prep` are drop-in replacements for the original `mosp` and `mospPrep`
//! drivers (same files, same report lines); `dyng demo` runs the main job on the bundled US
//! highway network; `dyng bench` measures. Errors go to stderr as `Error: ...` with exit code 1;
//! usage errors exit 2 (clap's, and options the input cannot honour, found after reading it).

mod bench;
mod demo;
mod fmt;
mod isolated;
mod mosp;
mod prep;
mod progress;
mod validate;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "dyng", version, about = "Keep shortest-path trees up to date on dynamic graphs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Update K SSSP trees after a change batch and compute the MOSP (drop-in for `mosp`).
    Mosp(mosp::MospArgs),
    /// Prepare inputs: convert, generate trees, batches and expected outputs (drop-in for `mospPrep`).
    #[command(subcommand)]
    Prep(prep::PrepCommand),
    /// Run the main job on the bundled US highway network and print a summary.
    Demo(demo::DemoArgs),
    /// Measure updates against recomputing (writes bench-results/<suite>.{json,md,svg}).
    Bench(bench::BenchArgs),
}

/// Why a command failed: a usage error found after parsing (an option the input cannot honour;
/// exit 2, like clap's own), or any other error (exit 1).
#[derive(Debug)]
pub enum Failure {
    Usage(String),
    Error(dyng::Error),
}

impl From<dyng::Error> for Failure {
    fn from(e: dyng::Error) -> Self {
        Failure::Error(e)
    }
}

impl Failure {
    /// The exit code: 2 for usage errors, 1 otherwise.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Error(_) => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(m) => f.write_str(m),
            Failure::Error(e) => write!(f, "{e}"),
        }
    }
}

/// Engine selection shared by the subcommands.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BackendArg {
    Sequential,
    Parallel,
    Cuda,
}

impl BackendArg {
    /// The library's engine of this choice.
    pub fn backend(self) -> dyng::Backend {
        match self {
            BackendArg::Sequential => dyng::Backend::Sequential,
            BackendArg::Parallel => dyng::Backend::Parallel,
            BackendArg::Cuda => dyng::Backend::Cuda,
        }
    }
}

/// Builds the resources handle for `--backend` and `--threads`.
pub fn resources(backend: BackendArg, threads: usize) -> dyng::Result<dyng::Resources> {
    dyng::Resources::new(&dyng::ResourcesOptions {
        backend: backend.backend(),
        num_threads: threads,
        ..Default::default()
    })
}

/// The repository this program was built from (its package is `cli/`, one below the root): where
/// the bundled data is found when the working directory has no `data/`.
pub fn repo_dir() -> &'static std::path::Path {
    let cli = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    cli.parent().unwrap_or(cli)
}

/// Blocks up to 32 MiB come from the heap, where a freed one is reused, not from fresh pages
/// each (glibc's default past its adaptive threshold): on two threads those pages' first faults
/// contend in the kernel (docs/performance.md). A setting of this program's, not the library's.
fn keep_blocks_in_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets a parameter of glibc's allocator before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

fn main() -> ExitCode {
    // Like the original C++ drivers, end quietly when the reader of stdout goes away
    // (`dyng ... | head`) instead of panicking on a failed print.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    keep_blocks_in_heap();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Mosp(args) => mosp::run(args),
        Command::Prep(cmd) => prep::run(cmd).map_err(Failure::from),
        Command::Demo(args) => demo::run(args).map_err(Failure::from),
        Command::Bench(args) => bench::run(args).map_err(Failure::from),
    };
    match outcome {
        Ok(code) => code,
        Err(f) => {
            eprintln!("Error: {f}");
            ExitCode::from(f.code())
        }
    }
}
