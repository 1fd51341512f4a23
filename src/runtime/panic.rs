//! Panics inside models: the abort marker that tears an execution down, and the panic hook
//! that records what a failing model thread was doing.
//!
//! The hook is installed once per process and chains to the previous one for every thread
//! that is not running model code, so the test harness's own output is unchanged. For model
//! threads it prints nothing (an exploration may panic thousands of times on its way to a
//! report) and keeps the message, location and an unresolved backtrace for the failure.

use std::cell::RefCell;
use std::sync::Once;

use crate::report::SourceLocation;

/// Payload of the unwinding that ends a thread of an execution that is over. Never a failure.
#[derive(Debug)]
pub(crate) struct Abort;

/// Whether a panic payload is the teardown marker rather than a panic of the model.
pub(crate) fn is_abort(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<Abort>()
}

/// What the hook saw of the last panic on this thread.
#[derive(Debug)]
pub(crate) struct PanicRecord {
    pub(crate) message: String,
    pub(crate) location: Option<SourceLocation>,
    pub(crate) backtrace: backtrace::Backtrace,
}

thread_local! {
    static LAST_PANIC: RefCell<Option<PanicRecord>> = const { RefCell::new(None) };
}

/// Installs the recording hook (once per process).
pub(crate) fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !super::in_model() {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "Box<dyn Any>".to_owned());
            let record = PanicRecord {
                message,
                location: info.location().map(SourceLocation::from),
                backtrace: backtrace::Backtrace::new_unresolved(),
            };
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(record));
        }));
    });
}

/// The record of the panic this thread is unwinding from, if the hook saw one.
pub(crate) fn take_last() -> Option<PanicRecord> {
    LAST_PANIC.with(|last| last.borrow_mut().take())
}
