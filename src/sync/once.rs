//! [`Once`]: one-time initialization, and the waiting core shared with [`super::OnceLock`]
//! and [`super::LazyLock`].

use std::fmt;
use std::panic::Location;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::primitive::claims::{self, Mark};
use crate::primitive::{
    self, Blocked, Loc, ObjId, ObjectHandle, ObjectState, OpKind, Operation, Role, Tid, Waits,
};

/// What a thread waits to do while another runs a `Once`'s closure.
const RUN: Waits = Waits::To("run");
/// What a thread waits to do while another initializes a `OnceLock` or a `LazyLock`.
pub(super) const INITIALIZE: Waits = Waits::To("initialize");

/// `call_once`: a write, since the first call runs the closure.
const CALL_ONCE: OpKind = OpKind::new(&Operation::new("once call_once").access(Role::Write));
/// `call_once_force`.
const CALL_ONCE_FORCE: OpKind =
    OpKind::new(&Operation::new("once call_once_force").access(Role::Write));
/// The end of a run of the closure, which completes the `Once` (or poisons it).
const RUN_END: OpKind = OpKind::new(&Operation::new("once complete").access(Role::Write));
/// `is_completed`.
const IS_COMPLETED: OpKind = OpKind::new(
    &Operation::new("once is_completed")
        .access(Role::Read)
        .observes_only(),
);

/// A one-time initialization's operation named `name`, accessing the cell as `role` (the
/// operations of `OnceLock` and `LazyLock`, which share the `Once`'s core).
pub(super) const fn once_op(name: &'static str, role: Role) -> Operation {
    match role {
        Role::Read => Operation::new(name).access(role).observes_only(),
        _ => Operation::new(name).access(role),
    }
}

/// No thread has completed the initializer (and none panicked in it since the last reset).
const INCOMPLETE: u8 = 0;
/// A thread runs the initializer; others wait.
const RUNNING: u8 = 1;
/// The initializer panicked and the cell poisons on panic.
const POISONED: u8 = 2;
/// The initializer returned.
const COMPLETE: u8 = 3;

/// Who runs an initializer, and its outcome in an execution that is not the first to use the
/// primitive (a `static`); the first one's outcome is the facade's.
#[derive(Debug, Default)]
struct RunnerState {
    runner: Option<(Tid, Loc)>,
    /// The status in this execution (`INCOMPLETE` at first), if it is not the first.
    status: u8,
}

impl ObjectState for RunnerState {
    fn holders(&self) -> Vec<(Tid, Loc)> {
        self.runner.into_iter().collect()
    }
}

/// The state machine of a one-time initializer, shared by `Once`, `OnceLock` and `LazyLock`.
///
/// The first execution that uses it keeps its status here (in the facade), readable without
/// a switch point; any later execution (the core is in a `static`) keeps its own status in
/// its arena, starting from "incomplete", so every execution runs the initializer afresh.
#[derive(Debug)]
pub(super) struct OnceCore {
    handle: ObjectHandle,
    status: AtomicU8,
}

/// Where an operation on a core keeps its outcome: the object in the running execution and
/// whether that execution is the first that used it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Site {
    obj: ObjId,
    home: bool,
}

impl Site {
    /// The object in the running execution.
    pub(super) fn obj(self) -> ObjId {
        self.obj
    }

    /// Whether the running execution is the first that used the core (its value is the
    /// facade's).
    pub(super) fn home(self) -> bool {
        self.home
    }
}

/// What a thread that reached an initializer must do.
pub(super) enum Begin<'a> {
    /// The initializer already completed.
    Complete,
    /// The initializer panicked earlier and the caller does not ignore poisoning.
    Poisoned,
    /// The caller runs the initializer; dropping the runner without `complete` undoes it.
    Run(Runner<'a>),
}

/// The right to run an initializer. On drop it publishes the outcome and wakes the waiters.
pub(super) struct Runner<'a> {
    core: &'a OnceCore,
    site: Site,
    /// The initializer ran before and panicked (for [`OnceState::is_poisoned`]).
    was_poisoned: bool,
    /// Whether a panic while running poisons (`Once`, `LazyLock`) or resets (`OnceLock`).
    poison_on_panic: bool,
    done: bool,
}

