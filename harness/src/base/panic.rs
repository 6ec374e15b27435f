//! Panics inside a run (a model bug, a checker bug) are caught and reported as an
//! outcome; the default hook's stderr noise is kept out of the way while we do.
//! Its own module because both the runner and the checkers catch panics, and
//! neither should reach into the other for it.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CAPTURING: Cell<u32> = const { Cell::new(0) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) > 0 {
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                // The first panic is the cause; later ones (a runtime shutting down
                // because of it) only echo it.
                LAST.with(|last| {
                    let mut last = last.borrow_mut();
                    if last.is_none() {
                        *last = Some(format!("{}{location}", payload_text(info.payload())));
                    }
                });
            } else {
                default(info);
            }
        }));
    });
}

fn payload_text(payload: &dyn std::any::Any) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

/// Run `f`; a panic comes back as `Err(message with location)`.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    CAPTURING.with(|c| c.set(c.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| {
        LAST.with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| payload_text(payload.as_ref()))
    })
}

/// Forget any panic message kept from an earlier run on this thread. A panic that
/// tokio caught in a task surfaces one step later, so messages are kept across
/// steps, but never across runs.
pub fn reset() {
    LAST.with(|last| last.borrow_mut().take());
}
