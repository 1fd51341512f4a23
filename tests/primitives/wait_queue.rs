//! The engine's `WaitQueue` as a data structure, outside any model (its registrations then
//! go to the OS thread's ambient execution): arrival order, wakers kept or replaced, woken
//! or only dropped through the `WakeList`, never by the queue itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Wake, Waker};

use interleave_engine::primitive::{WaitQueue, WakeList};

/// A waker that counts its wakes and, through its `Arc`'s count, its live clones.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (Arc<Counter>, Waker) {
    let counter = Arc::new(Counter::default());
    let waker = Waker::from(Arc::clone(&counter));
    (counter, waker)
}

fn wakes(counter: &Counter) -> usize {
    counter.0.load(Ordering::SeqCst)
}

#[test]
fn waiters_are_woken_longest_waiting_first_and_only_when_the_list_runs() {
    let (a, wa) = counter();
    let (b, wb) = counter();
    let mut queue = WaitQueue::new("wait for");
    let first = queue.push(1_u8, Some(&wa));
    let second = queue.push(2, Some(&wb));
    assert_ne!(first, second);
    assert_eq!(queue.iter().map(|(_, v)| *v).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(queue.back(), Some(second));
    let mut later = WakeList::new();
    assert_eq!(queue.wake_front(&mut later), Some((first, 1)));
    assert_eq!(wakes(&a), 0, "woken only when the list runs");
    later.run();
    assert_eq!((wakes(&a), wakes(&b)), (1, 0));
    assert_eq!(queue.get(second), Some(&2));
    assert_eq!(queue.get(first), None);
    assert_eq!(queue.len(), 1);
}

#[test]
fn a_waker_of_the_same_task_is_kept_and_another_replaces_it_unwoken() {
    let (a, wa) = counter();
    let (b, wb) = counter();
    let mut queue = WaitQueue::new("wait for");
    let id = queue.push((), Some(&wa));
    let mut later = WakeList::new();
    assert!(queue.set_waker(id, &wa.clone(), &mut later));
    assert_eq!(
        Arc::strong_count(&a),
        3,
        "the queue's clone, `wa`, the test's"
    );
    assert!(queue.set_waker(id, &wb, &mut later));
    later.run();
    assert_eq!(wakes(&a), 0, "a replaced waker is dropped, not woken");
    assert_eq!(Arc::strong_count(&a), 2);
    let mut later = WakeList::new();
    assert_eq!(queue.wake(id, &mut later), Some(()));
    later.run();
    assert_eq!(wakes(&b), 1);
    assert!(!queue.set_waker(id, &wb, &mut WakeList::new()), "it left");
}

#[test]
fn a_waiter_that_leaves_is_dropped_unwoken() {
    let (a, wa) = counter();
    let mut queue = WaitQueue::new("wait for");
    let id = queue.push(7_u32, Some(&wa));
    let mut later = WakeList::new();
    assert_eq!(queue.remove(id, &mut later), Some(7));
    assert_eq!(queue.remove(id, &mut later), None);
    assert_eq!(Arc::strong_count(&a), 3, "held by the list until it runs");
    later.run();
    assert_eq!((wakes(&a), Arc::strong_count(&a)), (0, 2));
    assert!(queue.is_empty());
}

#[test]
fn one_event_queues_keep_one_waker_per_task_and_wake_each_once() {
    let (a, wa) = counter();
    let (b, wb) = counter();
    let mut queue = WaitQueue::new("see a change of");
    queue.add(&wa);
    queue.add(&wa.clone());
    queue.add(&wb);
    assert_eq!(queue.len(), 2);
    let mut later = WakeList::new();
    queue.wake_all(&mut later);
    later.run();
    assert_eq!((wakes(&a), wakes(&b)), (1, 1));
    assert!(queue.is_empty());
}

#[test]
fn a_single_waiter_queue_replaces_its_waker_and_clears_unwoken() {
    let (a, wa) = counter();
    let (b, wb) = counter();
    let mut queue = WaitQueue::new("receive from");
    let mut later = WakeList::new();
    queue.set_only(&wa, &mut later);
    queue.set_only(&wb, &mut later);
    assert_eq!(queue.len(), 1);
    queue.clear(&mut later);
    later.run();
    assert_eq!((wakes(&a), wakes(&b)), (0, 0));
    assert_eq!((Arc::strong_count(&a), Arc::strong_count(&b)), (2, 2));
}

#[test]
fn waking_each_keeps_the_waiters_and_served_ids_are_new() {
    let (a, wa) = counter();
    let mut queue = WaitQueue::new("acquire a permit from");
    let id = queue.push(3_usize, Some(&wa));
    let mut later = WakeList::new();
    queue.wake_each(&mut later);
    later.run();
    assert_eq!(wakes(&a), 1);
    assert_eq!(queue.get(id), Some(&3), "still waiting, with no waker");
    if let Some(want) = queue.get_mut(id) {
        *want = 4;
    }
    assert_eq!(queue.front_mut().map(|(i, v)| (i, *v)), Some((id, 4)));
    let served = queue.served();
    assert_ne!(served, id);
    assert_eq!(queue.get(served), None);
}
