//! The failing models of the `hard_bugs` bench: Rust ports of programs of SCTBench (Thomson,
//! Donaldson and Betts, "Concurrency testing using controlled schedulers: an empirical
//! study", TOPC 2016; its `concurrent-software-benchmarks`, which in turn come from the
//! ESBMC and SV-COMP suites). Each is written anew from what the program does (its threads,
//! shared state and failing check, as SCTBench publishes them), not translated line by line.
//! Each is written once in the `hard_models!` macro and expanded over interleave-test and
//! shuttle.
//!
//! The C programs share plain `int`s and `pthread` mutexes; here an `int` that threads
//! touch outside a common lock is a `SeqCst` atomic (each access a switch point, as each
//! racy access is a scheduling point in the study's tool), and state always accessed under
//! one lock lives inside that `Mutex`. The C programs that return from `main` without
//! joining their threads join them here. Every bug is an `assert!` in a model thread or a
//! deadlock.
//!
//! "Preemptions" below is the least number of preemptions (switches away from a thread that
//! could go on) of a failing schedule, as a preemption-bounded DFS counts them: the bench
//! prints the least bound under which our DFS finds each bug. What makes a bug hard for a
//! random or PCT search is mostly how many other threads must be kept from running in a
//! window, which the doc of each model says.

/// Slots of [`QueueState`]'s ring, and the number of rounds of its two threads (SCTBench's
/// `SIZE`).
pub(crate) const QUEUE_SIZE: usize = 20;

/// The state of the `queue` model, all behind one lock: a bounded FIFO queue of `i32`, the
/// values the producer stored in order, and the two flags that hand turns between the
/// producer and the consumer.
#[derive(Debug)]
pub(crate) struct QueueState {
    slots: [i32; QUEUE_SIZE],
    head: usize,
    tail: usize,
    len: usize,
    /// `stored[k]`: the `k`-th value the producer enqueued.
    pub(crate) stored: [i32; QUEUE_SIZE],
    /// The producer's turn.
    pub(crate) enqueue_turn: bool,
    /// The consumer's turn.
    pub(crate) dequeue_turn: bool,
}

impl QueueState {
    /// An empty queue; the producer has the turn.
    pub(crate) fn new() -> QueueState {
        QueueState {
            slots: [0; QUEUE_SIZE],
            head: 0,
            tail: 0,
            len: 0,
            stored: [0; QUEUE_SIZE],
            enqueue_turn: true,
            dequeue_turn: false,
        }
    }

    /// Whether the queue holds nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `v`; panics when the queue is full (it never is in the model: at most
    /// [`QUEUE_SIZE`] values are enqueued).
    pub(crate) fn enqueue(&mut self, v: i32) {
        assert!(self.len < QUEUE_SIZE, "queue: enqueue on a full queue");
        self.slots[self.tail] = v;
        self.tail = (self.tail + 1) % QUEUE_SIZE;
        self.len += 1;
    }

    /// Removes the oldest value, or `None` when the queue is empty.
    pub(crate) fn dequeue(&mut self) -> Option<i32> {
        if self.is_empty() {
            return None;
        }
        let v = self.slots[self.head];
        self.head = (self.head + 1) % QUEUE_SIZE;
        self.len -= 1;
        Some(v)
    }
}

/// Capacity of [`StackState`], and the rounds of the `stack` model's two threads.
pub(crate) const STACK_SIZE: usize = 10;

/// The state of the `stack` model, behind one lock: a bounded stack and the flag that says
/// something was pushed once.
#[derive(Debug)]
pub(crate) struct StackState {
    items: [usize; STACK_SIZE],
    top: usize,
    /// Set by the first push, never cleared (the bug).
    pub(crate) pushed: bool,
}

impl StackState {
    /// An empty stack.
    pub(crate) fn new() -> StackState {
        StackState {
            items: [0; STACK_SIZE],
            top: 0,
            pushed: false,
        }
    }

    /// Pushes `v`; `false` on overflow.
    pub(crate) fn push(&mut self, v: usize) -> bool {
        if self.top == STACK_SIZE {
            return false;
        }
        self.items[self.top] = v;
        self.top += 1;
        true
    }

    /// Pops the top value; `None` on underflow.
    pub(crate) fn pop(&mut self) -> Option<usize> {
        self.top = self.top.checked_sub(1)?;
        Some(self.items[self.top])
    }
}

