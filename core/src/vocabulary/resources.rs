use std::fmt;
use std::ops::Add;

use crate::sync::Arc;

/// Extended resources: (name, amount) sorted by name, no zero amount.
type Extended = Vec<(Arc<str>, u64)>;

/// An amount of resources: CPU in millicores, memory in bytes, and any number of named
/// *extended* resources counted in integer units — accelerators (`nvidia.com/gpu`), hugepages
/// (`hugepages-2Mi`, in bytes), `ephemeral-storage` (bytes), devices. Used both for what a pod
/// requests and for what a node has (capacity, requested, free).
///
/// Accounting is exact integer arithmetic, resource by resource: a pod fits a node when every
/// resource it asks for — each extended one by its name — is free there; a node without a
/// resource has none of it. Arithmetic never panics: [`Add`] and
/// [`saturating_add`](Resources::saturating_add) saturate at `u64::MAX`,
/// [`saturating_sub`](Resources::saturating_sub) at zero. A zero amount of an extended
/// resource is the same as not naming it, so equal amounts compare equal (I5 sums them).
///
/// ```
/// use gangsched::Resources;
/// let free = Resources::new(2000, 4 << 30).with_extended("nvidia.com/gpu", 8);
/// let pod = Resources::new(500, 1 << 30).with_extended("nvidia.com/gpu", 2);
/// assert!(pod.fits_in(&free));
/// assert_eq!(
///     free.checked_sub(&pod),
///     Some(Resources::new(1500, 3 << 30).with_extended("nvidia.com/gpu", 6))
/// );
/// assert_eq!(pod.to_string(), "cpu 500m, memory 1Gi, nvidia.com/gpu 2");
/// // A node without GPUs has room for no GPU pod.
/// assert!(!pod.fits_in(&Resources::new(8000, 64 << 30)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resources {
    /// CPU in millicores (1000 = one core).
    pub cpu_millis: u64,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Extended resources by name, sorted, without zero amounts; `None` when there are none
    /// (one word in every pod, which mostly asks for none).
    extended: Option<Box<Extended>>,
}

impl Resources {
    /// Nothing: no CPU, no memory, no extended resource.
    pub const ZERO: Resources = Resources::new(0, 0);

    /// `cpu_millis` millicores and `memory_bytes` bytes, no extended resource.
    pub const fn new(cpu_millis: u64, memory_bytes: u64) -> Resources {
        Resources {
            cpu_millis,
            memory_bytes,
            extended: None,
        }
    }

    /// The extended resources, sorted by name.
    fn entries(&self) -> &[(Arc<str>, u64)] {
        self.extended.as_deref().map_or(&[], Vec::as_slice)
    }

    /// These resources with `amount` of the extended resource `name` (replacing any amount of
    /// it already there; zero removes it). Names are compared exactly, as Kubernetes does
    /// (`nvidia.com/gpu`, `hugepages-1Gi`); `cpu` and `memory` are the fields, not names here.
    pub fn with_extended(mut self, name: &str, amount: u64) -> Resources {
        self.set_extended(name, amount);
        self
    }

    /// Sets the amount of the extended resource `name` (zero removes it).
    pub fn set_extended(&mut self, name: &str, amount: u64) {
        let entries = self.extended.get_or_insert_with(Default::default);
        match entries.binary_search_by(|(n, _)| (**n).cmp(name)) {
            Ok(at) if amount == 0 => {
                entries.remove(at);
            }
            Ok(at) => entries[at].1 = amount,
            Err(_) if amount == 0 => {}
            Err(at) => entries.insert(at, (name.into(), amount)),
        }
        if entries.is_empty() {
            self.extended = None;
        }
    }

    /// The amount of the extended resource `name` (zero when it is not named).
    pub fn extended(&self, name: &str) -> u64 {
        let entries = self.entries();
        entries
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .map_or(0, |at| entries[at].1)
    }

    /// The extended resources with a nonzero amount, by name in order.
    pub fn extended_resources(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.entries()
            .iter()
            .map(|(name, amount)| (&**name, *amount))
    }

    /// Whether `self` fits beside `requested` within `capacity` — in what
    /// `capacity.saturating_sub(requested)` leaves free — without building that difference.
    pub fn fits_beside(&self, requested: &Resources, capacity: &Resources) -> bool {
        let free = |want: u64, used: u64, have: u64| want <= have.saturating_sub(used);
        free(self.cpu_millis, requested.cpu_millis, capacity.cpu_millis)
            && free(
                self.memory_bytes,
                requested.memory_bytes,
                capacity.memory_bytes,
            )
            && self
                .extended_resources()
                .all(|(name, want)| free(want, requested.extended(name), capacity.extended(name)))
    }

    /// Whether `self` fits in `free`: no resource exceeds what is free of it.
    pub fn fits_in(&self, free: &Resources) -> bool {
        self.insufficient(free).next().is_none()
    }

