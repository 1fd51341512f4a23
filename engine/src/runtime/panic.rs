//! Panics inside models: the teardown marker, the panic hook that records what a failing
//! model thread was doing, and payloads whose destructors panic.
//!
//! The hook is installed by the first exploration, and again by the next exploration after
//! a model panic reached the thread root without passing through it (someone installed
//! another hook since, or the panic was a `resume_unwind`). It chains to the hook it
//! replaces for every thread that is not running model code: the test harness's output and
//! a hook the user installed stay as they were, and a user hook installed after an
//! exploration is wrapped by the next one (never dropped). Swapping hooks is not atomic, so
//! it is done only when needed.
//! For model threads it prints nothing (an exploration may panic thousands of times on its
//! way to a report); it keeps the message, location and an unresolved backtrace for the
//! failure, and tells the scheduler that the thread unwinds.
//!
//! A panic that never reaches the hook (`std::panic::resume_unwind`) still has its message
//! recovered from the payload when it is a string; its location is then the thread's last
//! switch point.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, PanicHookInfo, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::execution::Unwinding;
use crate::report::SourceLocation;

/// Payload of the unwinding that teardown starts in a thread of a failed execution. Never a
/// failure, and it poisons nothing.
#[derive(Debug)]
pub(crate) struct Abort;

/// Whether a panic payload is the teardown marker rather than a panic of the model.
pub fn is_abort(payload: &(dyn Any + Send)) -> bool {
    payload.is::<Abort>()
}

/// What is known of a panic that ended a thread body.
#[derive(Debug)]
pub(crate) struct PanicRecord {
    pub(crate) message: String,
    pub(crate) location: Option<SourceLocation>,
    pub(crate) backtrace: backtrace::Backtrace,
}

impl PanicRecord {
    /// The failure this panic is, in `thread`.
    pub(super) fn failure(self, thread: crate::report::ThreadInfo) -> super::FailureDraft {
        super::FailureDraft {
            kind: crate::schedule::FailureKind::Panic,
            message: self.message,
            thread: Some(thread),
            location: self.location,
            backtrace: Some(self.backtrace),
            threads: vec![],
        }
    }
}

std::thread_local! {
    /// The hook's record of the last panic of a model thread on this OS thread.
    static LAST_PANIC: RefCell<Option<PanicRecord>> = const { RefCell::new(None) };
    /// The panic a model thread on this OS thread was unwinding from when one of its
    /// destructors panicked too (for the report before the abort: see `abort.rs`).
    static CAUSE: RefCell<Option<PanicRecord>> = const { RefCell::new(None) };
}

/// The address of the hook this module installed last (0: none), to tell whether it is
/// still the one on top.
static OURS: AtomicUsize = AtomicUsize::new(0);

/// A model panic was seen that the hook did not record: check the hook again.
static MISSED: AtomicBool = AtomicBool::new(false);

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Puts the recording hook on top of the panic hooks, chaining to the one it replaces,
/// unless it is on top already.
pub fn install_hook() {
    let first = OURS.load(Ordering::Relaxed) == 0;
    if !first && !MISSED.swap(false, Ordering::Relaxed) {
        return;
    }
    if std::thread::panicking() {
        return; // std refuses to touch the hook while this thread unwinds
    }
    let current = std::panic::take_hook();
    if address(&current) == OURS.load(Ordering::Relaxed) {
        return std::panic::set_hook(current);
    }
    let hook: Hook = Box::new(move |info| {
        if super::host::is_fault_outside_coroutine(info) {
            warn_fault();
        }
        if !record(info) {
            current(info);
        }
    });
    OURS.store(address(&hook), Ordering::Relaxed);
    std::panic::set_hook(hook);
}

