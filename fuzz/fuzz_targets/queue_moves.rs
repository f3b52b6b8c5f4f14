//! Differential fuzzing of the scheduling queue: a setup byte (the queue's configuration) and
//! random `Vec<Op>` against the reference model, checking equality, I4 and I7 after every op
//! (see `gangway_fuzz::queue_moves`).

#![no_main]

use gangway_fuzz::queue_moves::{self, Input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: queue_moves::init(), |input: Input| {
    queue_moves::queue_moves(&input);
});
