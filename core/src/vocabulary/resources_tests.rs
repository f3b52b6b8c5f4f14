use super::*;

const GPU: &str = "nvidia.com/gpu";

#[test]
fn fits_in_needs_every_resource() {
    let free = Resources::new(1000, 100);
    assert!(Resources::new(1000, 100).fits_in(&free));
    assert!(Resources::ZERO.fits_in(&Resources::ZERO));
    assert!(!Resources::new(1001, 0).fits_in(&free));
    assert!(!Resources::new(0, 101).fits_in(&free));
}

#[test]
fn an_extended_resource_fits_only_where_the_node_has_enough_of_it() {
    let pod = Resources::new(100, 10).with_extended(GPU, 2);
    let node = |gpus| Resources::new(1000, 100).with_extended(GPU, gpus);
    assert!(pod.fits_in(&node(2)));
    assert!(!pod.fits_in(&node(1)));
    assert!(!pod.fits_in(&Resources::new(1000, 100)), "no GPU at all");
    let other = Resources::new(1000, 100).with_extended("amd.com/gpu", 8);
    assert!(!pod.fits_in(&other), "names are compared exactly");
    assert!(
        Resources::new(100, 10).fits_in(&node(4)),
        "unused extras are fine"
    );
    let both = pod.clone().with_extended("hugepages-2Mi", 4 << 20);
    assert_eq!(
        both.insufficient(&Resources::new(0, 100))
            .collect::<Vec<_>>(),
        ["cpu", "hugepages-2Mi", GPU]
    );
}

#[test]
fn arithmetic_saturates_or_reports() {
    let a = Resources::new(5, 7);
    let b = Resources::new(3, 9);
    assert_eq!(a.clone() + b.clone(), Resources::new(8, 16));
    assert_eq!(a.saturating_sub(&b), Resources::new(2, 0));
    assert_eq!(a.checked_sub(&b), None);
    assert_eq!(
        b.checked_sub(&Resources::new(3, 1)),
        Some(Resources::new(0, 8))
    );
    let max = Resources::new(u64::MAX, u64::MAX).with_extended(GPU, u64::MAX);
    assert_eq!(&max + &a.clone().with_extended(GPU, 1), max);
    assert!(Resources::ZERO.is_zero() && !a.is_zero());
    assert!(!Resources::ZERO.with_extended(GPU, 1).is_zero());
    assert_eq!(Resources::default(), Resources::ZERO);
}

#[test]
fn extended_arithmetic_is_exact_and_normalized() {
    let a = Resources::ZERO
        .with_extended(GPU, 3)
        .with_extended("x/a", 1);
    let b = Resources::ZERO
        .with_extended(GPU, 3)
        .with_extended("x/z", 2);
    let sum = &a + &b;
    assert_eq!(sum.extended(GPU), 6);
    assert_eq!(
        sum.extended_resources().collect::<Vec<_>>(),
        [(GPU, 6), ("x/a", 1), ("x/z", 2)]
    );
    // What comes back to zero is not named: equal to never having had it.
    assert_eq!(sum.saturating_sub(&b), a);
    assert_eq!(a.saturating_sub(&a), Resources::ZERO);
    assert_eq!(a.checked_sub(&b), None, "x/z exceeds");
    assert_eq!(Resources::ZERO.with_extended(GPU, 0), Resources::ZERO);
    let mut c = a.clone();
    c.set_extended("x/a", 0);
    assert_eq!(c, Resources::ZERO.with_extended(GPU, 3));
    c.set_extended(GPU, 5);
    assert_eq!(c.extended(GPU), 5);
    assert_eq!(c.extended("absent"), 0);
}

/// Only one side naming an extended resource still combines it: the shortcut for plain cpu
/// and memory is taken only when neither side names one.
#[test]
fn one_side_with_extended_resources_keeps_them() {
    let plain = Resources::new(100, 10);
    let gpus = Resources::new(100, 10).with_extended(GPU, 2);
    assert_eq!(
        &gpus + &plain,
        Resources::new(200, 20).with_extended(GPU, 2)
    );
    assert_eq!(
        &plain + &gpus,
        Resources::new(200, 20).with_extended(GPU, 2)
    );
    assert_eq!(
        gpus.saturating_sub(&plain),
        Resources::ZERO.with_extended(GPU, 2)
    );
}

#[test]
fn display_picks_the_largest_exact_unit_and_lists_extended_resources() {
    let show = |cpu, mem| Resources::new(cpu, mem).to_string();
    assert_eq!(show(500, 1 << 30), "cpu 500m, memory 1Gi");
    assert_eq!(show(2000, 3 << 20), "cpu 2000m, memory 3Mi");
    assert_eq!(show(0, 3072), "cpu 0m, memory 3Ki");
    assert_eq!(show(1, 1500), "cpu 1m, memory 1500");
    assert_eq!(show(0, 0), "cpu 0m, memory 0");
    assert_eq!(show(0, 5 << 40), "cpu 0m, memory 5Ti");
    let gpus = Resources::new(0, 0)
        .with_extended(GPU, 8)
        .with_extended("a/b", 1);
    assert_eq!(
        gpus.to_string(),
        "cpu 0m, memory 0, a/b 1, nvidia.com/gpu 8"
    );
}

#[test]
fn fits_beside_is_fits_in_what_is_left() {
    let capacity = Resources::new(1000, 100).with_extended(GPU, 4);
    let requested = Resources::new(600, 100).with_extended(GPU, 1);
    for (want, fits) in [
        (Resources::new(400, 0), true),
        (Resources::new(401, 0), false),
        (Resources::new(0, 1), false),
        (Resources::ZERO.with_extended(GPU, 3), true),
        (Resources::ZERO.with_extended(GPU, 4), false),
        (Resources::ZERO.with_extended("other", 1), false),
    ] {
        assert_eq!(want.fits_beside(&requested, &capacity), fits, "{want}");
        let free = capacity.saturating_sub(&requested);
        assert_eq!(want.fits_in(&free), fits, "the same as fits_in: {want}");
    }
    // Overcommitted (pods observed bound): nothing is left, only nothing fits.
    let over = Resources::new(5000, 500);
    assert!(Resources::ZERO.fits_beside(&over, &capacity));
    assert!(!Resources::new(1, 0).fits_beside(&over, &capacity));
}

/// A sum saturated in any one resource is said so, whichever it is: a pod leaving the node
/// then has what is left added up again, not subtracted from a sum that stopped being exact
/// (found missing by mutation testing, issue #43: `||` turned `&&` asked for all at once).
#[test]
fn saturated_in_any_one_resource() {
    assert!(!Resources::new(1, 1).with_extended("gpu", 1).is_saturated());
    assert!(Resources::new(u64::MAX, 1).is_saturated());
    assert!(Resources::new(1, u64::MAX).is_saturated());
    assert!(Resources::new(1, 1)
        .with_extended("gpu", u64::MAX)
        .is_saturated());
}
