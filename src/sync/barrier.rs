//! [`Barrier`]: a meeting point for a fixed number of threads.

use std::fmt;
use std::panic::Location;

use crate::primitive::{
    self, Blocked, ObjId, ObjectHandle, ObjectState, OpKind, Operation, Role, Waits,
};

/// `wait`: a write, as every arrival counts towards the release.
const WAIT: OpKind = OpKind::new(&Operation::new("barrier wait").access(Role::Write));

/// How far the current generation of a barrier got, in the execution's arena.
#[derive(Debug, Default)]
struct BarrierState {
    /// Threads that called `wait` in the current generation.
    arrived: usize,
    /// Completed generations; a waiter leaves when this moves past the one it arrived in.
    generation: u64,
}

impl ObjectState for BarrierState {}

/// Lets a fixed number of threads wait for each other, as [`std::sync::Barrier`].
///
/// # Differences from std
/// - `wait` is a switch point.
/// - The leader is the last thread to arrive (std does not say which thread leads).
/// - A generation that can never fill is reported as a deadlock listing every thread that
///   waits at the barrier.
/// - [`BarrierWaitResult`] is this crate's type with std's method.
pub struct Barrier {
    handle: ObjectHandle,
    num_threads: usize,
}

/// What [`Barrier::wait`] returns, as [`std::sync::BarrierWaitResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this thread is the leader: exactly one per generation.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier that releases its waiters once `n` threads have called `wait`. With `n` of
    /// 0 or 1, `wait` never blocks and every caller leads, as in std.
    pub const fn new(n: usize) -> Self {
        Barrier {
            handle: ObjectHandle::restorable("Barrier"),
            num_threads: n,
        }
    }

    /// Blocks until `n` threads (this one included) have called `wait` in this generation,
    /// then releases them all and starts the next generation.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let loc = Location::caller();
        let obj = self.id(primitive::switch_point(WAIT, Some(&self.handle), loc));
        let api = "interleave_test::sync::Barrier::wait";
        let n = self.num_threads;
        let arrived_in = primitive::with_state(api, |a| {
            let state = a.obj::<BarrierState>(obj);
            state.arrived += 1;
            if state.arrived < n {
                return Some(state.generation);
            }
            state.arrived = 0;
            state.generation += 1;
            a.wake_all(obj);
            None
        });
        let Some(generation) = arrived_in else {
            return BarrierWaitResult(true);
        };
        while primitive::with_state(api, |a| a.obj::<BarrierState>(obj).generation == generation) {
            primitive::block(Blocked {
                what: Waits::To("pass"),
                obj: Some(obj),
                thread: None,
                deadline: None,
                loc,
            });
        }
        BarrierWaitResult(false)
    }

    fn id(&self, obj: Option<ObjId>) -> ObjId {
        obj.expect("a switch point on an object returns its id")
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("num_threads", &self.num_threads)
            .finish_non_exhaustive()
    }
}
