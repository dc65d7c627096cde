//! Ctrl-C during an interpreter run: while a [`Guard`] lives, SIGINT sets the run's stop flag
//! ([`tessel_interp::Limits::stop`]), so the interpreter stops at its next op and the command ends with a
//! message and exit status 130; a second Ctrl-C ends the process at once, as if no handler were installed. Outside
//! a guard (compiling, a GPU launch) SIGINT keeps its default action.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

/// The stop flag SIGINT sets (made before the handler is installed: the handler only loads and stores it).
static STOP: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// How many guards live (the handler is installed by the first and removed by the last).
static GUARDS: Mutex<usize> = Mutex::new(0);

/// While it lives, Ctrl-C sets [`Guard::flag`] instead of ending the process.
pub(super) struct Guard(());

impl Guard {
    pub(super) fn install() -> Guard {
        let mut n = GUARDS.lock().unwrap_or_else(|e| e.into_inner());
        if *n == 0 {
            STOP.store(false, Ordering::SeqCst);
            handler::install();
        }
        *n += 1;
        Guard(())
    }

    /// The flag the interpreter checks before each op.
    pub(super) fn flag(&self) -> Arc<AtomicBool> {
        STOP.clone()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut n = GUARDS.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        if *n == 0 {
            handler::remove();
        }
    }
}

#[cfg(unix)]
mod handler {
    use std::sync::LazyLock;
    use std::sync::atomic::Ordering;

    extern "C" fn on_sigint(_: libc::c_int) {
        // Only async-signal-safe work: an atomic swap, and on a second Ctrl-C the default action again.
        if super::STOP.swap(true, Ordering::SeqCst) {
            // SAFETY: `signal` and `raise` are async-signal-safe; SIG_DFL ends the process.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::raise(libc::SIGINT);
            }
        }
    }

    pub(super) fn install() {
        LazyLock::force(&super::STOP);
        let handler = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only touches an initialized atomic and calls async-signal-safe functions.
        unsafe { libc::signal(libc::SIGINT, handler) };
    }

    pub(super) fn remove() {
        // SAFETY: restores the default action.
        unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    }
}

#[cfg(not(unix))]
mod handler {
    /// Elsewhere Ctrl-C keeps its default action (the process ends).
    pub(super) fn install() {}
    pub(super) fn remove() {}
}
