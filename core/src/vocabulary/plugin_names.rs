use std::fmt;

use smallvec::SmallVec;

use super::PluginName;

/// A small set of plugin names in name order — the plugins that rejected a pod in its last
/// attempt. One name lives inline in the pod's queue record, so walking the
/// unschedulable pool to ask queueing hints follows no pointer per pod.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct PluginNames(SmallVec<[PluginName; 1]>);

impl PluginNames {
    /// No plugins.
    pub fn new() -> PluginNames {
        PluginNames::default()
    }

    /// Adds `plugin`; whether it was new.
    pub fn insert(&mut self, plugin: PluginName) -> bool {
        match self.0.binary_search(&plugin) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, plugin);
                true
            }
        }
    }

    /// Whether `plugin` is in the set.
    pub fn contains(&self, plugin: &str) -> bool {
        self.0.iter().any(|p| p == plugin)
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many plugins are in the set.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The names, in name order.
    pub fn iter(&self) -> std::slice::Iter<'_, PluginName> {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a PluginNames {
    type Item = &'a PluginName;
    type IntoIter = std::slice::Iter<'a, PluginName>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<P: Into<PluginName>> FromIterator<P> for PluginNames {
    fn from_iter<I: IntoIterator<Item = P>>(iter: I) -> Self {
        let mut set = PluginNames::new();
        for p in iter {
            set.insert(p.into());
        }
        set
    }
}

impl fmt::Debug for PluginNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::PluginNames;

    #[test]
    fn keeps_names_sorted_and_distinct() {
        let set: PluginNames = ["b", "a", "b", "c"].into_iter().collect();
        assert_eq!(set.len(), 3);
        assert!(set.contains("c") && !set.contains("d"));
        let names: Vec<&str> = set.iter().map(|p| p.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let by_ref: Vec<&str> = (&set).into_iter().map(|p| p.as_str()).collect();
        assert_eq!(by_ref, names, "a reference iterates as iter does");
        assert_eq!(format!("{set:?}"), r#"{"a", "b", "c"}"#);
    }
}