    /// The resources of `self` that exceed what `free` has, by name (`cpu`, `memory`, then the
    /// extended ones in order): kube-scheduler's "Insufficient …" reasons.
    pub fn insufficient<'a: 'b, 'b>(
        &'a self,
        free: &'b Resources,
    ) -> impl Iterator<Item = &'a str> + 'b {
        let cpu = (self.cpu_millis > free.cpu_millis).then_some("cpu");
        let memory = (self.memory_bytes > free.memory_bytes).then_some("memory");
        let extended = self
            .extended_resources()
            .filter(|&(name, amount)| amount > free.extended(name))
            .map(|(name, _)| name);
        cpu.into_iter().chain(memory).chain(extended)
    }

    /// The sum, each resource saturating at `u64::MAX`.
    pub fn saturating_add(&self, other: &Resources) -> Resources {
        self.combine(other, u64::saturating_add)
    }

    /// The difference, each resource saturating at zero.
    pub fn saturating_sub(&self, other: &Resources) -> Resources {
        self.combine(other, u64::saturating_sub)
    }

    /// The difference, or `None` if `other` exceeds `self` in any resource.
    pub fn checked_sub(&self, other: &Resources) -> Option<Resources> {
        other.fits_in(self).then(|| self.saturating_sub(other))
    }

    /// Whether any resource is at `u64::MAX`, where a saturating sum stops being exact.
    pub fn is_saturated(&self) -> bool {
        self.cpu_millis == u64::MAX
            || self.memory_bytes == u64::MAX
            || self.entries().iter().any(|&(_, amount)| amount == u64::MAX)
    }

    /// Whether every resource is zero.
    pub fn is_zero(&self) -> bool {
        self.cpu_millis == 0 && self.memory_bytes == 0 && self.extended.is_none()
    }

    /// Each resource of either side combined with `op` (a missing one is zero); zero results
    /// are dropped, so the result is normalized.
    fn combine(&self, other: &Resources, op: fn(u64, u64) -> u64) -> Resources {
        let (mine, theirs) = (self.entries(), other.entries());
        if mine.is_empty() && theirs.is_empty() {
            // What nearly every pod and node has: no extended resource, nothing to merge.
            return Resources::new(
                op(self.cpu_millis, other.cpu_millis),
                op(self.memory_bytes, other.memory_bytes),
            );
        }
        let mut extended = Vec::with_capacity(mine.len().max(theirs.len()));
        let (mut a, mut b) = (mine.iter().peekable(), theirs.iter().peekable());
        loop {
            let (name, amount) = match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some((n, x)), None) => (n, op(*x, 0)),
                (None, Some((n, y))) => (n, op(0, *y)),
                (Some((n, x)), Some((m, y))) => match (**n).cmp(&**m) {
                    std::cmp::Ordering::Less => (n, op(*x, 0)),
                    std::cmp::Ordering::Greater => (m, op(0, *y)),
                    std::cmp::Ordering::Equal => (n, op(*x, *y)),
                },
            };
            let name = name.clone();
            if a.peek().is_some_and(|(n, _)| *n == name) {
                a.next();
            }
            if b.peek().is_some_and(|(m, _)| *m == name) {
                b.next();
            }
            if amount != 0 {
                extended.push((name, amount));
            }
        }
        Resources {
            cpu_millis: op(self.cpu_millis, other.cpu_millis),
            memory_bytes: op(self.memory_bytes, other.memory_bytes),
            extended: (!extended.is_empty()).then(|| Box::new(extended)),
        }
    }
}

/// Saturating, as [`Resources::saturating_add`].
impl Add for Resources {
    type Output = Resources;

    fn add(self, other: Resources) -> Resources {
        self.saturating_add(&other)
    }
}

/// Saturating, as [`Resources::saturating_add`].
impl Add<&Resources> for &Resources {
    type Output = Resources;

    fn add(self, other: &Resources) -> Resources {
        self.saturating_add(other)
    }
}

/// `cpu <millicores>m, memory <amount>[, <name> <amount>]…`: memory in the largest binary unit
/// (`Ki`, `Mi`, `Gi`, `Ti`) that divides it exactly, else in bytes; extended resources by name
/// in order — e.g. `cpu 500m, memory 1Gi`, `cpu 0m, memory 1500, nvidia.com/gpu 8`.
impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpu {}m, memory ", self.cpu_millis)?;
        let bytes = self.memory_bytes;
        let unit = [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)]
            .into_iter()
            .find(|&(_, shift)| bytes != 0 && bytes.is_multiple_of(1u64 << shift));
        match unit {
            Some((suffix, shift)) => write!(f, "{}{suffix}", bytes >> shift)?,
            None => write!(f, "{bytes}")?,
        }
        for (name, amount) in self.extended_resources() {
            write!(f, ", {name} {amount}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
