//! The last report of a process that Rust is about to abort: a destructor panicked while its
//! model thread unwound. A panic that escapes a destructor during unwinding cannot be
//! caught, so no `Failure` can be returned; the panic hook (`panic.rs`) runs first, and
//! reports it here as a failure of the model on stderr: which thread, whose destructor
//! panicked where, why the thread was unwinding (the execution's failure, if teardown
//! unwound it), how to fix it, and the schedule so far, which the driver writes, and
//! stores in the test's regression corpus if there is one, through [`Rescue`] (the runtime
//! knows the decisions; only the driver knows the run and the schedule format).

use std::fmt::Write as _;
use std::sync::Arc;

use super::execution::{ExecState, Unwinding};
use super::panic::PanicRecord;
use super::{Context, DecisionRecord, teardown};

/// What the driver does with the schedule of an execution whose process is about to abort.
pub trait Rescue: Send + Sync + std::fmt::Debug {
    /// Writes the schedule of execution `iteration` of the run, whose decisions so far are
    /// `decisions` (thread names by id in `names`), and returns the text to print: the
    /// schedule's JSON and where it was stored. Runs in the panic hook, right before the
    /// abort: it must not panic.
    fn rescue(
        &self,
        iteration: u64,
        decisions: &[DecisionRecord],
        names: &[Option<String>],
    ) -> String;

    /// The test (or named model) the run belongs to, if it is named.
    fn test(&self) -> Option<&str>;
}

/// What the driver tells an execution about itself, for [`Rescue`].
#[derive(Clone, Debug)]
pub struct Origin {
    /// Where the schedule goes.
    pub rescue: Arc<dyn Rescue>,
    /// The execution's index in its run.
    pub iteration: u64,
}

/// Reports that a destructor of model thread `ctx.tid` panicked while the thread unwound
/// (std aborts the process right after the hook that calls this). `destructor` is the
/// destructor's own panic, and `cause` the thread's own panic it was unwinding from (if it
/// was not torn down), as the hook recorded them. Writes to stderr; never panics.
pub(super) fn report(
    ctx: &Context,
    st: &ExecState,
    destructor: Option<&PanicRecord>,
    cause: Option<&PanicRecord>,
) {
    let mut text = String::from("\ninterleave-test: ");
    if let Some(test) = ctx.exec.origin.as_ref().and_then(|o| o.rescue.test()) {
        let _ = write!(text, "in test {test}: ");
    }
    let teardown = st.threads[ctx.tid].life.unwinding() == Unwinding::Teardown;
    let _ = what_happened(&mut text, (ctx, st), destructor, cause);
    let _ = writeln!(
        text,
        "Rust aborts the process after a panic in a destructor during unwinding{}, so this \
         failure is reported here and cannot be returned. The thread's last switch point \
         was {}.",
        if teardown {
            ""
        } else {
            ", as it would abort the real program"
        },
        st.threads[ctx.tid].pending.loc
    );
    failure_line(&mut text, st);
    fix_lines(&mut text, teardown, st.cut);
    schedule_lines(&mut text, ctx.exec.origin.as_ref(), st);
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Which thread's destructor panicked, where and with what, and why the thread unwound.
fn what_happened(
    text: &mut String,
    (ctx, st): (&Context, &ExecState),
    destructor: Option<&PanicRecord>,
    cause: Option<&PanicRecord>,
) -> std::fmt::Result {
    let (panic_at, panic_message) = match destructor {
        Some(r) => (at(r.location.as_ref()), r.message.as_str()),
        None => (String::new(), "(its message was not recorded)"),
    };
    let who = st.thread_info(ctx.tid);
    write!(
        text,
        "model thread {who} panicked in a destructor{panic_at} while "
    )?;
    let failed_here = st
        .failure
        .as_ref()
        .and_then(|f| f.thread.as_ref())
        .is_some_and(|t| t.id() == ctx.tid);
    match st.threads[ctx.tid].life.unwinding() {
        Unwinding::Teardown if st.cut => writeln!(
            text,
            "interleave-test unwound it to end an execution that passed: {panic_message}\n\
             That thread had not failed: teardown unwinds it because {}.",
            teardown::why_unwound(st, ctx.tid)
        ),
        Unwinding::Teardown if failed_here => writeln!(
            text,
            "interleave-test unwound it after the execution failed there: {panic_message}"
        ),
        Unwinding::Teardown => writeln!(
            text,
            "interleave-test unwound it to tear down an execution that had failed: \
             {panic_message}\nThat thread had not failed: teardown unwinds it because {}.",
            teardown::why_unwound(st, ctx.tid)
        ),
        _ => {
            writeln!(text, "it was unwinding from a panic: {panic_message}")?;
            match cause {
                Some(r) => writeln!(
                    text,
                    "The panic it was unwinding from{}: {}",
                    at(r.location.as_ref()),
                    r.message
                ),
                None => Ok(()),
            }
        }
    }
}

/// " at `<location>`", or nothing.
fn at(location: Option<&crate::report::SourceLocation>) -> String {
    location.map(|l| format!(" at {l}")).unwrap_or_default()
}

/// The execution's failure, if one was recorded.
fn failure_line(text: &mut String, st: &ExecState) {
    let Some(f) = &st.failure else {
        return;
    };
    let thread = f
        .thread
        .as_ref()
        .map(|t| format!(" in thread {t}"))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "The execution's failure: {}{thread}{}: {}",
        f.kind,
        at(f.location.as_ref()),
        f.message
    );
}

fn fix_lines(text: &mut String, teardown: bool, cut: bool) {
    text.push_str(
        "To fix it: make that destructor return without panicking while \
         `interleave_test::thread::panicking()` is true (it is during this unwinding)",
    );
    text.push_str(match (teardown, cut) {
        (true, true) => {
            ", or turn `pass_at_max_steps` off: an execution that reaches max_steps then \
             fails as a livelock, and teardown leaves its threads as they are.\n"
        }
        (true, false) => ", or fix the failure above: without it no thread is unwound.\n",
        (false, _) => ", or fix the panic it unwinds from.\n",
    });
}

/// The schedule so far, as the driver writes it (see [`Rescue`]): before an abort, and
/// before the watchdog ends the process.
pub(super) fn schedule_lines(text: &mut String, origin: Option<&super::Origin>, st: &ExecState) {
    let Some(origin) = origin else {
        text.push_str("(the schedule of this execution is not available)\n");
        return;
    };
    let names: Vec<Option<String>> = st
        .threads
        .iter()
        .map(|t| t.name.as_deref().map(str::to_owned))
        .collect();
    let _ = writeln!(
        text,
        "The schedule of execution {} so far; Builder::replay runs it again{}:",
        origin.iteration,
        match (st.failure.is_some(), st.cut) {
            (true, _) => " to the failure above",
            (false, true) => " (with `pass_at_max_steps(true)`)",
            (false, false) => "",
        }
    );
    text.push_str(
        &origin
            .rescue
            .rescue(origin.iteration, &st.decisions, &names),
    );
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if st.start_over {
        text.push_str(
            "(This execution ran without the memory model's tracking, and was to run again \
             with it; a replay runs tracked, and may take another path after the first \
             relaxed access, fence or UnsafeCell access.)\n",
        );
    }
}
