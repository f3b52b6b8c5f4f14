//! A map's `Debug` from its entries in the order given (what `fmt::from_fn` would do, which
//! needs Rust 1.93; the library builds on older toolchains).

use std::fmt;

/// Shows `entries` as a `Debug` map, in their order.
pub(crate) struct DebugMap<K, V>(pub(crate) Vec<(K, V)>);

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for DebugMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}
