//! `gangway check --serve` end to end: stateright's explorer on the tiny preset answers over
//! HTTP with the initial cluster and its actions named in the timeline's words (raw HTTP/1.1
//! on a TCP socket), and renders them in a headless Chromium. Without a Chromium the browser
//! test skips, saying so — except in CI (`CI` set, as `.ci/run` does), where it fails.
//!
//! [`check::start_explorer`] binds the port the OS picks and returns the address once the
//! explorer answers there (no port is probed, freed and hoped for); its server thread is never
//! joined: it is still running when the test process exits, which ends it.
#![cfg(not(loom))]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gangsched::sync::thread;
use gangsched::Mode;
use gangway_check::{self as check, Action, Cluster, Preset};

/// How long a request may go unanswered before it is retried.
const STARTUP: Duration = Duration::from_secs(20);

/// Serves the tiny preset's explorer on a port the OS picks (left running: see the module
/// docs) and returns `127.0.0.1:PORT`, where it already answers.
fn serve_tiny() -> String {
    let explorer = check::start_explorer(Preset::Tiny.config(Mode::Upstream), 1, "127.0.0.1:0")
        .expect("the explorer starts");
    explorer.addr().to_string()
}

/// What the explorer calls the tiny preset's first action (the first pod's arrival): the
/// timeline's words for it.
fn first_arrival_name() -> String {
    let config = Preset::Tiny.config(Mode::Upstream);
    let initial = Cluster::initial(&config);
    let first = initial.pods.keys().next().expect("a pod").clone();
    check::action_label(&check::action_step(&Action::Arrive(first), &initial))
}

/// A response: status code and body.
struct Response {
    status: u16,
    body: String,
}

/// `GET path` over raw HTTP/1.1, retrying until the server answers (up to [`STARTUP`]).
fn get(addr: &str, path: &str) -> Response {
    let started = Instant::now();
    loop {
        match try_get(addr, path) {
            Ok(response) => return response,
            Err(e) if started.elapsed() < STARTUP => {
                eprintln!("GET http://{addr}{path}: {e}; retrying");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("GET http://{addr}{path}: no answer in {STARTUP:?}: {e}"),
        }
    }
}

fn try_get(addr: &str, path: &str) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )?;
    // `Connection: close`: the server closes the connection after its response.
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw).ok_or_else(|| {
        std::io::Error::other(format!(
            "not an HTTP response: {:?}",
            String::from_utf8_lossy(&raw)
        ))
    })
}

/// Splits a raw HTTP/1.1 response into status and body (de-chunking a chunked body).
fn parse(raw: &[u8]) -> Option<Response> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut body = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let chunked = lines.any(|line| {
        let line = line.to_ascii_lowercase();
        line.starts_with("transfer-encoding:") && line.contains("chunked")
    });
    let body = if chunked {
        let mut out = Vec::new();
        loop {
            let line_end = body.windows(2).position(|w| w == b"\r\n")?;
            let size = std::str::from_utf8(&body[..line_end]).ok()?;
            let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
            body = &body[line_end + 2..];
            if size == 0 {
                break out;
            }
            out.extend_from_slice(body.get(..size)?);
            body = body.get(size + 2..)?;
        }
    } else {
        body.to_vec()
    };
    Some(Response {
        status,
        body: String::from_utf8(body).ok()?,
    })
}

