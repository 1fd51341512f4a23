//! The interface of executions: what the facade's entry points and driver use of the engine
//! to run a model.
//!
//! [`run_execution`] runs one execution of a model under a strategy, with the knobs of an
//! [`ExecConfig`], reusing what a driver thread keeps between executions ([`Reuse`]), and
//! returns an [`ExecOutcome`]: the decisions taken ([`DecisionRecord`]) and, if it failed,
//! the failure, which [`outcome`] makes a `Failure` with its schedule. A failure found
//! where a run cannot go on is saved through a [`Rescue`] from its [`Origin`].
//! [`pin_driver`] pins a driver thread to a [`Core`]. Before a run: [`install_hook`] (the
//! panic hook that keeps model panics quiet) and [`assert_not_in_model`] (no exploration
//! inside a model). [`holding_state`] runs a callback while the engine's state is held, for
//! the tests of its misuse report.

pub use crate::runtime::{
    Core, DecisionRecord, ExecConfig, ExecOutcome, Origin, Reuse, holding_state, install_hook,
    outcome, pin_driver, run_execution,
};
pub use crate::runtime::{Rescue, assert_not_in_model};
