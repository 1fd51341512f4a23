//! Turning the state of a stuck or runaway execution into a failure that explains it.

use super::execution::{ExecState, FailureDraft, Status, Waits};
use super::object::{ForeignObject, Fresh};
use super::{Loc, ObjId, Tid};
use crate::memory::{CellAccess, Race};
use crate::report::{Holder, SourceLocation, ThreadReport};
use crate::schedule::FailureKind;
use crate::strategy::{Divergence, Nondeterminism, Refusal};

/// Every live thread is blocked. `last` is the thread whose wait completed the deadlock.
pub(super) fn deadlock(st: &ExecState, last: Option<Tid>) -> FailureDraft {
    let threads: Vec<ThreadReport> = (0..st.threads.len())
        .filter(|&t| !matches!(st.threads[t].status, Status::Finished))
        .map(|t| blocked_report(st, t))
        .collect();
    let last = last.or_else(|| threads.first().map(|r| r.thread().id()));
    FailureDraft {
        kind: FailureKind::Deadlock,
        message: "every live thread is blocked".to_owned(),
        thread: last.map(|t| st.thread_info(t)),
        location: last.map(|t| SourceLocation::from(st.threads[t].pending.loc)),
        backtrace: None,
        threads,
    }
}

fn blocked_report(st: &ExecState, tid: Tid) -> ThreadReport {
    let thread = &st.threads[tid];
    let status = match thread.status {
        Status::Runnable if !super::sched::op_enabled(st, tid) => Status::Blocked(waiting(st, tid)),
        other => other,
    };
    let Status::Blocked(b) = status else {
        return ThreadReport::new(
            st.thread_info(tid),
            "runnable".into(),
            Some(thread.pending.loc.into()),
            vec![],
        );
    };
    let mut held_by = Vec::new();
    let state = match (b.obj, b.thread) {
        (Some(obj), _) => format!(
            "waits to {}",
            object_wait(st, b.what.phrase(), obj, &mut held_by)
        ),
        (None, Some(joined)) => {
            held_by.push(Holder::joined(
                st.thread_info(joined),
                st.threads[joined].pending.loc.into(),
            ));
            format!(
                "waits to {} thread {}",
                b.what.phrase(),
                st.thread_info(joined)
            )
        }
        (None, None) if b.what == Waits::Wake => future_wait(st, tid, &mut held_by),
        (None, None) => format!("waits to {}", b.what.phrase()),
    };
    ThreadReport::new(st.thread_info(tid), state, Some(b.loc.into()), held_by).with_tasks(
        super::wakes::notes(st, tid)
            .map(|n| n.pending())
            .unwrap_or_default(),
    )
}

/// What a thread waiting to do `words` to `obj` waits for, in a deadlock report's words,
/// and who holds `obj`: the one phrase for a blocked thread and a waiting future.
fn object_wait(st: &ExecState, words: &str, obj: ObjId, held_by: &mut Vec<Holder>) -> String {
    let slot = &st.objects[obj];
    for (holder, at) in slot.holders() {
        held_by.push(Holder::new(st.thread_info(holder), at.into()));
    }
    format!(
        "{words} {} #{obj} (first used at {})",
        slot.kind,
        SourceLocation::from(slot.first_use)
    )
}

/// What thread `tid`, which waits for a wake between polls of its future, waits for: what
/// its future registered to wait for in wait queues, said as a blocked thread's wait, or,
/// if it registered nowhere the engine knows of, that nothing woke it.
fn future_wait(st: &ExecState, tid: Tid, held_by: &mut Vec<Holder>) -> String {
    let awaits = super::wakes::awaits(st, tid);
    if awaits.is_empty() {
        return super::wakes::waiting_words(st, tid);
    }
    let phrases: Vec<String> = awaits
        .iter()
        .map(|&(obj, words)| match obj {
            Some(obj) => object_wait(st, words, obj, held_by),
            None => words.to_owned(),
        })
        .collect();
    let mut text = format!("waits to {}", phrases.join(" or to "));
    text.push_str(&super::wakes::waits_in_words(st, tid));
    text
}

/// What thread `tid` waits for when its next operation cannot take effect, in the words of
/// a deadlock report.
fn waiting(st: &ExecState, tid: Tid) -> super::Blocked {
    let op = st.threads[tid].pending;
    let (what, thread) = match op.kind.joined() {
        Some(target) => (Waits::Join, Some(target)),
        None => (Waits::Perform(op.kind), None),
    };
    super::Blocked {
        what,
        obj: op.obj.filter(|_| thread.is_none()),
        thread,
        deadline: None,
        loc: op.loc,
    }
}

