//! A Rust-first interface exported to `.ice`, compiled with the real
//! `slice2py`, and called by a real Python Ice 3.7 client
//! (tests/py/greet_client.py) against a floe server built from the trait.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use floe::codegen::{Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;

#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "PyGreet")]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, floe::Enum)]
#[floe(module = "PyGreet")]
pub enum Color {
    Red,
    Green = 10,
    Blue = 20,
}

#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "PyGreet")]
pub struct Oops {
    pub reason: String,
}

#[floe::interface(module = "PyGreet")]
pub trait Greeter {
    #[floe(idempotent)]
    async fn greet(
        &self,
        name: String,
        #[floe(tag = 1)] times: Option<i32>,
    ) -> Result<String, Oops>;
    async fn sum(&self, points: Vec<Point>) -> i32;
    #[floe(tag = 2)]
    async fn maybe(&self, give: bool) -> Option<String>;
    async fn bytes_len(&self, data: Bytes) -> i32;
    async fn color(&self, c: Color) -> Color;
    async fn nothing(&self);
}

/// Thrown where `Oops` is declared; Python catches it as either.
#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "PyGreet")]
pub struct Worse {
    #[floe(base)]
    pub base: Oops,
    pub code: i32,
}

/// Classes with a base, exported for slice2py.
#[derive(Clone, Debug, Default, PartialEq, floe::Class)]
#[floe(module = "PyGreet")]
pub struct Shape {
    pub name: String,
}

#[derive(Clone, Debug, Default, floe::Class)]
#[floe(module = "PyGreet", compact_id = 3)]
pub struct Circle {
    #[floe(base)]
    pub base: Shape,
    pub radius: f64,
    #[floe(tag = 1)]
    pub center: Option<Point>,
    pub next: Option<floe::codegen::ClassRef<Shape>>,
}

/// Inherits `Greeter`'s operations; tuple results are out-parameters.
#[floe::interface(module = "PyGreet")]
pub trait Fancy: Greeter {
    async fn split(&self, s: String) -> Result<(i32, String), Oops>;
    async fn pair(&self, a: i32) -> ((), i32, String);
}

type Reply<T> = Result<T, DispatchError>;

struct Server;

impl Greeter for Server {
    async fn greet(&self, name: String, times: Option<i32>, _: &Current) -> Reply<String> {
        if name.is_empty() {
            return Err(Oops {
                reason: "no name".into(),
            }
            .into());
        }
        Ok(format!("hello {name} x{}", times.unwrap_or(1)))
    }
    async fn sum(&self, points: Vec<Point>, _: &Current) -> Reply<i32> {
        Ok(points.iter().map(|p| p.x + p.y).sum())
    }
    async fn maybe(&self, give: bool, _: &Current) -> Reply<Option<String>> {
        Ok(give.then(|| "here".to_owned()))
    }
    async fn bytes_len(&self, data: Bytes, _: &Current) -> Reply<i32> {
        Ok(data.len() as i32)
    }
    async fn color(&self, c: Color, _: &Current) -> Reply<Color> {
        Ok(if c == Color::Blue {
            Color::Green
        } else {
            Color::Red
        })
    }
    async fn nothing(&self, _: &Current) -> Reply<()> {
        Ok(())
    }
}

impl Fancy for Server {
    async fn split(&self, s: String, _: &Current) -> Reply<(i32, String)> {
        if s.is_empty() {
            return Err(Worse {
                base: Oops {
                    reason: "empty".into(),
                },
                code: 7,
            }
            .into());
        }
        Ok((s.len() as i32, s.to_uppercase()))
    }
    async fn pair(&self, a: i32, _: &Current) -> Reply<(i32, String)> {
        Ok((a * 2, a.to_string()))
    }
}

/// The exported Slice: every interface and exception the client uses.
fn exported() -> String {
    let mut parts = floe::SliceParts::default();
    <FancySlice as floe::SliceType>::slice_parts(&mut parts);
    <Worse as floe::SliceType>::slice_parts(&mut parts);
    <Circle as floe::SliceType>::slice_parts(&mut parts);
    parts.render()
}

/// Kills and reaps a child process however the test ends.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn have(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_calls_rust_first_server_through_exported_slice() {
    let python = "/usr/bin/python3";
    if !have(python, &["-c", "import Ice"]) || !have("slice2py", &["--version"]) {
        if std::env::var_os("FLOE_NO_INTEROP").is_some() {
            println!("FLOE_NO_INTEROP set: Python Ice or slice2py missing, test skipped");
            return;
        }
        panic!("{python} with the Ice module and slice2py are needed: install python3-zeroc-ice and zeroc-ice-compilers (cargo xtask test does)");
    }

    // Export the Rust trait as Slice and compile it with the real slice2py.
    let dir = Scratch(std::env::temp_dir().join(format!("floe-derive-py-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let ice = dir.0.join("PyGreet.ice");
    std::fs::write(&ice, exported()).unwrap();
    let out = Command::new("slice2py")
        .arg("--output-dir")
        .arg(&dir.0)
        .arg(&ice)
        .output()
        .expect("run slice2py");
    assert!(
        out.status.success(),
        "slice2py rejected the exported Slice:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        exported()
    );

    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Greet", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("greeter"),
            GreeterDispatcher::new(Server),
        )
        .unwrap();
    adapter
        .add(Identity::from_name("fancy"), FancyDispatcher::new(Server))
        .unwrap();
    adapter.activate();
    let endpoint = adapter.endpoints()[0].to_string();
    let port = endpoint
        .split_whitespace()
        .skip_while(|w| *w != "-p")
        .nth(1)
        .expect("a port in the endpoint")
        .to_owned();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/greet_client.py");
    let child = Command::new(python)
        .arg(script)
        .arg(&dir.0)
        .arg(&port)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut peer = Peer(child);
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Some(status) = peer.0.try_wait().expect("wait python3") {
            break status;
        }
        assert!(
            waited < Duration::from_secs(60),
            "greet_client.py did not finish in 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    };
    let mut out = String::new();
    let mut err = String::new();
    std::io::Read::read_to_string(peer.0.stdout.as_mut().expect("piped"), &mut out).unwrap();
    std::io::Read::read_to_string(peer.0.stderr.as_mut().expect("piped"), &mut err).unwrap();
    assert!(
        status.success() && out.trim() == "ok",
        "greet_client.py: {status}\n{out}\n{err}\n--- exported Slice:\n{}",
        exported()
    );
    communicator.destroy().await;
}
