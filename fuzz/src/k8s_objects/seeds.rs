//! The seed corpus of `k8s_objects` (written to `fuzz/seeds/k8s_objects/` by the ignored test
//! `write_k8s_objects_seeds`), as byte lists annotated with what each byte chooses
//! ([`gen`](super::gen), [`Parts::read`](super::quantity::Parts::read)). A quantity is a
//! header byte (0: an integer; 20: integer, point and fraction), digit-string bytes (1 is
//! `"1"`, 2 `"5"`, 5 `"999"`, 6 `"1000"`, 9 `"9223372036854775807"`, 11
//! `"9223372036854775"`, 14 `"807"`) and a suffix byte (0 none; 18 `m`, 26 `k`, 42 `G`; 11
//! `Mi`, 19 `Gi`, 43 `Ei`; 4 an exponent, then its digits; 6 junk `x`).

/// The seeds, by name.
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            // Pod ml/trainer-0 (uid byte 14), overhead; one container requesting cpu 1.5,
            // memory 999Mi, nvidia.com/gpu 1; overhead cpu 1000m.
            "pod-requests",
            vec![
                0, 0, 0, 1, 14, 2, 0, 1, 0, 3, 0, 20, 1, 2, 0, 1, 0, 5, 11, 5, 0, 1, 0, 1, 0, 0, 6,
                18,
            ],
        ),
        (
            // Pod with labels and a creation time (h = 96), init containers, a priority and a
            // group (f = 25); an init container's cpu "0x" is refused (an unknown suffix).
            "pod-init-containers-bad-suffix",
            vec![
                0, 96, 0, 1, 14, 1, 13, 0, 0, 25, 0, 2, 0, 1, 1, 0, 1, 19, 2, 5, 0, 1, 0, 0, 2, 0,
                1, 0, 1, 0, 0, 0, 6, 18, 3, 1, 13,
            ],
        ),
        (
            // Pod bound to a node (h = 128) with pod-level resources (f = 4): one container
            // requesting memory 1Gi; pod-level requests cpu 2 (the digit byte 16: a generated
            // digit).
            "pod-level-resources-bound",
            vec![
                0, 128, 0, 1, 14, 4, 0, 1, 0, 1, 1, 0, 1, 19, 1, 1, 0, 0, 16, 2, 0, 4,
            ],
        ),
        (
            // Pod with tolerations and a constraint (f = 192): its scheduling gates are refused.
            "pod-unsupported-constraint",
            vec![0, 0, 0, 1, 14, 192, 0, 0, 1, 2, 35, 6, 6, 0],
        ),
        (
            // Pod whose container requests cpu "1x": a quantity error naming it.
            "pod-bad-quantity",
            vec![0, 0, 0, 1, 14, 0, 0, 1, 0, 1, 0, 0, 1, 6],
        ),
        (
            // Node gpu-0 with labels, taints and an allocatable list (h = 88 | 64): a taint's
            // empty effect is refused.
            "node-taint-unknown-effect",
            vec![
                1,
                88 | 64,
                4,
                1,
                8,
                0,
                1,
                1,
                2,
                2,
                3,
                0,
                0,
                16,
                3,
                18,
                1,
                0,
                1,
                19,
                5,
                0,
                3,
                0,
            ],
        ),
        (
            // Cordoned node with only a capacity (h = 160): cpu 1000, pods 7Ei (too large).
            "node-cordoned-capacity",
            vec![1, 160, 4, 2, 0, 0, 6, 0, 6, 0, 16, 7, 43],
        ),
        (
            // PodGroup ml/trainer, gang of 4.
            "pod-group-gang",
            vec![2, 8, 0, 13, 2],
        ),
        (
            // PodGroup with both policies, a topology constraint and claims (h = 16 | 96).
            "pod-group-both-policies-topology",
            vec![2, 16 | 96, 0, 13, 0, 1, 6, 1],
        ),
        (
            // Bare quantities at the contract's boundaries: 9223372036854775807,
            // 9223372036854775.807 (in thousandths: the largest), 7Ei, 8Ei (too large),
            // 1e18, -0.5 (negative), 1.5Gi, .5m, 12x.
            "quantities-boundaries",
            vec![
                3,
                0,
                9,
                0,
                20,
                11,
                14,
                0,
                0,
                3,
                43,
                0,
                8,
                43,
                0,
                1,
                4,
                18,
                3 | 16,
                0,
                2,
                0,
                20,
                1,
                2,
                19,
                12 | 16,
                2,
                18,
                0,
                10,
                6,
            ],
        ),
        (
            // Bare quantities with exponents and odd suffixes: 1e-9, 129e6 (generated digits),
            // 1E+3, a junk prefix, raw junk, a long run of zeros before a digit.
            "quantities-exponents-junk",
            vec![
                3,
                0,
                1,
                4 | 48,
                1,
                0,
                16,
                9,
                4,
                2,
                0,
                1,
                5 | 8 | 32,
                1,
                224,
                0,
                0,
                1,
                7,
                2,
                75,
                105,
                20,
                0,
                15,
                3,
                1,
                4,
                3,
            ],
        ),
    ]
}
