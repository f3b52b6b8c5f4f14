//! The real scheduler driver in virtual time through arbitrary cluster events, binder and
//! Permit-plugin answers and time, checked after every step (see
//! `gangway_fuzz::scheduler_events`). `GANGWAY_FUZZ_FLAW=<flaw>` plants a flaw (a witness).

#![no_main]

use gangway_fuzz::scheduler_events::{self, Input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: scheduler_events::init(), |input: Input| {
    scheduler_events::scheduler_events(&input);
});
