use std::fmt;
use std::ops::Add;

/// An amount of the two resources the scheduler accounts for: CPU in millicores and memory in
/// bytes. Used both for what a pod requests and for what a node has (capacity, requested,
/// free). Arithmetic never panics: [`Add`] and [`saturating_add`](Resources::saturating_add)
/// saturate at `u64::MAX`, [`saturating_sub`](Resources::saturating_sub) at zero.
///
/// ```
/// use gangsched::Resources;
/// let free = Resources::new(2000, 4 << 30);
/// let pod = Resources::new(500, 1 << 30);
/// assert!(pod.fits_in(free));
/// assert_eq!(free.checked_sub(pod), Some(Resources::new(1500, 3 << 30)));
/// assert_eq!(pod.to_string(), "cpu 500m, memory 1Gi");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    /// CPU in millicores (1000 = one core).
    pub cpu_millis: u64,
    /// Memory in bytes.
    pub memory_bytes: u64,
}

impl Resources {
    /// Nothing: no CPU, no memory.
    pub const ZERO: Resources = Resources::new(0, 0);

    /// `cpu_millis` millicores and `memory_bytes` bytes.
    pub const fn new(cpu_millis: u64, memory_bytes: u64) -> Resources {
        Resources {
            cpu_millis,
            memory_bytes,
        }
    }

    /// Whether `self` fits in `free`: neither resource exceeds what is free.
    pub fn fits_in(self, free: Resources) -> bool {
        self.cpu_millis <= free.cpu_millis && self.memory_bytes <= free.memory_bytes
    }

    /// The sum, each resource saturating at `u64::MAX`.
    pub fn saturating_add(self, other: Resources) -> Resources {
        Resources::new(
            self.cpu_millis.saturating_add(other.cpu_millis),
            self.memory_bytes.saturating_add(other.memory_bytes),
        )
    }

    /// The difference, each resource saturating at zero.
    pub fn saturating_sub(self, other: Resources) -> Resources {
        Resources::new(
            self.cpu_millis.saturating_sub(other.cpu_millis),
            self.memory_bytes.saturating_sub(other.memory_bytes),
        )
    }

    /// The difference, or `None` if `other` exceeds `self` in either resource.
    pub fn checked_sub(self, other: Resources) -> Option<Resources> {
        Some(Resources::new(
            self.cpu_millis.checked_sub(other.cpu_millis)?,
            self.memory_bytes.checked_sub(other.memory_bytes)?,
        ))
    }

    /// Whether both resources are zero.
    pub fn is_zero(self) -> bool {
        self == Resources::ZERO
    }
}

/// Saturating, as [`Resources::saturating_add`].
impl Add for Resources {
    type Output = Resources;

    fn add(self, other: Resources) -> Resources {
        self.saturating_add(other)
    }
}

/// `cpu <millicores>m, memory <amount>`: memory in the largest binary unit (`Ki`, `Mi`, `Gi`,
/// `Ti`) that divides it exactly, else in bytes — e.g. `cpu 500m, memory 1Gi`,
/// `cpu 0m, memory 1500`.
impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpu {}m, memory ", self.cpu_millis)?;
        let bytes = self.memory_bytes;
        let unit = [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)]
            .into_iter()
            .find(|&(_, shift)| bytes != 0 && bytes.is_multiple_of(1u64 << shift));
        match unit {
            Some((suffix, shift)) => write!(f, "{}{suffix}", bytes >> shift),
            None => write!(f, "{bytes}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_in_needs_both_resources() {
        let free = Resources::new(1000, 100);
        assert!(Resources::new(1000, 100).fits_in(free));
        assert!(Resources::ZERO.fits_in(Resources::ZERO));
        assert!(!Resources::new(1001, 0).fits_in(free));
        assert!(!Resources::new(0, 101).fits_in(free));
    }

    #[test]
    fn arithmetic_saturates_or_reports() {
        let a = Resources::new(5, 7);
        let b = Resources::new(3, 9);
        assert_eq!(a + b, Resources::new(8, 16));
        assert_eq!(a.saturating_sub(b), Resources::new(2, 0));
        assert_eq!(a.checked_sub(b), None);
        assert_eq!(
            b.checked_sub(Resources::new(3, 1)),
            Some(Resources::new(0, 8))
        );
        let max = Resources::new(u64::MAX, u64::MAX);
        assert_eq!(max + a, max);
        assert_eq!(max.saturating_add(a), max);
        assert!(Resources::ZERO.is_zero() && !a.is_zero());
        assert_eq!(Resources::default(), Resources::ZERO);
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        let show = |cpu, mem| Resources::new(cpu, mem).to_string();
        assert_eq!(show(500, 1 << 30), "cpu 500m, memory 1Gi");
        assert_eq!(show(2000, 3 << 20), "cpu 2000m, memory 3Mi");
        assert_eq!(show(0, 3072), "cpu 0m, memory 3Ki");
        assert_eq!(show(1, 1500), "cpu 1m, memory 1500");
        assert_eq!(show(0, 0), "cpu 0m, memory 0");
        assert_eq!(show(0, 5 << 40), "cpu 0m, memory 5Ti");
    }
}