const API: &str = "interleave_test::sync::Once::call_once";

impl OnceCore {
    /// A core that has not run; `kind` names the primitive in reports. A `static` one starts
    /// afresh in every execution.
    pub(super) const fn new(kind: &'static str) -> Self {
        OnceCore {
            handle: ObjectHandle::restorable(kind),
            status: AtomicU8::new(INCOMPLETE),
        }
    }

    /// A core whose initializer already completed (a cell built from a value, which cannot
    /// be a `static`).
    pub(super) const fn completed(kind: &'static str) -> Self {
        OnceCore {
            handle: ObjectHandle::new(kind),
            status: AtomicU8::new(COMPLETE),
        }
    }

    /// The switch point before operation `kind`; returns where the outcome is kept.
    pub(super) fn switch(&self, kind: OpKind, loc: Loc) -> Site {
        let obj = primitive::switch_point(kind, Some(&self.handle), loc)
            .expect("a switch point on an object returns its id");
        let home = primitive::first_used_here(&self.handle);
        Site { obj, home }
    }

    /// The status at `site`.
    fn status(&self, site: Site) -> u8 {
        if site.home {
            self.status.load(Ordering::Acquire)
        } else {
            primitive::with_state(API, |a| a.obj_untracked::<RunnerState>(site.obj).status)
        }
    }

    /// Whether the initializer completed at `site` (no switch point).
    pub(super) fn completed_at(&self, site: Site) -> bool {
        self.status(site) == COMPLETE
    }

    /// Whether the first execution's initializer completed (no switch point).
    pub(super) fn is_complete(&self) -> bool {
        self.status.load(Ordering::Acquire) == COMPLETE
    }

    /// Whether the first execution's initializer panicked and poisoned the core (no switch
    /// point).
    pub(super) fn is_poisoned(&self) -> bool {
        self.status.load(Ordering::Acquire) == POISONED
    }

    /// Forgets any outcome (for `OnceLock::take`, which has exclusive access); the cell no
    /// longer keeps what its initializer made.
    pub(super) fn reset(&mut self) {
        *self.status.get_mut() = INCOMPLETE;
        self.released();
    }

    /// The value leaves the cell's keeping (taken out, or lent mutably): the `Arc`s made
    /// for it are checked for leaks like any others (see `primitive::claims`).
    pub(super) fn released(&self) {
        claims::released(&self.handle);
    }

    /// Where the calling thread is before an operation that stores a value it made (see
    /// `primitive::claims`).
    pub(super) fn mark(&self) -> Mark {
        claims::mark()
    }

    /// The value the calling thread made after `mark` is kept at `site` (`OnceLock::set`).
    pub(super) fn keep_made(&self, site: Site, mark: Mark) {
        primitive::with_state(API, |a| a.claim_made(site.obj, mark));
    }

    /// Waits while another thread runs the initializer (blocked as `what`), then says
    /// whether the caller must run it. `ignore_poison` lets a caller retry after a panic.
    pub(super) fn begin(
        &self,
        site: Site,
        what: Waits,
        ignore_poison: bool,
        poison_on_panic: bool,
        loc: Loc,
    ) -> Begin<'_> {
        loop {
            match self.status(site) {
                COMPLETE => return Begin::Complete,
                POISONED if !ignore_poison => return Begin::Poisoned,
                RUNNING => {
                    primitive::block(Blocked {
                        what,
                        obj: Some(site.obj),
                        thread: None,
                        deadline: None,
                        loc,
                    });
                }
                before => {
                    if site.home {
                        self.status.store(RUNNING, Ordering::Relaxed);
                    }
                    primitive::with_state(API, |a| {
                        let me = a.me();
                        let state = a.obj::<RunnerState>(site.obj);
                        state.runner = Some((me, loc));
                        state.status = RUNNING;
                        a.initializer_started(site.obj);
                    });
                    return Begin::Run(Runner {
                        core: self,
                        site,
                        was_poisoned: before == POISONED,
                        poison_on_panic,
                        done: false,
                    });
                }
            }
        }
    }
}

