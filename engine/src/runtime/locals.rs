//! The values of the crate's `thread_local!`: one per model thread, fresh in every
//! execution, destroyed when the model thread exits (before a joiner sees it finished).
//!
//! They are kept in a map on the OS thread that runs the model thread (the driver thread
//! for coroutines), keyed by execution, thread and key, and handed out as `Rc`s so that no
//! borrow of the map is held while user code runs.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::{Context, Tid, with_ctx};

/// One key's value in one model thread.
type Value = Rc<dyn Any>;

#[derive(Default)]
struct ThreadLocals {
    /// Values in the order they were initialized (destroyed in reverse).
    values: Vec<(usize, Value)>,
    /// Keys whose value was destroyed: accessing them again is an error, as in std.
    destroyed: Vec<usize>,
}

std::thread_local! {
    static LOCALS: RefCell<HashMap<(u64, Tid), ThreadLocals>> = RefCell::new(HashMap::new());
}

/// Why a value cannot be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The calling thread is destroying its thread-locals and this one is gone.
    Destroyed,
}

/// The calling model thread's value of `key`, initialized with `init` if it has none.
#[track_caller]
pub fn get_or_init(
    api: &str,
    key: usize,
    init: impl FnOnce() -> Value,
) -> Result<Value, Unavailable> {
    let id = with_ctx(api, |ctx| (ctx.exec.id, ctx.tid));
    if let Some(found) = lookup(id, key)? {
        return Ok(found);
    }
    // The map is not borrowed while `init` runs: it may use other thread-locals.
    let fresh = init();
    LOCALS.with(|all| {
        let mut all = all.borrow_mut();
        let mine = all.entry(id).or_default();
        match mine.values.iter().find(|(k, _)| *k == key) {
            // `init` initialized the same key (recursively): keep the first value stored.
            Some((_, existing)) => Ok(Rc::clone(existing)),
            None => {
                mine.values.push((key, Rc::clone(&fresh)));
                Ok(fresh)
            }
        }
    })
}

fn lookup(id: (u64, Tid), key: usize) -> Result<Option<Value>, Unavailable> {
    LOCALS.with(|all| {
        let all = all.borrow();
        let Some(mine) = all.get(&id) else {
            return Ok(None);
        };
        if mine.destroyed.contains(&key) {
            return Err(Unavailable::Destroyed);
        }
        Ok(mine
            .values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| Rc::clone(v)))
    })
}

/// Destroys the thread-locals of the exiting model thread `ctx`, newest first. A value whose
/// destructor creates another one has that one destroyed too.
pub(crate) fn destroy(ctx: &Context) {
    // Most model threads have none: no hashing then.
    if LOCALS.with(|all| all.borrow().is_empty()) {
        return;
    }
    let id = (ctx.exec.id, ctx.tid);
    // A bound against destructors that keep creating values.
    for _ in 0..10_000 {
        let next = LOCALS.with(|all| {
            let mut all = all.borrow_mut();
            let mine = all.get_mut(&id)?;
            let (key, value) = mine.values.pop()?;
            mine.destroyed.push(key);
            Some(value)
        });
        let Some(value) = next else { break };
        // Dropped with the map released: the destructor may use the model.
        super::thread::drop_in_thread(ctx, value);
    }
    let rest = LOCALS.with(|all| all.borrow_mut().remove(&id));
    // Values still there (the bound above was reached) are forgotten, never dropped outside
    // the model; the rest of the entry is freed.
    if let Some(mut rest) = rest {
        std::mem::forget(std::mem::take(&mut rest.values));
    }
}

/// Forgets the thread-locals of model thread `tid` of execution `exec` without dropping
/// them: teardown left the thread behind, and their destructors never run.
pub(crate) fn forget(exec: u64, tid: Tid) {
    if LOCALS.with(|all| all.borrow().is_empty()) {
        return;
    }
    let rest = LOCALS.with(|all| all.borrow_mut().remove(&(exec, tid)));
    std::mem::forget(rest);
}
