//! Generated proxies against a real Ice server: a Python Ice 3.7 servant
//! for `Rich::SubEcho` (tests/py/server.py) checks the values it receives,
//! answers with out-parameters and optionals, and throws user exceptions
//! (declared, derived, undeclared) that the generated code must decode.
#![cfg(not(floe_no_ice_slice))]

mod python;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use bytes::Bytes;
use floe::codegen::{ClassRef, Error};
use floe::runtime::Communicator;
use floe_codegen_tests::rich;
use python::Peer;

fn start_server() -> Option<(Peer, u16)> {
    let python = python::PYTHON;
    let has_ice = Command::new(python)
        .args(["-c", "import Ice"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_ice {
        if std::env::var_os("FLOE_NO_INTEROP").is_some() {
            println!("FLOE_NO_INTEROP set: Python Ice peer missing, test skipped");
            return None;
        }
        panic!("{python} with the Ice module is missing: install python3-zeroc-ice (cargo xtask test does)");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let child = Command::new(python)
        .arg(dir.join("tests/py/server.py"))
        .arg(dir.join("../idl/tests/codegen/Rich.ice"))
        .arg("/usr/share/ice/slice")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut peer = Peer(child);
    let mut line = String::new();
    BufReader::new(peer.0.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("read port");
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("server.py printed {line:?} instead of a port"));
    Some((peer, port))
}

fn mixed() -> rich::Mixed {
    rich::Mixed {
        r#type: "t".into(),
        counts: [("a".to_owned(), 1), ("b".to_owned(), 2)].into(),
        id: floe::Identity::new("n", "c"),
        bytes: Bytes::from_static(b"xyz"),
        ..Default::default()
    }
}

#[tokio::test]
async fn generated_proxy_calls_python_ice_server() {
    let Some((_peer, port)) = start_server() else {
        return;
    };
    let communicator = Communicator::new();
    let proxy = communicator
        .string_to_proxy(&format!("echo:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    let sub = rich::SubEchoPrx::checked_cast(proxy)
        .await
        .unwrap()
        .expect("the Python servant implements ::Rich::SubEcho");
    let echo: rich::EchoPrx = sub.clone().into();

    echo.put_prims(&rich::Prims::default()).await.unwrap();
    echo.put_mixed(&mixed()).await.unwrap();
    let w = rich::inner::Wrapper {
        p: rich::Point { x: -1, y: 9 },
        c: rich::Color::Blue,
        m: mixed(),
    };
    echo.put_wrappers(&[w.clone(), w]).await.unwrap();
    let circle = ClassRef::new(rich::Circle {
        radius: 2.0,
        inner: Some(ClassRef::new(rich::Shape {
            name: "in".into(),
            sides: Some(3),
            label: None,
            ice_sliced_data: None,
        })),
        ..Default::default()
    });
    echo.put_shape(&Some(circle.clone().upcast()))
        .await
        .unwrap();
    echo.put_opts(
        1,
        Some(3),
        Some("x"),
        Some(&rich::Point { x: 1, y: 2 }),
        Some(&[1, 2]),
        None,
    )
    .await
    .unwrap();
    // A wrong value makes the Python servant raise: status 7.
    assert!(matches!(
        echo.put_opts(2, None, None, None, None, None).await,
        Err(Error::UnknownException(_))
    ));

    // Out-parameters and an optional out-parameter (mode 1, checked by the servant).
    assert_eq!(
        echo.describe(0).await.unwrap(),
        rich::EchoDescribeResult {
            return_value: "zero".to_owned(),
            code: 10,
            extra: None
        }
    );
    assert_eq!(
        echo.describe(1).await.unwrap(),
        rich::EchoDescribeResult {
            return_value: "one".to_owned(),
            code: 11,
            extra: Some("extra".to_owned())
        }
    );
    // A declared exception's subclass, decoded from Python's bytes.
    let ex = echo.describe(2).await.unwrap_err();
    let derived = ex
        .user_exception::<rich::DerivedError>()
        .expect("DerivedError");
    assert_eq!(derived.code, 2);
    assert_eq!(derived.detail.as_deref(), Some("d"));
    assert_eq!(derived.base.reason, "derived");
    // Undeclared: the Python server itself reports UnknownUserException.
    assert!(matches!(
        echo.describe(3).await,
        Err(Error::UnknownUserException(_))
    ));

    assert_eq!(
        sub.find("here").await.unwrap(),
        Some(rich::Point { x: 5, y: 6 })
    );
    assert_eq!(sub.find("nowhere").await.unwrap(), None);
    // A proxy result is a live typed proxy of this communicator.
    let me = echo.self_().await.unwrap().expect("a proxy");
    assert_eq!(me.identity(), &floe::Identity::from_name("echo"));
    assert_eq!(me.describe(0).await.unwrap().code, 10);
    let other = communicator
        .string_to_proxy("other:tcp -h 127.0.0.1 -p 1")
        .unwrap();
    let (r, back) = echo
        .relay(&Some(me.clone()), &Some(other.clone()))
        .await
        .unwrap()
        .into();
    assert_eq!(r.as_ref(), Some(&me));
    assert_eq!(back.as_ref(), Some(&other));
    let nothing = echo.relay(&None, &None).await.unwrap();
    assert_eq!((nothing.return_value, nothing.back), (None, None));

    // Byte sequences: small (copied into the frame) and large (sent beside
    // it, shared).
    for n in [3usize, 200_000] {
        let data = bytes::Bytes::from((0..n).map(|i| i as u8).collect::<Vec<u8>>());
        assert_eq!(echo.echo_bytes(n as i32, data.clone()).await.unwrap(), data);
    }
    // Number sequences: small (copied into the frame) and large (written
    // from the caller's slice), as the Python peer decodes them.
    for n in [3usize, 250_000] {
        let data: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(-7919)).collect();
        assert_eq!(echo.echo_ints(n as i32, &data).await.unwrap(), data);
    }
    // Per-call and per-proxy request contexts.
    let ctx = floe::codegen::Context::from([("k".to_owned(), "v".to_owned())]);
    assert_eq!(
        echo.context_value_with_context("k", &ctx).await.unwrap(),
        "v"
    );
    assert_eq!(echo.context_value("k").await.unwrap(), "");
    let with_ctx = echo.ice_context(ctx.clone());
    assert_eq!(with_ctx.context_value("k").await.unwrap(), "v");
    communicator.destroy().await;
}
