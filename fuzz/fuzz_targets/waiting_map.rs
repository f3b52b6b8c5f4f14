//! The sharded waiting map beside the reference model and the pure state, through arbitrary
//! adds, allows, rejections, batches and expiries, checked after every op (see
//! `gangway_fuzz::waiting_map`). `GANGWAY_FUZZ_FLAW=<flaw>` plants a flaw (a witness).

#![no_main]

use gangway_fuzz::waiting_map::{self, Op};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: waiting_map::init(), |ops: Vec<Op>| {
    waiting_map::waiting_map(&ops);
});
