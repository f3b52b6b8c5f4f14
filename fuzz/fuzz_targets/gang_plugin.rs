//! The real gang plugin in lockstep with the reference `GangModel`, through the model's
//! lockstep driver (see `gangway_fuzz::gang_plugin`): byte 0 picks the setup, the rest are the
//! driver's ops. `GANGWAY_FUZZ_FLAW=<flaw>` plants a flaw (a witness).

#![no_main]

use gangway_fuzz::gang_plugin::{self, Input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: gang_plugin::init(), |input: Input| {
    gang_plugin::gang_plugin(&input);
});