#[test]
fn the_explorer_serves_the_page_and_the_initial_cluster() {
    let addr = serve_tiny();

    let page = get(&addr, "/");
    assert_eq!(page.status, 200, "GET /: {}", page.body);
    assert!(
        page.body.contains("Stateright Explorer"),
        "GET / is not the explorer page: {}",
        page.body
    );

    // The initial states as JSON: `[{"state": "Cluster {…}", …, "actionIndex": 0}]`, the
    // state being the initial Cluster's `{:#?}`: the tiny preset's gang `a` (pods a-0 and a-1)
    // and its one empty node.
    let states = get(&addr, "/.states");
    assert_eq!(states.status, 200, "GET /.states: {}", states.body);
    let body = &states.body;
    assert!(body.starts_with("[{"), "not a list of states: {body}");
    assert!(
        body.contains("\"state\":\"Cluster {"),
        "no initial Cluster: {body}"
    );
    assert!(
        body.contains("\"actionIndex\":0"),
        "no initial state 0: {body}"
    );
    for marker in ["a-0", "a-1", "node-0"] {
        assert!(
            body.contains(marker),
            "the initial cluster lacks {marker:?}: {body}"
        );
    }

    // A path of action indices from initial state 0: the actions there and their states,
    // each action named in the timeline's words, not as a Debug dump of the action enum.
    let next = get(&addr, "/.states/0");
    assert_eq!(next.status, 200, "GET /.states/0: {}", next.body);
    let name = first_arrival_name();
    assert_eq!(name, "informer a-0 gang ns/a: pod created, queued");
    assert!(
        next.body.contains(&format!("\"action\":\"{name}\"")),
        "the first arrival is not named {name:?}: {}",
        next.body
    );
    assert!(
        !next.body.contains("Arrive("),
        "a Debug dump of an action: {}",
        next.body
    );
}

/// Whether this run is CI's (`CI` set to anything but empty, `0` or `false`): there the
/// browser test must run.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

#[test]
fn a_headless_browser_renders_the_initial_cluster() {
    let Some(browser) = browser() else {
        assert!(
            !in_ci(),
            "no Chromium (chromium, chromium-browser or google-chrome) runs on this machine, \
             and CI is set: .ci/run installs Debian's chromium"
        );
        eprintln!(
            "skipped: no Chromium (chromium, chromium-browser or google-chrome) runs on this \
             machine"
        );
        return;
    };
    let addr = serve_tiny();

    // `/` alone selects no state (the page shows "No state selected" and lists "Init 0" as a
    // next choice); `#/steps/0` selects initial state 0, so the page fetches `/.states` and
    // writes that state's `{:#?}` into its "Current State" panel.
    let url = format!("http://{addr}/#/steps/0");
    let profile =
        std::env::temp_dir().join(format!("gangway-serve-chromium-{}", std::process::id()));
    let child = Command::new(&browser)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", browser.display()));
    let output = wait_with_timeout(child, Duration::from_secs(120))
        .unwrap_or_else(|| panic!("{} ran longer than 120 s on {url}", browser.display()));
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && !dom.is_empty(),
        "{} --dump-dom {url} failed ({}): {}",
        browser.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // The page itself, and app.js ran: the path now holds initial state 0…
    assert!(dom.contains("Stateright Explorer"), "{dom}");
    assert!(
        dom.contains("Init 0"),
        "app.js did not load the initial states: {dom}"
    );
    assert!(
        !dom.contains("No state selected"),
        "no state is selected: {dom}"
    );
    // …and the Current State panel shows the initial cluster's `{:#?}` (only the state panel
    // holds "Cluster {"; the action links name pods, never nodes).
    for marker in ["Cluster {", "a-0", "a-1", "node-0"] {
        assert!(dom.contains(marker), "the page lacks {marker:?}: {dom}");
    }
    // The Next Action Choices name the first arrival in the timeline's words.
    let name = first_arrival_name();
    assert!(
        dom.contains(&name),
        "the page does not name the first action {name:?}: {dom}"
    );
    assert!(!dom.contains("Arrive("), "a Debug dump of an action: {dom}");
}

/// The first Chromium on `PATH` that runs (`--version` succeeds: a distribution's stub that
/// only asks for a snap install does not count).
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .filter(|candidate| is_executable(candidate))
        .find(|candidate| {
            Command::new(candidate)
                .arg("--version")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()
                .and_then(|child| wait_with_timeout(child, Duration::from_secs(30)))
                .is_some_and(|output| output.status.success())
        })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Waits for `child` and collects its output, or kills it and returns `None` if it runs longer
/// than `limit`. Its output is read on helper threads so a full pipe cannot stall it.
fn wait_with_timeout(
    mut child: std::process::Child,
    limit: Duration,
) -> Option<std::process::Output> {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn("drain", move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait().expect("waiting on the browser") {
            Some(status) => break status,
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    Some(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}
