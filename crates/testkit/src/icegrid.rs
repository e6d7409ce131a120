//! [`IceGridNode`]: a real `icegridnode` with a collocated registry on
//! 127.0.0.1, for the IceGrid tests of floe and floe-storm.

use std::collections::BTreeSet;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use crate::peer::{Peer, READY_TIMEOUT};
use crate::ports::free_port;

/// An `icegridnode` (node `node1`) with a collocated registry
/// (`IceGrid.Registry.DynamicRegistration=1`, any admin user and password)
/// in a temporary directory, on 127.0.0.1; stopped on drop.
pub struct IceGridNode {
    /// The node's process.
    pub node: Peer,
    /// The registry's client port (its `IceGrid/Locator`).
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl IceGridNode {
    /// Starts it and waits until the node answers.
    pub fn start() -> IceGridNode {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let d = dir.path();
        for sub in ["registry", "node"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let config = format!(
            "IceGrid.InstanceName=IceGrid\n\
             IceGrid.Registry.Client.Endpoints=tcp -h 127.0.0.1 -p {port}\n\
             IceGrid.Registry.Server.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.Internal.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.LMDB.Path={}\n\
             IceGrid.Registry.DynamicRegistration=1\n\
             IceGrid.Registry.AdminPermissionsVerifier=IceGrid/NullPermissionsVerifier\n\
             IceGrid.Node.CollocateRegistry=1\n\
             IceGrid.Node.Name=node1\n\
             IceGrid.Node.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Node.Data={}\n\
             Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p {port}\n",
            d.join("registry").display(),
            d.join("node").display(),
        );
        let cfg = d.join("grid.cfg");
        std::fs::write(&cfg, config).expect("write config");
        let mut cmd = Command::new("icegridnode");
        cmd.arg(format!("--Ice.Config={}", cfg.display()));
        let node = Peer::spawn("icegridnode", cmd);
        let reg = IceGridNode {
            node,
            port,
            _dir: dir,
        };
        // The node prints its ready line only at exit when its stdout is a
        // pipe: wait until it answers `node ping` through the registry.
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let up = reg
                .admin_command("node ping node1")
                .output()
                .is_ok_and(|o| o.status.success());
            if up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "icegridnode not up; output:\n{}",
                reg.node.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
        reg
    }

    /// `IceGrid/Locator:tcp -h 127.0.0.1 -p <port>`.
    pub fn locator(&self) -> String {
        format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// `icegridadmin -e command`, to run.
    pub fn admin_command(&self, command: &str) -> Command {
        let mut cmd = Command::new("icegridadmin");
        cmd.arg(format!("--Ice.Default.Locator={}", self.locator()))
            .args(["-u", "test", "-p", "test", "-e", command]);
        cmd
    }

    /// Runs `icegridadmin -e command`; its stdout. Panics if it fails.
    pub fn admin(&self, command: &str) -> String {
        let out = self
            .admin_command(command)
            .output()
            .expect("icegridadmin runs");
        assert!(
            out.status.success(),
            "icegridadmin -e {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `icegridadmin adapter list`.
    pub fn adapters(&self) -> BTreeSet<String> {
        self.admin("adapter list")
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }
}
