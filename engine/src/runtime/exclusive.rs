//! The check of what `Role::Acquire` promises the reduction.
//!
//! An operation declared [`Role::Acquire`] says that it takes its object exclusively: it can
//! take effect only while no other thread holds the object. The reduction relies on it
//! (`Role::never_reversed`): a release followed by another thread's acquire of the same
//! object is never reordered, since the acquirer must have waited for it. A primitive that
//! lets two threads hold the object at once (a semaphore of two permits declaring its
//! acquire `Acquire`) breaks that promise, and the reduction would skip the schedules in
//! which the second thread takes the object before the first gives it back: races there
//! would never be seen, and a search would call the model proved.
//!
//! So, in a search (`ExecConfig::check_acquires`, also set to replay a search's schedule,
//! which then replays to the same misuse), every decision checks each thread that could
//! run: if its next operation is an `Acquire` of an object that another thread holds
//! (as the object's [`ObjectState::holders`](super::ObjectState::holders) says), the
//! execution fails with a `Misuse` that names the operation and says what to declare. The
//! check sees the state the search is in, whichever thread it then runs, so the schedule
//! the promise would prune need not be explored for the misuse to be found. The reduction
//! does explore a state that shows it: two acquires of one object by different threads
//! conflict (`never_reversed` is false between them), so the search runs them in both
//! orders, and in the second the thread that acquired first is about to acquire while the
//! other holds the object; at the next decision it is runnable (the primitive lets it take
//! effect) and the check sees it, whether or not it is then chosen.

use super::execution::{ExecState, FailureDraft};
use crate::op::{Role, Tid};

/// Whether a thread of `runnable` is about to take an object exclusively that another
/// thread holds (see the module): the execution then failed.
#[inline]
pub(super) fn violated(st: &mut ExecState, runnable: &[Tid]) -> bool {
    st.config.check_acquires && check_each(st, runnable)
}

/// [`violated`], in a search.
fn check_each(st: &mut ExecState, runnable: &[Tid]) -> bool {
    for &t in runnable {
        let op = &st.threads[t].pending;
        let Some(obj) = op.obj else { continue };
        if op.kind.role() != Some(Role::Acquire) || op.kind.joined().is_some() {
            continue;
        }
        let holders = st.objects[obj].holders();
        if let Some(&(holder, at)) = holders.iter().find(|(h, _)| *h != t) {
            st.fail(|st| violation(st, t, holder, at));
            return true;
        }
    }
    false
}

/// The failure of thread `t`, whose next operation takes its object exclusively while
/// thread `holder` holds it since `at`.
#[cold]
fn violation(st: &ExecState, t: Tid, holder: Tid, at: crate::op::Loc) -> FailureDraft {
    let op = st.threads[t].pending;
    let obj = op.obj.expect("an operation on an object");
    let kind = st.objects[obj].kind;
    let message = format!(
        "thread {} can `{}` {kind} #{obj} while thread {} holds it (since {}), but the \
         operation is declared `Role::Acquire`, which promises that one thread holds the \
         object at a time: the reduction would skip the schedules in which the object is \
         taken before the holder gives it back. Declare an operation that can take an \
         object others hold as `Role::Write` (and the one that gives it back as \
         `Role::Write` too).",
        st.thread_info(t),
        op.kind.name(),
        st.thread_info(holder),
        crate::report::SourceLocation::from(at),
    );
    super::failure::misuse(st, t, message, op.loc)
}
