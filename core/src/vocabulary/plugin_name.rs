use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::sync::Arc;

/// The name of a scheduler plugin ("GangScheduling"). Static names cost nothing to create or
/// clone; names built at run time share one allocation. Compares as its string.
#[derive(Clone)]
pub struct PluginName(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl PluginName {
    /// A plugin name from a string literal; free to create and clone.
    pub const fn new_static(name: &'static str) -> PluginName {
        PluginName(Repr::Static(name))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Shared(s) => s,
        }
    }
}

impl From<&'static str> for PluginName {
    fn from(name: &'static str) -> Self {
        PluginName::new_static(name)
    }
}

impl From<String> for PluginName {
    fn from(name: String) -> Self {
        PluginName(Repr::Shared(name.into()))
    }
}

impl Borrow<str> for PluginName {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for PluginName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for PluginName {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.as_str(), other.as_str());
        // The same literal or the same shared allocation: no need to compare bytes.
        std::ptr::eq(a, b) || a == b
    }
}

impl Eq for PluginName {}

impl PartialEq<str> for PluginName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for PluginName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for PluginName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PluginName {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for PluginName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for PluginName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for PluginName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_and_shared_names_compare_as_strings() {
        let a = PluginName::new_static("GangScheduling");
        let b = PluginName::from(String::from("GangScheduling"));
        assert_eq!(a, b);
        assert_eq!(a, "GangScheduling");
        let (x, y) = (PluginName::from("A"), PluginName::from("B".to_owned()));
        assert!(x < y);
        assert_eq!(format!("{a} {b:?}"), "GangScheduling \"GangScheduling\"");
    }

    /// A table keyed by plugin names is looked up by the name as a `&str` (`Borrow`), and
    /// `AsRef` gives the name itself.
    #[test]
    fn a_name_is_found_and_seen_as_its_str() {
        use std::collections::{BTreeMap, HashMap};
        let name = PluginName::from(String::from("NodeResourcesFit"));
        let hashed: HashMap<PluginName, u32> = [(name.clone(), 1)].into();
        let ordered: BTreeMap<PluginName, u32> = [(name.clone(), 2)].into();
        assert_eq!(hashed.get("NodeResourcesFit"), Some(&1));
        assert_eq!(ordered.get("NodeResourcesFit"), Some(&2));
        assert_eq!(hashed.get("xyzzy"), None);
        let as_ref: &str = name.as_ref();
        assert_eq!(as_ref, "NodeResourcesFit");
    }
}