/// The step limit was reached: name the threads seen in the most recent operations.
pub(super) fn livelock(st: &ExecState, me: Tid) -> FailureDraft {
    let mut counts = vec![0u64; st.threads.len()];
    let mut last = vec![None; st.threads.len()];
    let mut first_step = st.step;
    for e in st.trace.events() {
        counts[e.tid] += 1;
        last[e.tid] = Some(e.op);
        first_step = first_step.min(e.step);
    }
    let window = format!("steps {first_step}..={}", st.step);
    let threads = (0..st.threads.len())
        .filter_map(|t| {
            let op = last[t]?;
            let target = op
                .obj
                .map(|o| format!(" on {} #{o}", st.objects[o].kind))
                .unwrap_or_default();
            let state = format!(
                "ran {} operations in {window}, the last `{}`{target}",
                counts[t],
                op.name()
            );
            Some(ThreadReport::new(
                st.thread_info(t),
                state,
                Some(op.loc.into()),
                vec![],
            ))
        })
        .collect();
    FailureDraft {
        kind: FailureKind::Livelock,
        message: format!(
            "the execution reached max_steps ({}) without finishing",
            st.config.max_steps
        ),
        thread: Some(st.thread_info(me)),
        location: Some(st.threads[me].pending.loc.into()),
        backtrace: None,
        threads,
    }
}

/// The strategy cannot go on: a replay that does not fit, or a model that is not
/// deterministic.
pub(super) fn refusal(st: &ExecState, refusal: &Refusal) -> FailureDraft {
    match refusal {
        Refusal::Divergence(div) => divergence(st, div),
        Refusal::Nondeterminism(n) => nondeterminism(st, n),
        Refusal::Mismatch(n) => mismatch(st, n),
    }
}

fn mismatch(st: &ExecState, n: &Nondeterminism) -> FailureDraft {
    FailureDraft {
        kind: FailureKind::Divergence,
        message: format!(
            "replay diverged at decision {} (step {}): the model meets another situation than \
             when the schedule was recorded.\n  recorded: {}\n  now:      {}\nthe model changed \
             since, or it is not deterministic",
            n.decision, st.step, n.before, n.now
        ),
        thread: None,
        location: None,
        backtrace: None,
        threads: vec![],
    }
}

fn nondeterminism(st: &ExecState, n: &Nondeterminism) -> FailureDraft {
    FailureDraft {
        kind: FailureKind::Nondeterminism,
        message: format!(
            "the model is not deterministic: at decision {} (step {}) the same earlier \
             decisions led elsewhere than before.\n  before: {}\n  now:    {}\nthe model must \
             not depend on anything but the schedule (a HashMap's iteration order, real time, \
             randomness, state kept from an earlier execution)",
            n.decision, st.step, n.before, n.now
        ),
        thread: None,
        location: None,
        backtrace: None,
        threads: vec![],
    }
}

/// The schedule being replayed cannot be followed.
fn divergence(st: &ExecState, div: &Divergence) -> FailureDraft {
    let runnable: Vec<String> = div
        .runnable
        .iter()
        .map(|&t| st.thread_info(t).to_string())
        .collect();
    let message = match div.expected {
        Some(t) if div.runnable.is_empty() => format!(
            "replay diverged at decision {} (step {}): the schedule expects thread #{t} to run, \
             but the model finished; the schedule does not belong to this model or the model changed",
            div.decision, st.step
        ),
        Some(t) => format!(
            "replay diverged at decision {} (step {}): the schedule expects thread #{t}, \
             but only {} could run; the schedule does not belong to this model or the model changed",
            div.decision,
            st.step,
            runnable.join(", ")
        ),
        None => format!(
            "replay diverged at decision {} (step {}): the schedule has no more decisions, \
             but {} could run; the schedule is truncated or the model changed",
            div.decision,
            st.step,
            runnable.join(", ")
        ),
    };
    FailureDraft {
        kind: FailureKind::Divergence,
        message,
        thread: None,
        location: None,
        backtrace: None,
        threads: vec![],
    }
}

/// A primitive first used in another execution.
pub(super) fn foreign_object(
    st: &ExecState,
    me: Tid,
    foreign: &ForeignObject,
    loc: Loc,
) -> FailureDraft {
    let kind = foreign.kind;
    misuse(
        st,
        me,
        format!(
            "this {kind} was first used in another execution: a `static` (or a value captured \
             from outside the model closure) is shared by every execution, and a {kind} holds \
             data the explorer cannot put back to its initial state between them. Create it \
             inside the model closure and share it with an Arc{static_advice}. (A `static` \
             of a primitive that starts afresh in every execution needs no change; the \
             README's \"What is modelled\" says which do.)",
            static_advice = foreign.fresh.map(static_advice).unwrap_or_default(),
        ),
        loc,
    )
}

