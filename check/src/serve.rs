//! `gangway check --serve`: stateright's web explorer on a preset, to step through the gang
//! protocol by hand in a browser.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use stateright::Model;

use super::cluster::ClusterConfig;
use super::explorer::NamedActions;

/// How many free ports a server asked for on port 0 tries before it gives up (another process
/// may take a port between the probe that finds it free and stateright's bind).
const PORT_ATTEMPTS: usize = 8;
/// How long a started server gets to answer its first request.
const STARTUP: Duration = Duration::from_secs(60);

/// Stateright's explorer, serving on its own thread (started by [`start_explorer`]).
#[derive(Debug)]
pub struct Explorer {
    addr: SocketAddr,
    server: JoinHandle<()>,
}

impl Explorer {
    /// The address the explorer is bound to (the port chosen, if port 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL to open (a wildcard address is opened as localhost).
    pub fn url(&self) -> String {
        url(self.addr)
    }

    /// Blocks while the explorer serves, which is for good (Ctrl-C the process); returns why
    /// it stopped if its server ever does.
    pub fn wait(self) -> io::Error {
        match self.server.join() {
            Ok(()) => io::Error::other("stateright's explorer stopped serving"),
            Err(panic) => io::Error::other(format!(
                "stateright's explorer stopped: {}",
                panic_message(&*panic)
            )),
        }
    }
}

/// Starts stateright's explorer for `config` (a preset's cluster, or any other) on `addr`
/// (`host:port`, e.g. `localhost:3000`; port 0 picks a free one), with `threads` checker
/// threads behind its "Run to completion" button, its actions named in the timeline's words
/// ([`NamedActions`]). Returns once the explorer answers on its address: [`Explorer::addr`]
/// is where it serves, for good (a dropped [`Explorer`] keeps serving until the process
/// exits). The routes are stateright's: `GET /` (the page), `GET /.status`, `GET /.states`
/// (the initial states as JSON), `GET /.states/{init}/{action}/…` (the states after a path of
/// action indices) and `POST /.runtocompletion`.
///
/// # Errors
///
/// If `addr` does not resolve or cannot be bound (say the port is taken), or the server does
/// not answer.
pub fn start_explorer(config: ClusterConfig, threads: usize, addr: &str) -> io::Result<Explorer> {
    let requested = addr.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{addr} resolves to no address"),
        )
    })?;
    let attempts = if requested.port() == 0 {
        PORT_ATTEMPTS
    } else {
        1
    };
    let mut last_error = None;
    for _ in 0..attempts {
        // stateright's server unwraps its bind (a panic, not an error) and does not say which
        // port it got, so find the port here: a bad address or a taken port is an error here,
        // and the listener, which accepted nothing, is dropped for stateright to bind it.
        let bound = TcpListener::bind(requested)?.local_addr()?;
        let model = NamedActions::new(config.clone());
        let server = thread::Builder::new()
            .name("gangway-explorer".to_owned())
            .spawn(move || {
                // Returns only if the server thread ends, which it does not.
                let _checker = model.checker().threads(threads.max(1)).serve(bound);
            })?;
        match answers(bound, &server) {
            Ok(()) => {
                return Ok(Explorer {
                    addr: bound,
                    server,
                })
            }
            // Someone else took the port meanwhile: another one, if any port would do.
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("the explorer did not start")))
}

/// Serves the explorer for `config` on `addr` ([`start_explorer`]), printing
/// `serving on URL` on stdout first, and **blocks the calling thread for good**.
///
/// # Errors
///
/// As [`start_explorer`], without blocking. Never returns `Ok`.
pub fn serve(
    config: ClusterConfig,
    threads: usize,
    addr: &str,
) -> io::Result<std::convert::Infallible> {
    let explorer = start_explorer(config, threads, addr)?;
    let mut out = io::stdout().lock();
    writeln!(out, "serving on {}", explorer.url())?;
    out.flush()?;
    drop(out);
    Err(explorer.wait())
}

/// Waits until the server `server` started on `bound` answers there as this explorer (its
/// status names the model), or fails if its thread ends first (its bind failed: the port was
/// taken meanwhile) or it does not answer within [`STARTUP`].
fn answers(bound: SocketAddr, server: &JoinHandle<()>) -> io::Result<()> {
    let ours = std::any::type_name::<NamedActions>();
    let local = loopback(bound);
    let started = Instant::now();
    loop {
        if server.is_finished() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("stateright's explorer could not bind {bound}"),
            ));
        }
        match status(local) {
            Ok(body) if body.contains(ours) => return Ok(()),
            // Nothing listens yet, or another server does (then the thread ends soon).
            _ if started.elapsed() < STARTUP => thread::sleep(Duration::from_millis(5)),
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another server answers on {bound}"),
                ))
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("the explorer does not answer on {bound}: {e}"),
                ))
            }
        }
    }
}

/// `GET /.status` on `addr`: the response, head and body.
fn status(addr: SocketAddr) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET /.status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

/// Where to reach a server bound to `bound` from this machine (a wildcard address through
/// the loopback).
fn loopback(bound: SocketAddr) -> SocketAddr {
    match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, bound.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, bound.port()).into(),
        _ => bound,
    }
}

/// The URL to open for a server bound to `bound` (a wildcard address is opened as localhost).
fn url(bound: SocketAddr) -> String {
    if bound.ip().is_unspecified() {
        format!("http://localhost:{}/", bound.port())
    } else {
        format!("http://{bound}/")
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic".to_owned())
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use gangsched::Mode;

    use super::start_explorer;
    use crate::Preset;

    #[test]
    fn port_zero_serves_on_the_port_it_reports() {
        let explorer = start_explorer(Preset::Tiny.config(Mode::Hardened), 1, "127.0.0.1:0")
            .expect("the explorer starts");
        let addr = explorer.addr();
        assert_ne!(addr.port(), 0);
        assert_eq!(explorer.url(), format!("http://{addr}/"));
        let status = super::status(addr).expect("it answers");
        assert!(status.contains("NamedActions"), "{status}");
    }

    #[test]
    fn a_taken_port_is_an_error_not_a_panic() {
        let taken = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = taken.local_addr().expect("bound").to_string();
        let e = start_explorer(Preset::Tiny.config(Mode::Hardened), 1, &addr)
            .expect_err("the port is taken");
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
    }
}
