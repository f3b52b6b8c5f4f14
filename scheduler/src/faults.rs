//! The e2e suite's pause points (the `faults` feature): `--pause-at POINT:N` parks the process the
//! N-th time it reaches POINT, after a line on stderr that says so, so that the test can kill -9
//! it exactly there. Without the feature [`reached`] is an empty function and the flag does not
//! exist.

#[cfg(feature = "faults")]
mod seam {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::OnceLock;

    static PAUSE_AT: OnceLock<(String, u32)> = OnceLock::new();
    static REACHED: AtomicU32 = AtomicU32::new(0);

    /// Reads `POINT:N`.
    pub fn pause_at(spec: &str) -> Result<(), String> {
        let (point, n) = spec
            .split_once(':')
            .ok_or_else(|| format!("--pause-at {spec:?}: expected POINT:N"))?;
        let n: u32 = n
            .parse()
            .map_err(|_| format!("--pause-at {spec:?}: N is not a number"))?;
        if !["recorded", "bound", "released"].contains(&point) {
            return Err(format!(
                "--pause-at {spec:?}: no point {point:?} (recorded, bound, released)"
            ));
        }
        let _ = PAUSE_AT.set((point.to_owned(), n.max(1)));
        Ok(())
    }

    /// Parks this thread forever if this is the N-th time `point` is reached.
    pub fn reached(point: &str) {
        let Some((at, n)) = PAUSE_AT.get() else {
            return;
        };
        if at == point && REACHED.fetch_add(1, Ordering::SeqCst) + 1 == *n {
            eprintln!("gangway-scheduler: paused at {point}:{n}");
            loop {
                std::thread::park();
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