impl Runner<'_> {
    /// Whether an earlier run panicked.
    pub(super) fn was_poisoned(&self) -> bool {
        self.was_poisoned
    }

    /// Marks the initializer complete and wakes the waiters.
    pub(super) fn complete(mut self) {
        self.done = true;
    }
}

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        let status = match (self.done, self.poison_on_panic) {
            (true, _) => COMPLETE,
            (false, true) => POISONED,
            (false, false) => INCOMPLETE,
        };
        if self.site.home {
            self.core.status.store(status, Ordering::Release);
        }
        let obj = self.site.obj;
        primitive::with_state(API, |a| {
            let state = a.obj::<RunnerState>(obj);
            state.runner = None;
            state.status = status;
            a.wake_all(obj);
            // What the initializer made is the cell's once it completed.
            a.initializer_ended(obj, status == COMPLETE);
        });
    }
}

impl Drop for OnceCore {
    /// A cell dropped during its execution (a local one) keeps nothing any more.
    fn drop(&mut self) {
        self.released();
    }
}

/// A one-time initialization, as [`std::sync::Once`].
///
/// # Differences from std
/// - `call_once`, `call_once_force` and `is_completed` are switch points; so is the end of
///   the closure, where waiting threads are woken.
/// - A thread that calls `call_once` again from inside its own closure is reported as a
///   deadlock naming the place where it started the closure (std may deadlock or panic).
/// - [`OnceState`] is this crate's type with std's stable method.
/// - A `static` `Once` starts incomplete in every execution, so each runs the closure
///   afresh. `Debug` (no switch point) shows the state of the first execution that used it.
/// - The [`Arc`](super::Arc)s the closure creates are taken to be kept for the `Once` (in
///   another static, say) and are not reported as leaks while it lives (see `Arc`).
pub struct Once {
    core: OnceCore,
}

/// The state passed to a [`Once::call_once_force`] closure, as [`std::sync::OnceState`].
#[derive(Debug)]
pub struct OnceState {
    poisoned: bool,
}

impl OnceState {
    /// Whether an earlier closure of the `Once` panicked.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

impl Once {
    /// A `Once` whose closure has not run.
    #[allow(
        clippy::new_without_default,
        reason = "std's Once has no Default either"
    )]
    pub const fn new() -> Self {
        Once {
            core: OnceCore::new("Once"),
        }
    }

    /// Runs `f` if no call has completed yet; other callers wait until it returns. Panics if
    /// an earlier closure panicked (the `Once` is poisoned), as std does.
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        let loc = Location::caller();
        let site = self.core.switch(CALL_ONCE, loc);
        match self.core.begin(site, RUN, false, true, loc) {
            Begin::Complete => {}
            Begin::Poisoned => panic!("Once instance has previously been poisoned"),
            Begin::Run(runner) => {
                f();
                self.finish(runner, loc);
            }
        }
    }

    /// Like [`call_once`](Self::call_once), but also runs `f` on a poisoned `Once`, telling
    /// it so through [`OnceState::is_poisoned`]; completing clears the poison.
    #[track_caller]
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        let loc = Location::caller();
        let site = self.core.switch(CALL_ONCE_FORCE, loc);
        match self.core.begin(site, RUN, true, true, loc) {
            Begin::Complete | Begin::Poisoned => {}
            Begin::Run(runner) => {
                f(&OnceState {
                    poisoned: runner.was_poisoned(),
                });
                self.finish(runner, loc);
            }
        }
    }

    /// The switch point after the closure returned, then completion.
    fn finish(&self, runner: Runner<'_>, loc: Loc) {
        self.core.switch(RUN_END, loc);
        runner.complete();
    }

    /// Whether a closure has completed.
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        let site = self.core.switch(IS_COMPLETED, Location::caller());
        self.core.completed_at(site)
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Once")
            .field("completed", &self.core.is_complete())
            .field("poisoned", &self.core.is_poisoned())
            .finish_non_exhaustive()
    }
}
