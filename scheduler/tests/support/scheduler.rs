//! gangway-scheduler as a test runs it: the binary this package builds, started as a process on
//! a test cluster, its log in a file the test reads, killed with SIGKILL or SIGTERM.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::cluster::Cluster;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A running gangway-scheduler process.
pub struct SchedulerProcess {
    child: Option<Child>,
    log: PathBuf,
    /// Its name in the Lease.
    pub identity: String,
}

impl SchedulerProcess {
    /// Starts one on `cluster` with `args` beside the test defaults: the cluster's kubeconfig,
    /// health on a free local port, the Lease in `default` with a 4 s duration (a follower
    /// takes over quickly), debug logs.
    pub fn start(cluster: &Cluster, args: &[&str]) -> SchedulerProcess {
        SchedulerProcess::start_with(cluster.kubeconfig(), args)
    }

    /// [`start`](Self::start) with `kubeconfig`; `args` may name the Lease's namespace.
    pub fn start_with(kubeconfig: &Path, args: &[&str]) -> SchedulerProcess {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let identity = format!("replica-{}-{n}", std::process::id());
        let log = std::env::temp_dir().join(format!("gangway-scheduler-{identity}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        // GANGWAY_SCHEDULER_BIN runs another build (a benchmark comparing two).
        let binary = std::env::var_os("GANGWAY_SCHEDULER_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gangway-scheduler")));
        let mut command = Command::new(binary);
        command
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--bind-address", "127.0.0.1:0"])
            .args(["--leader-elect-lease-duration", "4s"])
            .args(["--identity", &identity]);
        if !args.iter().any(|a| a.starts_with("--log")) {
            command.args(["--log", "info,gangway_scheduler=debug"]);
        }
        if !args
            .iter()
            .any(|a| a.starts_with("--leader-elect-resource-namespace"))
        {
            command.args(["--leader-elect-resource-namespace", "default"]);
        }
        let child = command
            .args(args)
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start gangway-scheduler");
        SchedulerProcess {
            child: Some(child),
            log,
            identity,
        }
    }

    /// Starts one and waits until it schedules (it leads and has finished recorded placements).
    pub fn start_scheduling(cluster: &Cluster, args: &[&str]) -> SchedulerProcess {
        let scheduler = SchedulerProcess::start(cluster, args);
        scheduler.wait_for("scheduling", Duration::from_secs(60));
        scheduler
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether its log has a line containing `text`.
    pub fn logged(&self, text: &str) -> bool {
        self.log().lines().any(|line| line.contains(text))
    }

    /// Waits until its log has a line containing `text`; panics with the log after `timeout`.
    pub fn wait_for(&self, text: &str, timeout: Duration) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.logged(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "{text:?} not logged within {timeout:?}; the log:\n{}",
            self.log()
        );
    }

    /// Where it serves /metrics, /healthz and /readyz.
    pub fn address(&self) -> SocketAddr {
        self.wait_for("serving /metrics", Duration::from_secs(30));
        let log = self.log();
        let line = log
            .lines()
            .find(|l| l.contains("serving /metrics"))
            .expect("line");
        let address = line.split("address=").nth(1).expect("address field");
        address.trim().parse().expect("socket address")
    }

    /// kill -9.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, and its exit status once it has stopped (panics after 60 s).
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        wait(&mut child, Duration::from_secs(60)).unwrap_or_else(|| {
            let _ = child.kill();
            panic!("no exit 60 s after SIGTERM; the log:\n{}", self.log())
        })
    }

    /// Its exit status, once it exits within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let child = self.child.as_mut()?;
        let status = wait(child, timeout);
        if status.is_some() {
            self.child = None;
        }
        status
    }
}

fn wait(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

impl Drop for SchedulerProcess {
    fn drop(&mut self) {
        self.kill9();
        if std::thread::panicking() {
            eprintln!(
                "gangway-scheduler {}'s log: {}",
                self.identity,
                self.log.display()
            );
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}
