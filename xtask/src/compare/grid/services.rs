//! The real Ice services of `compare --grid`, started on 127.0.0.1 for the
//! run and killed with it: an IceGrid registry (`icegridregistry`, with
//! dynamic registration), floe's `grid_server` registered with it, and a
//! `glacier2router` with a permissive verifier.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::super::process::{free_port, Server};
use crate::DynError;

/// The adapter id `grid_server` registers.
pub const ADAPTER_ID: &str = "GridBench";

/// A registry; dropping it kills it.
pub struct Registry {
    _server: Server,
    port: u16,
}

impl Registry {
    /// Starts `icegridregistry` with its database in `dir`, its stderr in
    /// `log`.
    pub fn start(dir: &Path, log: &Path) -> Result<Registry, DynError> {
        let port = free_port()?;
        let db = dir.join("registry");
        std::fs::create_dir_all(&db)?;
        let mut cmd = Command::new("icegridregistry");
        cmd.args([
            "--IceGrid.InstanceName=IceGrid".to_string(),
            format!("--IceGrid.Registry.Client.Endpoints=tcp -h 127.0.0.1 -p {port}"),
            "--IceGrid.Registry.Server.Endpoints=tcp -h 127.0.0.1".to_string(),
            "--IceGrid.Registry.Internal.Endpoints=tcp -h 127.0.0.1".to_string(),
            format!("--IceGrid.Registry.LMDB.Path={}", db.display()),
            "--IceGrid.Registry.DynamicRegistration=1".to_string(),
            "--IceGrid.Registry.AdminPermissionsVerifier=IceGrid/NullPermissionsVerifier"
                .to_string(),
        ]);
        let server = Server::listening(&mut cmd, port, "icegridregistry", log)?;
        Ok(Registry {
            _server: server,
            port,
        })
    }

    /// Its `IceGrid/Locator` proxy.
    pub fn locator(&self) -> String {
        format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Waits (up to 30 s) until `icegridadmin adapter endpoints ID`
    /// answers: `id` is registered.
    pub fn wait_registered(&self, id: &str) -> Result<(), DynError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = Command::new("icegridadmin")
                .arg(format!("--Ice.Default.Locator={}", self.locator()))
                .args(["-u", "bench", "-p", "bench", "-e"])
                .arg(format!("adapter endpoints {id}"))
                .output()?;
            if out.status.success() && !out.stdout.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "adapter {id} not registered: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// floe's `grid_server` on a free port, registered as [`ADAPTER_ID`].
pub fn grid_server(exe: &Path, registry: &Registry, log: &Path) -> Result<(Server, u16), DynError> {
    let port = free_port()?;
    let mut cmd = Command::new(exe);
    cmd.args([registry.locator().as_str(), ADAPTER_ID, "-"])
        .arg(format!(
            "--BenchAdapter.Endpoints=tcp -h 127.0.0.1 -p {port}"
        ))
        .arg("--Ice.MessageSizeMax=102400");
    let server = Server::listening(&mut cmd, port, "grid_server", log)?;
    registry.wait_registered(ADAPTER_ID)?;
    Ok((server, port))
}

/// A `glacier2router` (client endpoint on a free port,
/// `Glacier2/NullPermissionsVerifier`, its other settings Ice's
/// defaults) and its proxy.
pub fn router(log: &Path) -> Result<(Server, String), DynError> {
    let port = free_port()?;
    let mut cmd = Command::new("glacier2router");
    cmd.args([
        "--Glacier2.InstanceName=Glacier2".to_string(),
        format!("--Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p {port}"),
        "--Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier".to_string(),
        "--Ice.MessageSizeMax=102400".to_string(),
    ]);
    let server = Server::listening(&mut cmd, port, "glacier2router", log)?;
    Ok((
        server,
        format!("Glacier2/router:tcp -h 127.0.0.1 -p {port}"),
    ))
}

/// A fresh directory for the run's registry database.
pub fn run_dir(logs: &Path) -> Result<PathBuf, DynError> {
    let dir = logs.join(format!("grid-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
