//! The client's write rate, as kube-scheduler's `--kube-api-qps` and `--kube-api-burst`: a token
//! bucket every request this scheduler writes (binds, status patches, events) takes a token
//! from. Watches are long-lived and not counted, as client-go does not count a watch's events.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// A token bucket shared by every writer (clones share it).
#[derive(Clone, Debug)]
pub struct Throttle {
    qps: f64,
    burst: f64,
    bucket: Arc<Mutex<Bucket>>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl Throttle {
    /// `qps` requests a second, up to `burst` at once (at least one). A `qps` of zero or less
    /// (or not a number) means no limit.
    pub fn new(qps: f64, burst: u32) -> Throttle {
        let burst = f64::from(burst.max(1));
        Throttle {
            qps,
            burst,
            bucket: Arc::new(Mutex::new(Bucket {
                tokens: burst,
                refilled: Instant::now(),
            })),
        }
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        if self.qps.is_nan() || self.qps <= 0.0 {
            return;
        }
        loop {
            let wait = {
                let mut bucket = self.bucket.lock().await;
                let now = Instant::now();
                let earned = now.duration_since(bucket.refilled).as_secs_f64() * self.qps;
                bucket.tokens = (bucket.tokens + earned).min(self.burst);
                bucket.refilled = now;
                if bucket.tokens >= 1.0 {
                    bucket.tokens -= 1.0;
                    return;
                }
                Duration::from_secs_f64((1.0 - bucket.tokens) / self.qps)
            };
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_then_the_rate() {
        let throttle = Throttle::new(10.0, 5);
        let start = Instant::now();
        for _ in 0..5 {
            throttle.acquire().await;
        }
        assert_eq!(Instant::now(), start, "the burst takes no time");
        for _ in 0..10 {
            throttle.acquire().await;
        }
        let took = Instant::now() - start;
        assert!(
            took >= Duration::from_millis(990) && took <= Duration::from_millis(1010),
            "ten more at 10 qps take a second: {took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_limit_without_a_rate() {
        let throttle = Throttle::new(0.0, 1);
        let start = Instant::now();
        for _ in 0..1000 {
            throttle.acquire().await;
        }
        assert_eq!(Instant::now(), start);
    }
}
