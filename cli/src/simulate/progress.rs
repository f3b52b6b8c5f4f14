//! A tiny progress bar on stderr for long simulation runs.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Redraw at most this often.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Width of the bar between the brackets.
const BAR_WIDTH: usize = 30;

/// A progress bar like `[=====>    ] 52% 52000/100000 pods`, redrawn in place on stderr at
/// most ten times a second. It draws nothing unless enabled and stderr is a terminal, so it
/// never pollutes redirected output.
#[derive(Debug)]
pub struct Progress {
    total: u64,
    done: u64,
    active: bool,
    drawn: bool,
    last_draw: Option<Instant>,
}

impl Progress {
    /// A bar counting up to `total` pods; silent unless `enabled` and stderr is a terminal.
    pub fn new(total: u64, enabled: bool) -> Self {
        let active = enabled && io::stderr().is_terminal();
        Self {
            total,
            done: 0,
            active,
            drawn: false,
            last_draw: None,
        }
    }

    /// Records that `done` pods are finished, redrawing if the last redraw was long enough ago.
    pub fn set(&mut self, done: u64) {
        self.done = done;
        if !self.active {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_some_and(|t| now.duration_since(t) < REDRAW_EVERY)
        {
            return;
        }
        self.last_draw = Some(now);
        self.draw();
    }

    /// Draws the final state and ends the line (if anything was drawn).
    pub fn finish(&mut self) {
        if self.active && self.drawn {
            self.draw();
            let _ = writeln!(io::stderr());
        }
        self.active = false;
    }

    fn draw(&mut self) {
        let line = render(self.done, self.total);
        let mut err = io::stderr().lock();
        // A failed write to stderr is not worth failing the run for.
        let _ = write!(err, "\r{line}");
        let _ = err.flush();
        self.drawn = true;
    }
}

/// The bar's text for `done` of `total`.
fn render(done: u64, total: u64) -> String {
    let frac = if total == 0 {
        1.0
    } else {
        (done.min(total) as f64) / (total as f64)
    };
    let filled = ((frac * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
    let mut bar = "=".repeat(filled);
    if filled < BAR_WIDTH {
        bar.push('>');
    }
    let pct = (frac * 100.0) as u64;
    format!("[{bar:<BAR_WIDTH$}] {pct:>3}% {done}/{total} pods")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_bar_percentage_and_counts() {
        let half = render(52_000, 100_000);
        assert_eq!(
            half,
            format!("[{:<30}]  52% 52000/100000 pods", "=".repeat(15) + ">")
        );
        assert_eq!(render(0, 10), format!("[{:<30}]   0% 0/10 pods", ">"));
        assert_eq!(
            render(10, 10),
            format!("[{}] 100% 10/10 pods", "=".repeat(30))
        );
        assert_eq!(render(0, 0), format!("[{}] 100% 0/0 pods", "=".repeat(30)));
    }

    #[test]
    fn disabled_bar_draws_nothing() {
        let mut p = Progress::new(10, false);
        p.set(5);
        p.finish();
        assert!(!p.drawn);
    }
}
