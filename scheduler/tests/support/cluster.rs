//! A real API server for a test: upstream/testcluster (etcd and kube-apiserver of
//! k8s.io/kubernetes v1.37.2) on a fresh data directory, killed and removed at the end.
//!
//! The binary is `GANGWAY_TESTCLUSTER`, else `target/testcluster` (built by `.ci/run`, or by
//! hand: upstream/README.md). Without either the test says so and passes — unless `CI` is
//! set, where it fails.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The test server's binary, or `None` (the test is skipped) when it is not built.
pub fn testcluster_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GANGWAY_TESTCLUSTER") {
        return Some(PathBuf::from(path));
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/testcluster");
    if built.exists() {
        return Some(built);
    }
    let why = "no test API server: build target/testcluster (upstream/README.md) or set GANGWAY_TESTCLUSTER";
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// A running test API server on its own data directory.
pub struct Cluster {
    binary: PathBuf,
    dir: PathBuf,
    process: Option<Child>,
    kubeconfig: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Cluster {
    /// Starts one and waits until it is ready; `None` when there is no binary (skipped).
    pub fn start() -> Option<Cluster> {
        let binary = testcluster_binary()?;
        let dir = std::env::temp_dir().join(format!(
            "gangway-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("data dir");
        let mut cluster = Cluster {
            binary,
            dir,
            process: None,
            kubeconfig: PathBuf::new(),
        };
        cluster.serve();
        Some(cluster)
    }

    fn serve(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("testcluster.log"))
            .expect("log file");
        let mut child = Command::new(&self.binary)
            .args(["serve", "--data-dir"])
            .arg(self.dir.join("data"))
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start testcluster");
        let stdout = child.stdout.take().expect("stdout");
        let start = Instant::now();
        let mut lines = BufReader::new(stdout).lines();
        let kubeconfig = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(path) = line.strip_prefix("ready ") {
                        break PathBuf::from(path);
                    }
                }
                _ => panic!(
                    "testcluster exited before it was ready after {:?}; its log: {}",
                    start.elapsed(),
                    self.dir.join("testcluster.log").display()
                ),
            }
        };
        // Keep draining its standard output so that it never blocks on a full pipe.
        gangsched::sync::thread::spawn("testcluster-stdout", move || for _ in lines {});
        self.kubeconfig = kubeconfig;
        self.process = Some(child);
    }

    /// The kubeconfig it wrote.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A client of it.
    pub async fn client(&self) -> Client {
        let file = Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .expect("client config");
        Client::try_from(config).expect("client")
    }

    /// Stops it (SIGTERM, then waits), as an operator restarting the control plane would.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.process.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same data (the same ports and kubeconfig).
    pub fn restart(&mut self) {
        self.stop();
        self.serve();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(mut child) = self.process.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!(
                "test API server's data and log kept in {}",
                self.dir.display()
            );
        }
    }
}
