//! The browser example's server side, shared by `browser_server` (the
//! example's `main`) and `tests/browser.rs`: the `Demo::Hello` servant on
//! the adapter `Hello` (generated from `Browser.ice` by `floe::slice!`),
//! and the page's static files on a second, plain-HTTP port.
//!
//! The page (`web/index.html`, `web/app.js`) loads Ice for JavaScript's
//! browser bundle (`Ice.js` of the npm package `ice`), the code slice2js
//! generates from `Browser.ice` (compiled when the server starts), and
//! fetches `/proxy`, the stringified proxy of the servant, to call it over
//! the adapter's `ws` endpoint.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use floe::runtime::{Communicator, Current, DispatchError, ObjectAdapter, Proxy};
use floe::Identity;
use tokio::task::JoinHandle;

use crate::site::Site;

floe::slice!("examples/browser/Browser.ice");

/// The Slice file, for slice2js.
const SLICE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/browser/Browser.ice");

/// How many notes the servant keeps (the oldest are dropped).
const KEEP_NOTES: usize = 100;

/// Errors while starting the example.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The notes the page sent with its oneway call, newest last.
type Notes = Arc<Mutex<VecDeque<String>>>;

/// The servant.
struct HelloI {
    notes: Notes,
}

impl demo::Hello for HelloI {
    async fn say_hello(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        if name.is_empty() {
            return Err(demo::Refused {
                reason: "a name, please".into(),
            }
            .into());
        }
        Ok(format!("Hello, {name}, from floe!"))
    }

    async fn note(&self, text: String, _: &Current) -> Result<(), DispatchError> {
        println!("note: {text}");
        let mut notes = lock(&self.notes);
        if notes.len() == KEEP_NOTES {
            notes.pop_front();
        }
        notes.push_back(text);
        Ok(())
    }

    async fn notes(&self, _: &Current) -> Result<Vec<String>, DispatchError> {
        Ok(lock(&self.notes).iter().cloned().collect())
    }

    async fn echo(&self, data: bytes::Bytes, _: &Current) -> Result<bytes::Bytes, DispatchError> {
        Ok(data)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The running example: the adapter `Hello` and the page's HTTP server.
pub struct Demo {
    /// The adapter serving `hello` (on `Hello.Endpoints`).
    pub adapter: ObjectAdapter,
    /// The servant's proxy, as the page gets it from `/proxy`.
    pub proxy: Proxy,
    /// Where the page is served.
    pub http: SocketAddr,
    notes: Notes,
    site: JoinHandle<()>,
}

impl Demo {
    /// Creates the adapter `Hello` from `communicator`'s properties
    /// (`Hello.Endpoints`, e.g. `ws -h 127.0.0.1 -p 10000`), activates it,
    /// compiles `Browser.ice` with slice2js and serves the page on `http`
    /// (`127.0.0.1:8080`, or port 0 for a free one), with `ice_js`, Ice for
    /// JavaScript's browser bundle (`node_modules/ice/lib/Ice.js`).
    pub async fn start(
        communicator: &Communicator,
        http: &str,
        ice_js: &Path,
    ) -> Result<Demo, BoxError> {
        let notes = Notes::default();
        let adapter = communicator.create_object_adapter("Hello").await?;
        let proxy = adapter.add(
            Identity::from_name("hello"),
            demo::HelloDispatcher::new(HelloI {
                notes: notes.clone(),
            }),
        )?;
        let mut site = Site::default();
        site.add(
            "/index.html",
            "text/html; charset=utf-8",
            include_str!("web/index.html"),
        );
        site.add(
            "/app.js",
            "text/javascript; charset=utf-8",
            include_str!("web/app.js"),
        );
        let ice = std::fs::read(ice_js).map_err(|e| {
            format!(
                "cannot read Ice for JavaScript at {}: {e} (npm install ice@3.7, or \
                 cargo xtask test, which installs it under target/interop-node/)",
                ice_js.display()
            )
        })?;
        site.add("/Ice.js", "text/javascript; charset=utf-8", ice);
        site.add("/Browser.js", "text/javascript; charset=utf-8", slice2js()?);
        site.add("/proxy", "text/plain; charset=utf-8", proxy.to_string());
        let (http, site) = site.serve(http).await?;
        adapter.activate();
        Ok(Demo {
            adapter,
            proxy,
            http,
            notes,
            site,
        })
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.http)
    }

    /// The notes received so far, oldest first.
    pub fn notes(&self) -> Vec<String> {
        lock(&self.notes).iter().cloned().collect()
    }

    /// Stops serving the page and deactivates the adapter.
    pub async fn stop(self) {
        self.site.abort();
        self.adapter.deactivate().await;
        self.adapter.wait_for_deactivate().await;
    }
}

/// Compiles `Browser.ice` with slice2js and returns the JavaScript.
fn slice2js() -> Result<Vec<u8>, BoxError> {
    let out = tempfile::tempdir()?;
    let status = Command::new("slice2js")
        .arg("--output-dir")
        .arg(out.path())
        .arg(SLICE)
        .status()
        .map_err(|e| format!("cannot run slice2js (Debian package zeroc-ice-compilers): {e}"))?;
    if !status.success() {
        return Err(format!("slice2js {SLICE} failed: {status}").into());
    }
    Ok(std::fs::read(out.path().join("Browser.js"))?)
}
