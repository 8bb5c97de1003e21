//! Progress bars on long steps, only when stderr is a terminal (silent in pipes and CI).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A spinner with `msg`, or a hidden bar when stderr is not a terminal.
pub fn spinner(msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("static template"));
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(100));
    pb
}

/// A bar over `len` steps.
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} [{elapsed}]").expect("static template"),
    );
    pb.set_message(msg.to_string());
    pb
}

/// Prints `line` on stderr: above the bar when it is drawn (so the two never share a line),
/// plainly when it is hidden (stderr is not a terminal), so that a log still gets every line.
pub fn eprint_line(pb: &ProgressBar, line: &str) {
    if pb.is_hidden() {
        eprintln!("{line}");
    } else {
        pb.println(line);
    }
}

/// Prints `line` on stdout with the bar cleared first and drawn again after, so that a result
/// line never shares a line with a spinner (hidden bars just print).
pub fn print_line(pb: &ProgressBar, line: &str) {
    pb.suspend(|| println!("{line}"));
}
