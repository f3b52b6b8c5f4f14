//! Differential fuzzing of the scheduling queue: random `Vec<Op>` against the reference model,
//! checking equality, I4 and I7 after every op (see `gangway_fuzz`).

#![no_main]

use gangway_fuzz::Op;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|ops: Vec<Op>| {
    gangway_fuzz::queue_moves(&ops);
});
