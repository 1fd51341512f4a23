//! Hints, with the names of [`std::hint`].

use std::panic::Location;

use crate::primitive;
use crate::primitive::{Effect, OpKind, Operation};

/// `spin_loop`: gives way, as a yield.
const SPIN_LOOP: OpKind = OpKind::new(
    &Operation::new("spin loop")
        .effect(Effect::Yield)
        .observes_only(),
);

/// Says the thread is busy-waiting, as [`std::hint::spin_loop`]. In a model it is a switch
/// point that also tells the strategy the thread is spinning, so that PCT runs other threads
/// first instead of letting the spin loop stall the execution.
///
/// # Differences from std
/// A switch point. Outside a model it returns at once, as on one thread.
#[track_caller]
pub fn spin_loop() {
    let loc = Location::caller();
    primitive::yield_explicitly("interleave_test::hint::spin_loop", loc);
    primitive::switch_point(SPIN_LOOP, None, loc);
}
