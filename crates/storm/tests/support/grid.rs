//! Replicated brokers deployed by a real IceGrid: an `icegridnode` with a
//! collocated registry on 127.0.0.1 ([`Grid`], started by floe-testkit's
//! `IceGridNode`), and three replicas of
//! floe-storm (`deploy/icegrid-replicated.xml`) or of IceStorm 3.7.8
//! (IceBox servers as Ice's `IceStorm-HA` template deploys them, with
//! manual activation) in replica groups ([`GridApp`]). Replicas are started
//! with `icegridadmin server start` and killed with `SIGKILL` (their pid
//! from `icegridadmin server pid`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use floe_testkit::icegrid::IceGridNode;

use super::icestorm_ha::Replicated;

/// An `icegridnode` with its registry (floe-testkit's `IceGridNode`) and a
/// data directory its servers (run as `nobody` when the node runs as root)
/// can write.
pub struct Grid {
    node: IceGridNode,
    pub dir: tempfile::TempDir,
}

impl Grid {
    /// Starts it and waits until the node answers.
    pub fn start() -> Grid {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            for p in [dir.path(), &dir.path().join("data")] {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
            }
        }
        Grid {
            node: IceGridNode::start(),
            dir,
        }
    }

    /// The registry's locator.
    pub fn locator(&self) -> String {
        self.node.locator()
    }

    /// `icegridadmin -e command`: its stdout, or its stderr.
    pub fn try_admin(&self, command: &str) -> Result<String, String> {
        let out = self.node.admin_command(command).output().unwrap();
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// `icegridadmin -e command`; panics if it fails.
    pub fn admin(&self, command: &str) -> String {
        self.node.admin(command)
    }

    /// `icestormadmin` with the grid's locator and `tm` as its topic
    /// manager: exit status, stdout and stderr.
    pub fn icestormadmin(&self, tm: &str, commands: &str) -> (bool, String, String) {
        let out = Command::new("icestormadmin")
            .arg(format!("--Ice.Default.Locator={}", self.locator()))
            .arg(format!("--IceStormAdmin.TopicManager.Default={tm}"))
            .args(["-e", commands])
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Which broker an application deploys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broker {
    /// `deploy/icegrid-replicated.xml`, instance `FloeStorm`.
    Floe,
    /// Replicated IceStorm 3.7.8 in IceBox, instance `IceStorm`.
    IceStorm,
}

/// Three replicas of a broker deployed on a [`Grid`].
pub struct GridApp<'g> {
    pub grid: &'g Grid,
    pub broker: Broker,
    running: [bool; 3],
}

impl<'g> GridApp<'g> {
    /// Deploys the application (no replica started).
    pub fn deploy(grid: &'g Grid, broker: Broker) -> GridApp<'g> {
        match broker {
            Broker::Floe => {
                let descriptor =
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/icegrid-replicated.xml");
                grid.admin(&format!(
                    "application add \"{}\" floe_storm=\"{}\" data_dir=\"{}\" activation=manual",
                    descriptor.display(),
                    super::floe_storm_binary().display(),
                    grid.dir.path().join("data").display()
                ));
            }
            Broker::IceStorm => {
                let file = grid.dir.path().join("icestorm-ha.xml");
                std::fs::write(&file, icestorm_descriptor()).unwrap();
                grid.admin(&format!("application add \"{}\"", file.display()));
            }
        }
        GridApp {
            grid,
            broker,
            running: [false; 3],
        }
    }

    /// The instance name (and server id prefix).
    pub fn instance(&self) -> &'static str {
        match self.broker {
            Broker::Floe => "FloeStorm",
            Broker::IceStorm => "IceStorm",
        }
    }

    /// Replica `id`'s server id.
    pub fn server(&self, id: usize) -> String {
        format!("{}{id}", self.instance())
    }

    /// Replica `id`'s process id.
    pub fn pid(&self, id: usize) -> u32 {
        self.grid
            .admin(&format!("server pid {}", self.server(id)))
            .trim()
            .parse()
            .unwrap()
    }

    /// Sends `signal` (`STOP`, `CONT`) to replica `id`.
    pub fn signal(&self, id: usize, signal: &str) {
        let ok = Command::new("kill")
            .args([format!("-{signal}"), self.pid(id).to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{signal} replica {id}");
    }
}

impl Replicated for GridApp<'_> {
    fn name(&self) -> &'static str {
        match self.broker {
            Broker::Floe => "floe-storm under IceGrid",
            Broker::IceStorm => "IceStorm 3.7.8 under IceGrid",
        }
    }

    fn size(&self) -> usize {
        3
    }

    fn tm_proxy(&self) -> String {
        format!("{}/TopicManager", self.instance())
    }

    fn node_proxy_of(&self, id: usize) -> String {
        format!("{0}/node{id}@{0}{id}.Node", self.instance())
    }

    fn locator(&self) -> Option<String> {
        Some(self.grid.locator())
    }

    fn publish_adapters(&self) -> Vec<String> {
        (1..=3)
            .map(|id| format!("{}{id}.Publish", self.instance()))
            .collect()
    }

    fn running(&self, id: usize) -> bool {
        self.running[id - 1]
    }

    fn kill(&mut self, id: usize) {
        let pid = self.pid(id);
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self
            .grid
            .admin(&format!("server state {}", self.server(id)))
            .starts_with("inactive")
        {
            assert!(Instant::now() < deadline, "replica {id} still active");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.running[id - 1] = false;
    }

    fn start(&mut self, id: usize) {
        self.grid
            .admin(&format!("server start {}", self.server(id)));
        self.running[id - 1] = true;
    }
}

impl Drop for GridApp<'_> {
    fn drop(&mut self) {
        for id in 1..=3 {
            if self.running[id - 1] {
                if let Ok(pid) = self
                    .grid
                    .try_admin(&format!("server pid {}", self.server(id)))
                {
                    let pid = pid.trim().to_string();
                    let _ = Command::new("kill").args(["-CONT", &pid]).status();
                    let _ = Command::new("kill").args(["-9", &pid]).status();
                }
            }
        }
    }
}

/// Three IceStorm replicas in IceBox servers, named and wired as Ice's
/// `IceStorm-HA` template does (service `IceStorm<id>`, adapters
/// `IceStorm<id>.TopicManager/.Publish/.Node`, replica groups), with manual
/// activation (the template's on-demand activation would bring a killed
/// replica back as soon as a client resolves it) and IceStorm's election
/// timers at 2 s (10 s by default).
fn icestorm_descriptor() -> String {
    let mut servers = String::new();
    for i in 1..=3 {
        servers.push_str(&format!(
            r#"
      <icebox id="IceStorm{i}" exe="icebox" activation="manual">
        <service name="IceStorm{i}" entry="IceStormService,37:createIceStorm">
          <adapter name="${{service}}.TopicManager" id="IceStorm{i}.TopicManager"
                   endpoints="tcp -h 127.0.0.1" replica-group="IceStorm.TopicManager"/>
          <adapter name="${{service}}.Publish" id="IceStorm{i}.Publish"
                   endpoints="tcp -h 127.0.0.1" replica-group="IceStorm.Publish"/>
          <adapter name="${{service}}.Node" id="IceStorm{i}.Node" endpoints="tcp -h 127.0.0.1"/>
          <properties>
            <property name="${{service}}.LMDB.Path" value="${{service.data}}"/>
            <property name="${{service}}.LMDB.MapSize" value="16"/>
            <property name="${{service}}.InstanceName" value="IceStorm"/>
            <property name="${{service}}.NodeId" value="{i}"/>
            <property name="${{service}}.Election.ElectionTimeout" value="2"/>
            <property name="${{service}}.Election.MasterTimeout" value="2"/>
            <property name="${{service}}.Election.ResponseTimeout" value="2"/>
          </properties>
        </service>
      </icebox>"#
        ));
    }
    format!(
        r#"<icegrid>
  <application name="IceStormHA">
    <replica-group id="IceStorm.TopicManager">
      <load-balancing type="random" n-replicas="0"/>
      <object identity="IceStorm/TopicManager" type="::IceStorm::TopicManager"/>
    </replica-group>
    <replica-group id="IceStorm.Publish">
      <load-balancing type="random" n-replicas="0"/>
    </replica-group>
    <node name="node1">{servers}
    </node>
  </application>
</icegrid>
"#
    )
}