fn address(hook: &Hook) -> usize {
    std::ptr::from_ref::<dyn Fn(&PanicHookInfo<'_>) + Sync + Send>(hook.as_ref()).cast::<()>()
        as usize
}

/// Says which thread faulted, most likely by overflowing its stack, before the process dies
/// (std's own overflow message is not printed once the coroutine crate's handler is in).
fn warn_fault() {
    let thread = std::thread::current();
    let who = match super::current_context() {
        Some(ctx) => match ctx.exec.state.try_lock() {
            Some(st) => format!(
                "model thread {} (stack {} bytes; last switch point {})",
                st.thread_info(ctx.tid),
                st.stack_of(ctx.tid),
                st.threads[ctx.tid].pending.loc
            ),
            None => format!("model thread #{}", ctx.tid),
        },
        None => format!("thread '{}'", thread.name().unwrap_or("<unnamed>")),
    };
    let message = format!(
        "\ninterleave-test: {who} hit an invalid memory address on its OS thread, most likely \
         by overflowing its stack. Give it more: thread::Builder::stack_size for a spawned \
         model thread, Builder::stack_size (or {}) for every model thread. The process \
         cannot go on.\n",
        crate::settings::env::STACK_SIZE
    );
    use std::io::Write;
    let _ = std::io::stderr().write_all(message.as_bytes());
}

/// Records a panic of a model thread; `false` if the panicking thread runs no model code.
fn record(info: &PanicHookInfo<'_>) -> bool {
    let Some(ctx) = super::current_context() else {
        return false;
    };
    let record = PanicRecord {
        message: message_of(info.payload()),
        location: info.location().map(SourceLocation::from),
        backtrace: backtrace::Backtrace::new_unresolved(),
    };
    // The state is busy only if the runtime itself panicked while holding it.
    if let Some(mut st) = ctx.exec.state.try_lock() {
        if record.message == CLEANUP_PANIC {
            let (last, cause) = (LAST_PANIC.take(), CAUSE.take());
            super::abort::report(&ctx, &st, last.as_ref(), cause.as_ref());
        }
        let life = &mut st.threads[ctx.tid].life;
        // A destructor panics while the thread unwinds from its own panic: keep that.
        if !life.panic_starts()
            && life.unwinding() == Unwinding::Panic
            && record.message != CLEANUP_PANIC
        {
            CAUSE.set(LAST_PANIC.take());
        }
    }
    if record.message != CLEANUP_PANIC {
        LAST_PANIC.with(|last| *last.borrow_mut() = Some(record));
    }
    true
}

/// The message of the panic std raises when a destructor panics during unwinding, right
/// before it aborts the process (the hook reports it first: see `abort.rs`).
const CLEANUP_PANIC: &str = "panic in a destructor during cleanup";

/// The string a panic payload carries (`panic!`'s message), if it is one.
pub fn text_of(payload: &(dyn Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
}

/// The text of a panic payload: the string it carries, or a description of its type.
pub fn message_of(payload: &(dyn Any + Send)) -> String {
    text_of(payload).unwrap_or_else(|| {
        "the thread panicked with a payload that is not a string (std::panic::panic_any \
         or resume_unwind)"
            .to_owned()
    })
}

/// What is known of the panic whose `payload` just ended a thread body: the hook's record
/// if it is about this payload, otherwise what the payload itself says (a panic that
/// skipped the hook: `resume_unwind`).
pub(crate) fn take_last(payload: &(dyn Any + Send)) -> PanicRecord {
    let recorded = LAST_PANIC.with(|last| last.borrow_mut().take());
    if recorded.is_none() {
        MISSED.store(true, Ordering::Relaxed);
    }
    let from_payload = message_of(payload);
    match recorded {
        Some(r) if r.message == from_payload || !is_string(payload) => r,
        _ => PanicRecord {
            message: from_payload,
            location: super::current_context().map(|ctx| {
                let st = ctx.exec.state.lock();
                SourceLocation::from(st.threads[ctx.tid].pending.loc)
            }),
            backtrace: backtrace::Backtrace::new_unresolved(),
        },
    }
}

fn is_string(payload: &(dyn Any + Send)) -> bool {
    payload.is::<&str>() || payload.is::<String>()
}

/// Drops a panic payload whose destructor may itself panic: the new payload is dropped in
/// turn, a few times, then leaked.
pub(crate) fn drop_payload(payload: Box<dyn Any + Send>) {
    let mut payload = payload;
    for _ in 0..4 {
        match catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            Ok(()) => return,
            Err(next) => payload = next,
        }
    }
    std::mem::forget(payload);
}
