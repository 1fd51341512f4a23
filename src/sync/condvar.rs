//! [`Condvar`]: waiting for a condition under a [`Mutex`].

use std::panic::Location;
use std::sync::LockResult;
use std::time::Duration;

use super::{Mutex, MutexGuard};
use crate::primitive::{
    self, Blocked, Effect, Loc, ObjId, ObjectHandle, OpKind, Operation, Role, Waits, Wake,
};

/// `wait` (and the timed waits): a write, as the waiter joins the condvar's queue.
const WAIT: OpKind = OpKind::new(&condvar_op("condvar wait", Role::Write));
/// `notify_one`: a notification that finds no waiter changes nothing, so two such commute;
/// one that wakes a waiter writes the condvar through the wake-up (`events::waking`).
const NOTIFY_ONE: OpKind = OpKind::new(&condvar_op("condvar notify_one", Role::Read));
/// `notify_all`, as `notify_one`.
const NOTIFY_ALL: OpKind = OpKind::new(&condvar_op("condvar notify_all", Role::Read));

/// An operation on a condvar named `name`, accessing it as `role`.
const fn condvar_op(name: &'static str, role: Role) -> Operation {
    Operation::new(name).access(role).effect(Effect::Condvar)
}

/// A condition variable, as [`std::sync::Condvar`].
///
/// # Differences from std
/// - A wait may return without a notification (a spurious wake-up, as std allows): a
///   decision the search explores, at most once per thread and execution under DFS;
///   [`Builder::spurious_wakeups`](crate::Builder::spurious_wakeups) turns it off.
/// - `notify_one` may wake any waiter: which one is a decision (the longest waiting first).
/// - Timeouts use the virtual clock (see [`crate::time`]): a timed wait ends when its
///   deadline passes, which may happen while other threads could still act (a decision).
/// - [`WaitTimeoutResult`] is this crate's type with std's method.
#[derive(Debug)]
pub struct Condvar {
    handle: ObjectHandle,
}

/// Whether a timed wait timed out, as [`std::sync::WaitTimeoutResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// Whether the wait ended because its time ran out.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}

impl Condvar {
    /// A new condition variable.
    pub const fn new() -> Self {
        Condvar {
            handle: ObjectHandle::restorable("Condvar"),
        }
    }

    /// Releases the guard's lock, waits for a notification, and re-takes the lock.
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_until(guard, None, Location::caller())
            .map_or_else(
                |e| Err(std::sync::PoisonError::new(e.into_inner().0)),
                |(g, _)| Ok(g),
            )
    }

    /// Waits while `condition` holds, as [`std::sync::Condvar::wait_while`].
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        let loc = Location::caller();
        while condition(&mut *guard) {
            guard = match self.wait_until(guard, None, loc) {
                Ok((g, _)) => g,
                Err(e) => return Err(std::sync::PoisonError::new(e.into_inner().0)),
            };
        }
        Ok(guard)
    }

    /// Waits for a notification or `dur` of virtual time.
    #[track_caller]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        self.wait_until(guard, Some(dur), Location::caller())
    }

    /// Waits while `condition` holds, for at most `dur` of virtual time in all.
    #[track_caller]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        dur: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let loc = Location::caller();
        let api = "interleave_test::sync::Condvar::wait_timeout_while";
        let deadline = primitive::with_state(api, |a| a.now().saturating_add(dur));
        loop {
            if !condition(&mut *guard) {
                return Ok((guard, WaitTimeoutResult(false)));
            }
            let left = deadline.saturating_sub(primitive::with_state(api, |a| a.now()));
            if left.is_zero() {
                return Ok((guard, WaitTimeoutResult(true)));
            }
            guard = match self.wait_until(guard, Some(left), loc) {
                Ok((g, _)) => g,
                Err(e) => return Err(std::sync::PoisonError::new(e.into_inner())),
            };
        }
    }

    fn wait_until<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Option<Duration>,
        loc: Loc,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let cv = self.id(primitive::switch_point(WAIT, Some(&self.handle), loc));
        let (mutex, mutex_obj) = guard.release_for_wait();
        let deadline = dur.map(|d| {
            primitive::with_state("interleave_test::sync::Condvar::wait", |a| {
                a.now().saturating_add(d)
            })
        });
        let timed_out =
            match primitive::early("interleave_test::sync::Condvar::wait", deadline, true) {
                primitive::Early::TimedOut => true,
                primitive::Early::Spurious => false,
                primitive::Early::No => {
                    let wake = primitive::block(Blocked {
                        what: Waits::To("be notified on"),
                        obj: Some(cv),
                        thread: None,
                        deadline,
                        loc,
                    });
                    wake == Wake::TimedOut
                }
            };
        relock(mutex, mutex_obj, loc, WaitTimeoutResult(timed_out))
    }

    /// Wakes one waiting thread, if any: which one is a decision the search explores (the
    /// one that waited longest first), as std leaves it open.
    #[track_caller]
    pub fn notify_one(&self) {
        let cv = self.id(primitive::switch_point(
            NOTIFY_ONE,
            Some(&self.handle),
            Location::caller(),
        ));
        let api = "interleave_test::sync::Condvar::notify_one";
        let waiters = primitive::with_state(api, |a| a.waiters(cv));
        let chosen = match waiters.len() {
            0 => return,
            1 => 0,
            _ => primitive::notify_which(api, &waiters),
        };
        primitive::with_state(api, |a| a.wake(waiters[chosen]));
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        let cv = self.id(primitive::switch_point(
            NOTIFY_ALL,
            Some(&self.handle),
            Location::caller(),
        ));
        primitive::with_state("interleave_test::sync::Condvar::notify_all", |a| {
            a.wake_all(cv)
        });
    }

    fn id(&self, obj: Option<ObjId>) -> ObjId {
        obj.expect("a switch point on an object returns its id")
    }
}

fn relock<'a, T: ?Sized>(
    mutex: &'a Mutex<T>,
    obj: Option<ObjId>,
    loc: Loc,
    timed_out: WaitTimeoutResult,
) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
    if let Some(obj) = obj {
        primitive::switch_point(super::mutex::RELOCK, Some(mutex.handle()), loc);
        mutex.acquire(obj, loc);
    }
    let guard = MutexGuard::reacquired(mutex, obj, loc);
    if mutex.is_poisoned() {
        Err(std::sync::PoisonError::new((guard, timed_out)))
    } else {
        Ok((guard, timed_out))
    }
}