/// Writes the hard-bug models as `pub(crate) fn`s of module `$module`, over the crate
/// `$tool` (`interleave_test` or `shuttle`).
macro_rules! hard_models {
    ($module:ident, $tool:ident) => {
        pub(crate) mod $module {
            use super::{QUEUE_SIZE, QueueState, STACK_SIZE, StackState};
            use std::sync::PoisonError;
            use $tool::sync::atomic::{AtomicI32, Ordering::SeqCst};
            use $tool::sync::{Arc, Mutex, MutexGuard};
            use $tool::thread::{self, JoinHandle};

            /// Locks `m`, poisoned or not: the C programs' mutexes have no poisoning, and a
            /// poisoned lock must not add a second panic to the bug's (under shuttle 0.9.10,
            /// a torn-down task that panics on a poisoned lock leaves the OS thread marked
            /// as panicking after the failure is returned).
            fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
                m.lock().unwrap_or_else(PoisonError::into_inner)
            }

            /// Joins every handle. A thread's panic has already failed the execution in
            /// both tools, so what `join` returns is not looked at (unwrapping it would add
            /// a panic while the failing execution is torn down).
            fn join_all(handles: Vec<JoinHandle<()>>) {
                for h in handles {
                    let _ = h.join();
                }
            }

            /// The two variables of `reorder_N`, which every setter writes in order.
            struct Pair {
                a: AtomicI32,
                b: AtomicI32,
            }

            /// `reorder_N`: `setters` threads each store `a = 1` then `b = -1`; one checker,
            /// spawned last, asserts that it sees both or neither, with C's short-circuit
            /// reads: `(a == 0 && b == 0) || (a == 1 && b == -1)`.
            fn reorder_n(setters: usize) {
                let pair = Arc::new(Pair {
                    a: AtomicI32::new(0),
                    b: AtomicI32::new(0),
                });
                let mut handles: Vec<JoinHandle<()>> = (0..setters)
                    .map(|_| {
                        let p = Arc::clone(&pair);
                        thread::spawn(move || {
                            p.a.store(1, SeqCst);
                            p.b.store(-1, SeqCst);
                        })
                    })
                    .collect();
                let p = Arc::clone(&pair);
                handles.push(thread::spawn(move || {
                    let (a, b) = (&p.a, &p.b);
                    let neither = a.load(SeqCst) == 0 && b.load(SeqCst) == 0;
                    let both = a.load(SeqCst) == 1 && b.load(SeqCst) == -1;
                    assert!(neither || both, "reorder: the checker saw a set and b not");
                }));
                join_all(handles);
            }

            /// `reorder_3` (2 setters, 1 checker). The checker fails when it reads `a == 1`
            /// and then `b == 0`: some setter stored `a` and was preempted before `b`, and no
            /// setter stored `b` before the checker read it. One preemption (the setter's,
            /// between its stores); the window is two stores wide and every other setter
            /// that runs to its end closes it, so a random search's odds fall as setters are
            /// added, and PCT needs a priority change point right after one `a = 1`.
            pub(crate) fn reorder_3() {
                reorder_n(2);
            }

            /// `reorder_5` (4 setters, 1 checker): `reorder_3`'s bug with three setters that
            /// must stay out of the window instead of one.
            pub(crate) fn reorder_5() {
                reorder_n(4);
            }

            /// `reorder_10` (9 setters, 1 checker): eight setters to keep out of the window;
            /// SCTBench's hardest sizes of this program (10 and 20) are those a random
            /// search misses.
            pub(crate) fn reorder_10() {
                reorder_n(9);
            }

            /// The two stages of `twostage_N`, each a value behind its own lock. The second
            /// value is computed from the first without holding the first lock.
            struct Stages {
                lock1: Mutex<()>,
                data1: AtomicI32,
                lock2: Mutex<()>,
                data2: AtomicI32,
            }

            /// `twostage_N`: `writers` threads each set `data1 = 1` under `lock1`, then
            /// `data2 = data1 + 1` under `lock2`; one reader, spawned last, returns if
            /// `data1` is 0, else reads `data1` under `lock1`, then `data2` under `lock2`,
            /// and asserts `data2 == data1 + 1`.
            fn twostage_n(writers: usize) {
                let s = Arc::new(Stages {
                    lock1: Mutex::new(()),
                    data1: AtomicI32::new(0),
                    lock2: Mutex::new(()),
                    data2: AtomicI32::new(0),
                });
                let mut handles: Vec<JoinHandle<()>> = (0..writers)
                    .map(|_| {
                        let s = Arc::clone(&s);
                        thread::spawn(move || {
                            {
                                let _g = lock(&s.lock1);
                                s.data1.store(1, SeqCst);
                            }
                            let _g = lock(&s.lock2);
                            s.data2.store(s.data1.load(SeqCst) + 1, SeqCst);
                        })
                    })
                    .collect();
                let s = Arc::clone(&s);
                handles.push(thread::spawn(move || {
                    let t1 = {
                        let _g = lock(&s.lock1);
                        if s.data1.load(SeqCst) == 0 {
                            return;
                        }
                        s.data1.load(SeqCst)
                    };
                    let t2 = {
                        let _g = lock(&s.lock2);
                        s.data2.load(SeqCst)
                    };
                    assert_eq!(
                        t2,
                        t1 + 1,
                        "twostage: the reader saw stage 1 without stage 2"
                    );
                }));
                join_all(handles);
            }

            /// `twostage` (1 writer, 1 reader). The reader fails when it runs between the
            /// writer's two stages (it sees `data1 == 1`, `data2 == 0`): one preemption, of
            /// the writer between its two critical sections.
            pub(crate) fn twostage() {
                twostage_n(1);
            }

            /// `twostage_3` (2 writers, 1 reader, SCTBench's `twostage_N` with N = 3): the
            /// reader must also read `data2` before the other writer finishes its second
            /// stage, which would set `data2 = 2` and make the check pass.
            pub(crate) fn twostage_3() {
                twostage_n(2);
            }

            /// `twostage_10` (9 writers, 1 reader): the reader must read `data2` before any
            /// of 8 other writers finishes its second stage. SCTBench's size is 100, which
            /// random searches miss; at about 1 ms an execution it would take this bench a
            /// quarter of an hour, so the bench runs 10.
            pub(crate) fn twostage_10() {
                twostage_n(9);
            }

            /// The state of `wronglock`: one counter and two locks; the checked thread takes
            /// one and the others take the other, so the lock protects nothing.
            struct TwoLocks {
                data_lock: Mutex<()>,
                this_lock: Mutex<()>,
                value: AtomicI32,
            }

            /// `wronglock`'s threads: one checker, spawned first, reads the counter, then
            /// increments it with a load and a store (C's `value++`) under `data_lock`, and
            /// asserts that it is one more than it read; `others` threads each increment it
            /// the same way under `this_lock`.
            fn wronglock_n(others: usize) {
                let s = Arc::new(TwoLocks {
                    data_lock: Mutex::new(()),
                    this_lock: Mutex::new(()),
                    value: AtomicI32::new(0),
                });
                let c = Arc::clone(&s);
                let mut handles = vec![thread::spawn(move || {
                    let _g = lock(&c.data_lock);
                    let x = c.value.load(SeqCst);
                    let v = c.value.load(SeqCst);
                    c.value.store(v + 1, SeqCst);
                    assert_eq!(c.value.load(SeqCst), x + 1, "wronglock: an update got in");
                })];
                for _ in 0..others {
                    let s = Arc::clone(&s);
                    handles.push(thread::spawn(move || {
                        let _g = lock(&s.this_lock);
                        let v = s.value.load(SeqCst);
                        s.value.store(v + 1, SeqCst);
                    }));
                }
                join_all(handles);
            }

            /// `wronglock` (1 checker, 7 others). The checker fails when another thread's
            /// store lands between its first and last load: one preemption of the checker
            /// (or of an other between its load and store), and many others make the window
            /// easy to hit by chance; what makes it hard for a systematic search is the
            /// number of threads.
            pub(crate) fn wronglock() {
                wronglock_n(7);
            }

            /// `wronglock_3` (1 checker, 3 others): `wronglock` with fewer threads to get in.
            pub(crate) fn wronglock_3() {
                wronglock_n(3);
            }

            /// `queue` (SCTBench's `queue_bad`): a producer enqueues `0`, then in each of
            /// `QUEUE_SIZE - 1` rounds, when it has the turn, enqueues the next value, records
            /// it in `stored` and gives the turn to the consumer. The consumer, in each of
            /// `QUEUE_SIZE` rounds, when it has the turn, dequeues and asserts that the value
            /// is `stored[round]`, and gives the turn back. The missing check: the consumer
            /// counts its rounds, not its dequeues, so a round in which it does not have the
            /// turn (it takes the lock twice in a row, or before the producer's first round)
            /// puts its index ahead of the queue, and its next dequeue fails. One preemption:
            /// the consumer, started first, is preempted after a round without the turn (or
            /// the producer after it gave the turn, and the consumer takes the lock twice);
            /// a schedule that runs either thread to its end first passes. Nearly every
            /// random schedule fails, as in the original; PCT needs its change point in the
            /// right one of about 40 lock acquisitions.
            pub(crate) fn queue() {
                let m = Arc::new(Mutex::new(QueueState::new()));
                let p = Arc::clone(&m);
                let producer = thread::spawn(move || {
                    {
                        let mut q = lock(&p);
                        q.enqueue(0);
                        q.stored[0] = 0;
                        assert!(!q.is_empty(), "queue: empty after an enqueue");
                    }
                    let mut value = 0;
                    for i in 0..QUEUE_SIZE - 1 {
                        let mut q = lock(&p);
                        if q.enqueue_turn {
                            value += 1;
                            q.enqueue(value);
                            q.stored[i + 1] = value;
                            q.enqueue_turn = false;
                            q.dequeue_turn = true;
                        }
                    }
                });
                let c = Arc::clone(&m);
                let consumer = thread::spawn(move || {
                    for i in 0..QUEUE_SIZE {
                        let mut q = lock(&c);
                        if q.dequeue_turn {
                            let got = q.dequeue();
                            assert_eq!(got, Some(q.stored[i]), "queue: dequeued out of step");
                            q.dequeue_turn = false;
                            q.enqueue_turn = true;
                        }
                    }
                });
                join_all(vec![producer, consumer]);
            }

            /// `deadlock01`: one thread locks `a` then `b`, the other `b` then `a`, each to
            /// change a counter. Deadlocks when each holds its first lock: one preemption,
            /// of the first thread between its two locks.
            pub(crate) fn deadlock01() {
                let a = Arc::new(Mutex::new(()));
                let b = Arc::new(Mutex::new(1i32));
                let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
                let t1 = thread::spawn(move || {
                    let _ga = lock(&a1);
                    *lock(&b1) += 1;
                });
                let t2 = thread::spawn(move || {
                    let mut gb = lock(&b);
                    let _ga = lock(&a);
                    *gb -= 1;
                });
                join_all(vec![t1, t2]);
            }

            /// The state of `carter01`: the count of active operations of each class, behind
            /// `m`, and `l`, held while any operation of one class is active.
            struct Classes {
                m: Mutex<[i32; 2]>,
                l: Mutex<()>,
            }

            /// One operation of class `class` of `carter01`: under `m`, count it in and take
            /// `l` if it is the first; later, under `m` again, count it out and release `l`
            /// if it is the last.
            fn class_operation(s: &Classes, class: usize) {
                let mut held = None;
                {
                    let mut active = lock(&s.m);
                    active[class] += 1;
                    if active[class] == 1 {
                        held = Some(lock(&s.l));
                    }
                }
                // The operation itself.
                let mut active = lock(&s.m);
                active[class] -= 1;
                if active[class] == 0 {
                    drop(held.take());
                }
            }

            /// `carter01`: an operation of class A and one of class B (with two threads that
            /// do nothing, as in the original). Deadlocks when A holds `l` between its two
            /// critical sections and B, holding `m`, waits for `l`: A then waits for `m`.
            /// One preemption, of A after it released `m`.
            pub(crate) fn carter01() {
                let s = Arc::new(Classes {
                    m: Mutex::new([0, 0]),
                    l: Mutex::new(()),
                });
                let mut handles = Vec::new();
                for class in 0..2 {
                    let s = Arc::clone(&s);
                    handles.push(thread::spawn(move || class_operation(&s, class)));
                }
                handles.push(thread::spawn(|| {}));
                handles.push(thread::spawn(|| {}));
                join_all(handles);
            }

            /// The state of `account`, behind one lock.
            struct Account {
                balance: i32,
                deposited: bool,
                withdrawn: bool,
            }

            /// `account`: a checker (spawned first), a deposit of 2 and a withdrawal of 4 on
            /// a balance of 1, each one critical section. Once both are done the checker
            /// asserts the wrong balance, `(1 - 2) - 4`, so it fails whenever it runs last:
            /// no preemption, only the order in which the three start.
            pub(crate) fn account() {
                const X: i32 = 1;
                const Y: i32 = 2;
                const Z: i32 = 4;
                let m = Arc::new(Mutex::new(Account {
                    balance: X,
                    deposited: false,
                    withdrawn: false,
                }));
                let c = Arc::clone(&m);
                let checker = thread::spawn(move || {
                    let acc = lock(&c);
                    if acc.deposited && acc.withdrawn {
                        assert_eq!(acc.balance, (X - Y) - Z, "account: wrong balance");
                    }
                });
                let d = Arc::clone(&m);
                let deposit = thread::spawn(move || {
                    let mut acc = lock(&d);
                    acc.balance += Y;
                    acc.deposited = true;
                });
                let withdraw = thread::spawn(move || {
                    let mut acc = lock(&m);
                    acc.balance -= Z;
                    acc.withdrawn = true;
                });
                join_all(vec![checker, deposit, withdraw]);
            }

            /// `stack`: a pusher pushes `0..STACK_SIZE`, one per critical section, and sets a
            /// flag; a popper, in each of `STACK_SIZE` critical sections, pops once the flag
            /// is set and asserts it did not underflow. The flag is never cleared, so two pops
            /// in a row after the first push underflow: one preemption, of the pusher after
            /// its first push, and the popper then takes the lock twice in a row.
            pub(crate) fn stack() {
                let m = Arc::new(Mutex::new(StackState::new()));
                let p = Arc::clone(&m);
                let pusher = thread::spawn(move || {
                    for i in 0..STACK_SIZE {
                        let mut s = lock(&p);
                        assert!(s.push(i), "stack: overflow");
                        s.pushed = true;
                    }
                });
                let popper = thread::spawn(move || {
                    for _ in 0..STACK_SIZE {
                        let mut s = lock(&m);
                        if s.pushed {
                            assert!(s.pop().is_some(), "stack: underflow");
                        }
                    }
                });
                join_all(vec![pusher, popper]);
            }

            /// The state of `token_ring`, behind one lock (the original's atomic blocks).
            struct Ring {
                x: [i32; 3],
                done: [bool; 3],
            }

            /// `token_ring`: three threads pass a value round a ring, each one atomic block
            /// (`x1 = (x3 + 1) % 4`, `x2 = x1`, `x3 = x2`, from 1, 2, 1), and a checker
            /// asserts, once all three are done, that the three are equal. They end equal
            /// only when the first block runs first (orders 1, 2, 3 and 1, 3, 2), so the
            /// checker fails whenever it runs last after any other order: no preemption.
            pub(crate) fn token_ring() {
                let m = Arc::new(Mutex::new(Ring {
                    x: [1, 2, 1],
                    done: [false; 3],
                }));
                let mut handles = Vec::new();
                for i in 0..3 {
                    let r = Arc::clone(&m);
                    handles.push(thread::spawn(move || {
                        let mut ring = lock(&r);
                        let from = (i + 2) % 3;
                        let v = if i == 0 {
                            (ring.x[from] + 1) % 4
                        } else {
                            ring.x[from]
                        };
                        ring.x[i] = v;
                        ring.done[i] = true;
                    }));
                }
                handles.push(thread::spawn(move || {
                    let ring = lock(&m);
                    if ring.done.iter().all(|&d| d) {
                        let [x1, x2, x3] = ring.x;
                        assert!(x1 == x2 && x2 == x3, "token_ring: {:?}", ring.x);
                    }
                }));
                join_all(handles);
            }

            /// `lazy01`: two threads add 1 and 2 to a locked counter; a third asserts under
            /// the lock that it is below 3, so it fails when it runs after both: no
            /// preemption.
            pub(crate) fn lazy01() {
                let m = Arc::new(Mutex::new(0i32));
                let mut handles = Vec::new();
                for add in [1, 2] {
                    let m = Arc::clone(&m);
                    handles.push(thread::spawn(move || *lock(&m) += add));
                }
                handles.push(thread::spawn(move || {
                    let data = *lock(&m);
                    assert!(data < 3, "lazy01: both additions ran first");
                }));
                join_all(handles);
            }
        }
    };
}

hard_models!(hard_ours, interleave_test);
hard_models!(hard_shuttle, shuttle);
