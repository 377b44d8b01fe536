//! The progress bar of a long conversion (indicatif), on stderr and only when stderr is
//! a terminal: scripts and logs see nothing.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shows `done` out of `total` bytes until `finished` is set.
pub fn bytes_bar(done: &AtomicU64, total: u64, finished: &AtomicBool) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("  converting {bar:30} {percent:>3}%  {binary_bytes_per_sec}  eta {eta}").unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    while !finished.load(Ordering::Relaxed) {
        bar.set_position(done.load(Ordering::Relaxed).min(total));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
