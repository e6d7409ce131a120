//! A Slice program split across files (`slice/multi/Service.ice` includes
//! `Types.ice`, reopens its modules, derives from its class and exception,
//! and uses its types), compiled by `floe_idl::Builder` into one Rust file
//! per Slice file held together by the module file: generated proxies and
//! dispatchers talk over loopback, and a Python Ice client that loads the
//! same Slice files calls the floe server.
#![cfg(not(floe_no_ice_slice))]

use std::path::Path;
use std::process::Command;

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;
use floe_codegen_tests::multi_gen::demo;

mod python;

struct Service;

impl demo::Service for Service {
    async fn points(&self, n: i32, _: &Current) -> Result<Vec<demo::Point>, DispatchError> {
        Ok((0..n).map(|i| demo::Point { x: i, y: -i }).collect())
    }

    async fn make_shape(
        &self,
        circle: bool,
        _: &Current,
    ) -> Result<Option<ClassRef<demo::Shape>>, DispatchError> {
        let name = "s".to_owned();
        Ok(Some(if circle {
            ClassRef::new(demo::Circle {
                base: demo::Shape { name },
                r: 2.5,
                center: demo::Point { x: 1, y: 2 },
            })
            .upcast()
        } else {
            ClassRef::new(demo::Shape { name })
        }))
    }

    async fn check(
        &self,
        s: Option<ClassRef<demo::Shape>>,
        _: &Current,
    ) -> Result<(), DispatchError> {
        match s {
            Some(s) if !s.read().name.is_empty() => Ok(()),
            _ => Err(demo::BadShape {
                base: demo::DemoError {
                    reason: "unnamed".into(),
                },
                code: 3,
            }
            .into()),
        }
    }

    async fn label(
        &self,
        t: demo::inner::Tag,
        c: demo::Color,
        _: &Current,
    ) -> Result<demo::inner::Labeled, DispatchError> {
        Ok(demo::inner::Labeled {
            tag: t,
            p: demo::Point { x: c as i32, y: 0 },
            id: Identity::new("n", "c"),
        })
    }
}

async fn server() -> (Communicator, u16) {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("M", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("service"),
            demo::ServiceDispatcher::new(Service),
        )
        .unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port;
    (communicator, port)
}

#[tokio::test]
async fn types_from_both_files_cross_the_wire() {
    let (server, port) = server().await;
    let client = Communicator::new();
    let service = demo::ServicePrx::unchecked_cast(
        client
            .string_to_proxy(&format!("service:tcp -h 127.0.0.1 -p {port}"))
            .unwrap(),
    );
    calls(&service).await;
    // The same calls in encoding 1.0 (classes after the data, no optionals).
    calls(&service.ice_encoding_version(floe::wire::ENCODING_1_0)).await;
    client.destroy().await;
    server.destroy().await;
}

async fn calls(service: &demo::ServicePrx) {
    assert_eq!(
        service.points(2).await.unwrap(),
        [demo::Point { x: 0, y: 0 }, demo::Point { x: 1, y: -1 }]
    );
    // A class of Service.ice, received as the base from Types.ice, decodes
    // as itself: the set's registry knows both files' classes.
    let shape = service.make_shape(true).await.unwrap().unwrap();
    assert_eq!(shape.ice_id(), "::Demo::Circle");
    let circle = shape.downcast::<demo::Circle>().unwrap();
    assert_eq!(circle.read().center, demo::Point { x: 1, y: 2 });
    let plain = service.make_shape(false).await.unwrap().unwrap();
    assert_eq!(plain.ice_id(), "::Demo::Shape");
    // An exception of Service.ice derived from one of Types.ice.
    let named = ClassRef::new(demo::Shape { name: "n".into() });
    service.check(&Some(named)).await.unwrap();
    let ex = service.check(&None).await.unwrap_err();
    let bad = ex.user_exception::<demo::BadShape>().expect("a BadShape");
    assert_eq!((bad.base.reason.as_str(), bad.code), ("unnamed", 3));
    let l = service
        .label(&demo::inner::Tag { t: "x".into() }, demo::Color::Green)
        .await
        .unwrap();
    assert_eq!(l.tag.t, "x");
    assert_eq!(l.p.x, 1);
    assert_eq!(l.id, Identity::new("n", "c"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_client_of_the_same_files_calls_the_floe_server() {
    if !python::python_available() {
        return;
    }
    let python = python::PYTHON;
    let (server, port) = server().await;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = r#"
import sys, Ice
Ice.loadSlice("--all -I/usr/share/ice/slice -I" + sys.argv[1] + " " + sys.argv[1] + "/Service.ice")
import Demo
with Ice.initialize([]) as c:
  base = Demo.ServicePrx.uncheckedCast(c.stringToProxy("service:tcp -h 127.0.0.1 -p " + sys.argv[2]))
  for s in (base, base.ice_encodingVersion(Ice.Encoding_1_0)):
      assert [(p.x, p.y) for p in s.points(2)] == [(0, 0), (1, -1)]
      shape = s.makeShape(True)
      assert isinstance(shape, Demo.Circle) and shape.center == Demo.Point(1, 2), shape
      s.check(Demo.Shape("n"))
      try:
          s.check(Demo.Circle("", 1.0, Demo.Point(0, 0)))
          raise AssertionError("no exception")
      except Demo.BadShape as e:
          assert (e.reason, e.code) == ("unnamed", 3), e
      l = s.label(Demo.Inner.Tag("x"), Demo.Color.Green)
      assert l.tag.t == "x" and l.p.x == 1 and l.id == Ice.Identity("n", "c"), l
print("ok")
"#;
    let multi = dir.join("slice/multi");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .args(["-c", script])
            .arg(&multi)
            .arg(port.to_string())
            .output()
            .expect("run python3")
    })
    .await
    .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    server.destroy().await;
}
