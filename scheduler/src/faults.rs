//! The e2e suite's pause points (the `faults` feature): `--pause-at POINT:N` parks the process the
//! N-th time it reaches POINT, after a line on stderr that says so, so that the test can kill -9
//! it exactly there; `--pause-at POINT:N:MILLIS` holds that thread for MILLIS milliseconds and
//! lets it go on, so that a test can order a race (another thread overtakes the held one).
//! Without the feature [`reached`] is an empty function and the flag does not exist.

#[cfg(feature = "faults")]
mod seam {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::OnceLock;

    use std::time::Duration;

    /// Where to pause: the point, which time it is reached, and for how long (`None`: for
    /// good).
    static PAUSE_AT: OnceLock<(String, u32, Option<Duration>)> = OnceLock::new();
    static REACHED: AtomicU32 = AtomicU32::new(0);

    /// The points: a gang's placement `recorded` (nothing bound yet), a pod `bound`, a
    /// released pod's nomination cleared (`released`), and a gang's placement read from the
    /// core before its record takes the gang's lock (`placement-read`).
    const POINTS: [&str; 4] = ["recorded", "bound", "released", "placement-read"];

    /// Reads `POINT:N` or `POINT:N:MILLIS`.
    pub fn pause_at(spec: &str) -> Result<(), String> {
        let mut parts = spec.split(':');
        let (Some(point), Some(n)) = (parts.next(), parts.next()) else {
            return Err(format!(
                "--pause-at {spec:?}: expected POINT:N or POINT:N:MILLIS"
            ));
        };
        let n: u32 = n
            .parse()
            .map_err(|_| format!("--pause-at {spec:?}: N is not a number"))?;
        let hold = match parts.next() {
            None => None,
            Some(millis) => {
                Some(Duration::from_millis(millis.parse().map_err(|_| {
                    format!("--pause-at {spec:?}: MILLIS is not a number")
                })?))
            }
        };
        if parts.next().is_some() {
            return Err(format!(
                "--pause-at {spec:?}: expected POINT:N or POINT:N:MILLIS"
            ));
        }
        if !POINTS.contains(&point) {
            return Err(format!(
                "--pause-at {spec:?}: no point {point:?} ({})",
                POINTS.join(", ")
            ));
        }
        let _ = PAUSE_AT.set((point.to_owned(), n.max(1), hold));
        Ok(())
    }

    /// Parks this thread (forever, or for the spec's MILLIS) if this is the N-th time `point`
    /// is reached.
    pub fn reached(point: &str) {
        let Some((at, n, hold)) = PAUSE_AT.get() else {
            return;
        };
        if at == point && REACHED.fetch_add(1, Ordering::SeqCst) + 1 == *n {
            match hold {
                Some(hold) => {
                    eprintln!("gangway-scheduler: held at {point}:{n} for {hold:?}");
                    std::thread::sleep(*hold);
                    eprintln!("gangway-scheduler: going on from {point}:{n}");
                }
                None => {
                    eprintln!("gangway-scheduler: paused at {point}:{n}");
                    loop {
                        std::thread::park();
                    }
                }
            }
        }
    }
}

#[cfg(feature = "faults")]
pub use seam::{pause_at, reached};

/// Does nothing: the deployed build has no pause points.
#[cfg(not(feature = "faults"))]
#[inline(always)]
pub fn reached(_point: &str) {}
