//! `gangway check --serve`: stateright's web explorer on a preset, to step through the gang
//! protocol by hand in a browser.

use std::io;
use std::net::{SocketAddr, TcpListener};

use stateright::Model;

use super::cluster::ClusterConfig;
use super::protocol::GangProtocol;

/// Serves stateright's explorer for `config` (a preset's cluster, or any other) on `addr`
/// (`host:port`, e.g. `localhost:3000`; port 0 picks a free one), with `threads` checker
/// threads behind its "Run to completion" button.
///
/// **Blocks the calling thread for good**: the HTTP server runs on it and never stops (Ctrl-C
/// the process). Before blocking it prints the URL to open to stderr. The explorer's routes
/// are stateright's: `GET /` (the page), `GET /.status`, `GET /.states` (the initial states as
/// JSON), `GET /.states/{init}/{action}/…` (the states after a path of action indices) and
/// `POST /.runtocompletion`.
///
/// # Errors
///
/// Returns an error, without blocking, if `addr` does not resolve or cannot be bound (say the
/// port is taken). Never returns `Ok`.
pub fn serve(
    config: ClusterConfig,
    threads: usize,
    addr: &str,
) -> io::Result<std::convert::Infallible> {
    // stateright's server unwraps its bind (a panic, not an error), so bind here first to
    // report a bad address as an error; the listener is dropped before stateright binds the
    // same address (a listener that accepted nothing leaves no TIME_WAIT behind).
    let bound = TcpListener::bind(addr)?.local_addr()?;
    eprintln!(
        "stateright explorer for {} in {:?} mode: open {} (blocks; Ctrl-C to stop)",
        config,
        config.mode,
        url(bound)
    );
    let model = GangProtocol::new(config);
    // Returns only if the server thread ends, which it does not (it loops on its requests).
    let _checker = model.checker().threads(threads.max(1)).serve(bound);
    Err(io::Error::other("stateright's explorer stopped serving"))
}

/// The URL to open for a server bound to `bound` (a wildcard address is opened as localhost).
fn url(bound: SocketAddr) -> String {
    if bound.ip().is_unspecified() {
        format!("http://localhost:{}/", bound.port())
    } else {
        format!("http://{bound}/")
    }
}
