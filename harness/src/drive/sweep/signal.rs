//! SIGINT (Ctrl-C) and SIGTERM (what CI sends when a job times out) stop a sweep
//! the same way: it finishes the runs in hand, records them, writes its summaries
//! (which say it was cut short) and exits with the interrupted code.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the sweep to stop (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Which signal stopped a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// The signal received so far, if any.
pub fn received() -> Option<Signal> {
    match RECEIVED.load(Ordering::SeqCst) {
        libc::SIGINT => Some(Signal::Interrupt),
        libc::SIGTERM => Some(Signal::Terminate),
        _ => None,
    }
}

/// Catch SIGINT and SIGTERM for the rest of the process (see the module doc).
/// Returns once both handlers are installed, so a signal sent right after this
/// call is never lost to the default action.
pub fn catch_interrupts() {
    let (ready, installed) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            let _ = ready.send(());
            return;
        };
        rt.block_on(async move {
            let (Ok(mut interrupt), Ok(mut terminate)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) else {
                let _ = ready.send(());
                return;
            };
            let _ = ready.send(());
            loop {
                let signo = tokio::select! {
                    _ = interrupt.recv() => libc::SIGINT,
                    _ = terminate.recv() => libc::SIGTERM,
                };
                if RECEIVED.swap(signo, Ordering::SeqCst) == 0 {
                    let name = if signo == libc::SIGINT {
                        "SIGINT"
                    } else {
                        "SIGTERM"
                    };
                    // Above the progress bar, which is still drawn.
                    crate::drive::progress::eprintln(&format!(
                        "{name}: finishing the runs in hand, then writing the summary"
                    ));
                }
            }
        });
    });
    let _ = installed.recv();
}
