//! The interface of executions: what the facade's entry points and driver use of the engine
//! to run a model.
//!
//! [`run_execution`] runs one execution of a model under a strategy, with the knobs of an
//! [`ExecConfig`], reusing what a driver thread keeps between executions ([`Reuse`]), and
//! returns an [`ExecOutcome`]: the decisions taken ([`DecisionRecord`]) and, if it failed,
//! the failure, which [`outcome`] makes a `Failure` with its schedule. A failure found
//! where a run cannot go on is saved through a [`Rescue`] from its [`Origin`].
//! [`pin_driver`] pins a driver thread to a [`Core`]. Before a run: [`install_hook`] (the
//! panic hook that records a model thread's panic, chained to the one it replaces) and
//! [`assert_not_in_model`] (explorations cannot nest). [`holding_state`] runs a callback
//! under the lock of the execution's state, as the engine runs a destructor or a waker:
//! what the tests of a callback into the engine and of a lock held too long run.

pub use crate::runtime::{
    Core, DecisionRecord, ExecConfig, ExecOutcome, Origin, Reuse, holding_state, install_hook,
    outcome, pin_driver, run_execution,
};
pub use crate::runtime::{Rescue, assert_not_in_model};