/// How a `static` primitive can start afresh in every execution, as its handle says.
fn static_advice(Fresh { ty, or }: Fresh) -> String {
    let path = ty.split('<').next().unwrap_or(ty);
    format!(
        ", or, for a `static`, write `static NAME: LazyLock<{ty}> = \
         LazyLock::new(|| {path}::new(..))`{or}: a static LazyLock starts afresh in every \
         execution"
    )
}

/// The model used the crate in a way it cannot model, as `message` says.
pub(super) fn misuse(st: &ExecState, me: Tid, message: String, loc: Loc) -> FailureDraft {
    FailureDraft {
        kind: FailureKind::Misuse,
        message,
        thread: Some(st.thread_info(me)),
        location: Some(loc.into()),
        backtrace: None,
        threads: vec![],
    }
}

/// `Arc`s still alive at the end of an execution that otherwise passed, if any.
pub(super) fn leak(st: &ExecState) -> Option<FailureDraft> {
    let leaked = super::arcs::leaked(st);
    let &(first, arc) = leaked.first()?;
    let threads = leaked
        .iter()
        .map(|&(obj, a)| {
            ThreadReport::new(
                st.thread_info(a.creator),
                format!("created Arc #{obj} here; {}", references_left(st, obj)),
                Some(a.created.into()),
                vec![],
            )
        })
        .collect();
    Some(FailureDraft {
        kind: FailureKind::Leak,
        message: format!(
            "{} Arc{} still alive when every thread had finished: Arc #{first}, created at {} by \
             thread {}, has {}. A cycle of Arcs (break it with a Weak), a mem::forget, or a \
             reference kept in a static or thread-local outlives the model. A static may hold \
             it: a static keeps only the Arcs made for its value, by its initializer \
             (LazyLock, OnceLock::get_or_init, Once::call_once) or in the argument of \
             OnceLock::set; a clone the model stores in a static otherwise (pushed into a \
             static collection, or given to set) is reported. Make the Arc inside the \
             initializer, or take the reference out of the static before the model ends",
            leaked.len(),
            if leaked.len() == 1 { " is" } else { "s are" },
            SourceLocation::from(arc.created),
            st.thread_info(arc.creator),
            references_left(st, first),
        ),
        thread: Some(st.thread_info(arc.creator)),
        location: Some(arc.created.into()),
        backtrace: None,
        threads,
    })
}

/// "2 strong references left", and how many of them a once-cell holds.
fn references_left(st: &ExecState, arc: usize) -> String {
    let strong = st.arcs[arc].strong;
    let plural = if strong == 1 { "" } else { "s" };
    let left = format!("{strong} strong reference{plural} left");
    match super::claims::holder(st, arc) {
        Some(cell) if super::claims::held(st, arc) > 0 => format!(
            "{left}, {} of them held by the value of {} #{cell} (made by its initializer)",
            super::claims::held(st, arc),
            st.objects[cell].kind,
        ),
        _ => left,
    }
}

/// Two accesses to the cell `obj` raced.
pub(super) fn data_race(st: &ExecState, obj: ObjId, race: &Race) -> FailureDraft {
    let slot = &st.objects[obj];
    let what = |a: &CellAccess| if a.write { "wrote" } else { "read" };
    let report = |a: &CellAccess| {
        ThreadReport::new(
            st.thread_info(a.tid),
            format!("{} {} #{obj} here", what(a), slot.kind),
            Some(a.loc.into()),
            vec![],
        )
    };
    let (a, b) = (&race.earlier, &race.later);
    FailureDraft {
        kind: FailureKind::DataRace,
        message: format!(
            "data race on {} #{obj} (first used at {}): thread {} {} it at {}, and thread {} \
             {} it at {}, and nothing orders the two accesses (no lock, join, channel, or \
             Acquire load of a Release store between them). Guard the cell with a Mutex, or \
             publish it with a Release store that the other thread reads with an Acquire load",
            slot.kind,
            SourceLocation::from(slot.first_use),
            st.thread_info(a.tid),
            what(a),
            SourceLocation::from(a.loc),
            st.thread_info(b.tid),
            what(b),
            SourceLocation::from(b.loc),
        ),
        thread: Some(st.thread_info(b.tid)),
        location: Some(b.loc.into()),
        backtrace: None,
        threads: vec![report(a), report(b)],
    }
}

/// Thread `tid` ran past the end of its stack of `bytes` bytes.
pub(super) fn stack_overflow(st: &ExecState, tid: Tid, bytes: usize) -> FailureDraft {
    let thread = st.thread_info(tid);
    FailureDraft {
        kind: FailureKind::StackOverflow,
        message: format!(
            "thread {thread} overflowed its stack of {bytes} bytes (its last switch point is \
             the location below). Give it more: thread::Builder::stack_size for a spawned \
             thread, or Builder::stack_size (or the {} variable) for every thread of the model",
            crate::settings::env::STACK_SIZE
        ),
        thread: Some(thread),
        location: Some(st.threads[tid].pending.loc.into()),
        backtrace: None,
        threads: vec![],
    }
}

