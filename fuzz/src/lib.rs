//! The harnesses behind the five fuzz targets, as plain functions so that `cargo test` (in
//! `fuzz/`) replays the committed seeds, regressions and witnesses without libFuzzer. One
//! module per target; fuzz/README.md says what each runs and checks.

/// The first target's harness, `queue_moves`: the real scheduling queue beside the reference
/// `QueueModel`, in every configuration its setup byte picks.
pub mod queue_moves;

/// The second target's harness, `scheduler_events`: the whole scheduler driver in virtual time
/// through arbitrary cluster events (see the module and fuzz/README.md).
pub mod scheduler_events;

/// `Arbitrary` for an input type that reads all of libFuzzer's bytes with its own
/// `decode(&[u8]) -> Self` (every byte string is an input), so that `cargo fuzz fmt` prints it.
#[macro_export]
macro_rules! arbitrary_from_bytes {
    ($input:ty) => {
        impl<'a> libfuzzer_sys::arbitrary::Arbitrary<'a> for $input {
            fn arbitrary(
                u: &mut libfuzzer_sys::arbitrary::Unstructured<'a>,
            ) -> libfuzzer_sys::arbitrary::Result<Self> {
                let bytes = u.bytes(u.len())?;
                Ok(<$input>::decode(bytes))
            }

            fn arbitrary_take_rest(
                u: libfuzzer_sys::arbitrary::Unstructured<'a>,
            ) -> libfuzzer_sys::arbitrary::Result<Self> {
                Ok(<$input>::decode(u.take_rest()))
            }

            fn size_hint(_depth: usize) -> (usize, Option<usize>) {
                (0, None)
            }
        }
    };
}

/// The witness mechanism every target shares: the flaw `GANGWAY_FUZZ_FLAW` plants.
pub mod plantable;

/// The `waiting_map` target's harness: the sharded waiting map beside the reference
/// `WaitingModel`.
pub mod waiting_map;

/// The `gang_plugin` target's harness: the gang plugin beside the reference `GangModel`.
pub mod gang_plugin;

/// The `k8s_objects` target's harness: untrusted Kubernetes objects through the conversions.
pub mod k8s_objects;

/// The committed inputs' shared tests (test builds only).
#[cfg(test)]
mod committed;
