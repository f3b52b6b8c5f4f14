//! Loom model of the sync facade's channel (`gangsched::sync::channel`). Under `--cfg loom` and
//! `--cfg shuttle` it is the facade's own, built from its `Mutex` and `Condvar` so that the
//! checkers see every send and every blocking receive; the binding workers and the decision
//! sinks rely on two of its promises, modelled here on every interleaving:
//!
//! - a receiver blocked in `recv` wakes when the last sender is dropped, and sees the channel
//!   disconnected only after every value sent (a worker pool stops when its job sender goes);
//! - a send to a dropped receiver hands its value back.
//!
//! Found missing by mutation testing (issue #43, docs/mutation.md): a sender's `Drop` that
//! forgot to count itself out went through every other tier.

use gangsched::sync::{channel, model, thread};

#[test]
fn the_last_senders_drop_wakes_the_receiver_after_every_value() {
    model(|| {
        let (first, received) = channel::unbounded::<u32>();
        let second = first.clone();
        let a = thread::spawn("a", move || first.send(1).unwrap());
        let b = thread::spawn("b", move || second.send(2).unwrap());
        let mut values = Vec::new();
        // Ends only when both senders are gone: loom reports a receiver never woken.
        while let Ok(value) = received.recv() {
            values.push(value);
        }
        values.sort_unstable();
        assert_eq!(values, [1, 2], "every value before the disconnection");
        a.join().unwrap();
        b.join().unwrap();
    });
}

#[test]
fn a_send_to_a_dropped_receiver_hands_its_value_back() {
    model(|| {
        let (sender, receiver) = channel::unbounded::<u32>();
        let dropper = thread::spawn("dropper", move || drop(receiver));
        dropper.join().unwrap();
        assert_eq!(sender.send(7).map_err(|e| e.0), Err(7));
    });
}