/// A panic escaped the runtime's own code in thread `tid`: a bug of interleave-test.
pub(super) fn internal(
    st: &ExecState,
    tid: Tid,
    payload: &(dyn std::any::Any + Send),
) -> FailureDraft {
    let what =
        super::text_of(payload).unwrap_or_else(|| "a payload that is not a string".to_owned());
    FailureDraft {
        kind: FailureKind::Misuse,
        message: format!(
            "interleave-test failed inside its own code while running thread {} ({what}); \
             this is a bug of interleave-test: please report it with this schedule",
            st.thread_info(tid)
        ),
        thread: Some(st.thread_info(tid)),
        location: Some(st.threads[tid].pending.loc.into()),
        backtrace: None,
        threads: vec![],
    }
}

/// Model thread `tid` took the lock of the execution's state again at `at` while it held
/// it (see `state_lock.rs`): code the runtime ran under the lock called back into it.
pub(super) fn reentered(
    st: &ExecState,
    tid: Tid,
    at: &'static std::panic::Location<'static>,
) -> FailureDraft {
    let pending = st.threads[tid].pending;
    FailureDraft {
        kind: FailureKind::Misuse,
        message: format!(
            "interleave-test re-entered its own state on model thread {} (after `{}` at {}): \
             code it ran while holding the lock of the execution's state (a destructor or a \
             waker it dropped or woke, such as a waker whose `Drop` drops a timer) called back \
             into it at {at}, which would have waited for itself for ever. This is a bug of \
             interleave-test: please report it with this schedule",
            st.thread_info(tid),
            pending.name(),
            pending.loc,
        ),
        thread: Some(st.thread_info(tid)),
        location: Some(pending.loc.into()),
        backtrace: None,
        threads: vec![],
    }
}

/// The report of an execution of `test` (if named) whose running thread has not reached a
/// switch point for `limit` (see `watchdog.rs`).
pub(super) fn unresponsive(
    st: &ExecState,
    limit: std::time::Duration,
    test: Option<&str>,
) -> String {
    let tid = st.running;
    let pending = st.threads[tid].pending;
    if st.config.ambient {
        return super::ambient::unresponsive(st, limit, pending.name(), pending.loc);
    }
    let of_test = test.map(|t| format!(" of test {t}")).unwrap_or_default();
    format!(
        "\ninterleave-test: model thread {}{of_test} has not reached a switch point for \
         {limit:?}; its last one was `{}` at {}.\nIt is blocked on something \
         interleave-test does not model (a std lock or channel that another model thread \
         holds, I/O, a real sleep) or spins on a std atomic without a switch point, so no other \
         model thread can run again. Use interleave_test::sync and interleave_test::thread \
         there (and thread::yield_now or hint::spin_loop in a spin loop). If the thread is only \
         slow, raise {} (seconds; 0 turns the watchdog off).\nThe thread cannot be stopped \
         from outside, so the process exits now, and the other tests of this process end with \
         it unreported: run each test in a process of its own (cargo nextest does) to keep \
         their results.\n",
        st.thread_info(tid),
        pending.name(),
        pending.loc,
        crate::settings::env::WATCHDOG,
    )
}

/// The report of an execution of `test` (if named), `iteration` of its run (if known),
/// whose state has stayed locked, not taken again, for `limit` (see `watchdog.rs`): a thread
/// spins or blocks inside the runtime. `last` is the running thread and its switch point
/// the last time the state was free.
pub(super) fn held(
    limit: std::time::Duration,
    test: Option<&str>,
    iteration: Option<u64>,
    last: Option<&str>,
) -> String {
    let of_test = test.map(|t| format!(" of test {t}")).unwrap_or_default();
    let execution = iteration.map(|i| format!(" {i}")).unwrap_or_default();
    let who = match last {
        Some(what) => format!("The last thread seen running while it was free was {what}."),
        None => "No thread was seen running before.".to_owned(),
    };
    format!(
        "\ninterleave-test: execution{execution}{of_test} has held the lock of its state for \
         {limit:?} without releasing it: a model thread is stuck inside interleave-test itself \
         (it spins or blocks while holding that lock), so no model thread can run again. \
         {who}\nThis is a bug of interleave-test: please report it, with the test and its seed. \
         The schedule cannot be saved: it is in the locked state. If the thread is only slow, \
         raise {} (seconds; 0 turns the watchdog off).\nThe thread cannot be stopped from \
         outside, so the process exits now, and the other tests of this process end with it \
         unreported: run each test in a process of its own (cargo nextest does) to keep their \
         results.\n",
        crate::settings::env::WATCHDOG,
    )
}
