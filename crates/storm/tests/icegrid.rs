//! floe-storm inside an IceGrid application: the descriptor
//! `deploy/icegrid.xml`, deployed on a real `icegridnode` with
//! `icegridadmin`, has the node start the `floe-storm` binary; Ice's own
//! `icestormadmin` reaches its topic manager through the registry
//! (`FloeStorm/TopicManager@FloeStorm.TopicManager`), `icegridadmin server
//! stop` stops it at once (`Ice::Process::shutdown`), and its topics
//! survive a restart by the node.

use std::process::Command;
use std::time::{Duration, Instant};

use floe_testkit::icegrid::IceGridNode;
use floe_testkit::interop_disabled;

fn icestormadmin(grid: &IceGridNode, commands: &str) -> String {
    let out = Command::new("icestormadmin")
        .arg(format!("--Ice.Default.Locator={}", grid.locator()))
        .arg("--IceStormAdmin.TopicManager.Default=FloeStorm/TopicManager@FloeStorm.TopicManager")
        .args(["-e", commands])
        .output()
        .expect("icestormadmin runs");
    assert!(
        out.status.success(),
        "icestormadmin -e {commands}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn floe_storm_runs_in_an_icegrid_application() {
    if interop_disabled("floe-storm in IceGrid") {
        return;
    }
    let grid = IceGridNode::start();
    let data = tempfile::tempdir().expect("temp dir");
    // The node runs its servers as `nobody` when it runs as root.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
    }
    let descriptor = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/icegrid.xml");
    grid.admin(&format!(
        "application add \"{}\" floe_storm=\"{}\" data_dir=\"{}\"",
        descriptor.display(),
        env!("CARGO_BIN_EXE_floe-storm"),
        data.path().display()
    ));
    grid.admin("server start FloeStorm");
    let adapters = grid.adapters();
    assert!(adapters.contains("FloeStorm.TopicManager"), "{adapters:?}");
    assert!(adapters.contains("FloeStorm.Publish"), "{adapters:?}");

    icestormadmin(&grid, "create news; create sport");
    let topics = icestormadmin(&grid, "topics");
    assert!(
        topics.contains("news") && topics.contains("sport"),
        "{topics}"
    );

    let t = Instant::now();
    grid.admin("server stop FloeStorm");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "stop took {:?}",
        t.elapsed()
    );
    assert!(grid.admin("server state FloeStorm").starts_with("inactive"));

    grid.admin("server start FloeStorm");
    let topics = icestormadmin(&grid, "topics");
    assert!(
        topics.contains("news") && topics.contains("sport"),
        "after restart: {topics}"
    );
    grid.admin("server stop FloeStorm");
}
