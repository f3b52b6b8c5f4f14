//! Untrusted Kubernetes objects through gangsched's `k8s` conversions: structure-aware JSON
//! shaped like a Pod, Node or PodGroup (or bare quantities), deserialized and converted, and
//! every quantity checked against an exact oracle (see `gangway_fuzz::k8s_objects`).
//! `GANGWAY_FUZZ_FLAW=<flaw>` plants a flaw in the quantity parser (a witness).

#![no_main]

use gangway_fuzz::k8s_objects;
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: k8s_objects::init(), |bytes: &[u8]| {
    k8s_objects::k8s_objects(bytes);
});
